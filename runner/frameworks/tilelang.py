"""TileLang: lowered to CUDA source by its adapter (nvcc builds the cubin), run on a CUDA device.
It has no CPU interpreter."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kregress.frameworks.base import PTXAS_FIGURES, Companion, Framework, Starter


@dataclass(frozen=True)
class TileLangKernel:
    """A function building a TileLang prim_func; compiled to CUDA source and a cubin by nvcc."""

    build: Callable[[], Any]
    pass_configs: Mapping[str, Any] = field(default_factory=dict)
    # a reporter's code compiling more than one kernel before it uses any ("this one compiles, this
    # one raises"): the later ones, each compiled as a config of its own
    later: tuple[TileLangKernel, ...] = ()


EXPECT = """\
[[expect]]
name = "vector-copies"
kind = "ir"
kernel = "scaled_copy"
stage = "cuda_source"
pattern = 'float4'
min_count = 1
"""

REPRO = '''\
"""$name: $title ($issue).

Replace the kernel below with the smallest one that shows the bug, written for this case. TileLang
builds CUDA source here (nvcc makes the cubin); its numerics need a device target.
"""

from __future__ import annotations

import tilelang.language as T

from kregress.case import TileLangKernel

ROWS, COLS, BLOCK = 128, 128, 64


def build():
    @T.prim_func
    def scaled_copy(
        A: T.Tensor((ROWS, COLS), "float32"),  # type: ignore[valid-type]
        B: T.Tensor((ROWS, COLS), "float32"),  # type: ignore[valid-type]
    ):
        with T.Kernel(ROWS // BLOCK, threads=128) as bx:
            tile = T.alloc_fragment((BLOCK, COLS), "float32")
            T.copy(A[bx * BLOCK : (bx + 1) * BLOCK, :], tile)
            for i, j in T.Parallel(BLOCK, COLS):
                tile[i, j] = tile[i, j] * 2.0
            T.copy(tile, B[bx * BLOCK : (bx + 1) * BLOCK, :])

    return scaled_copy


scaled_copy = TileLangKernel(build)
'''

FRAMEWORK = Framework(
    "tilelang",
    "TileLang",
    modules=("tilelang", "tvm"),
    imports=("tilelang",),
    target_kinds=frozenset({"compile", "device"}),
    unsupported_kinds="TileLang has no CPU interpreter",
    compile_backends=frozenset({"cuda"}),
    adapter="kregress.adapters.tilelang_aot",
    figures={"cuda": PTXAS_FIGURES},
    ir_stages=("cuda_source", "ptx"),
    traced_stages=("cuda_source",),  # the TIR after each TVM pass, counted as the source it becomes
    wrappers=(TileLangKernel,),
    preload=("torch",),  # tilelang imports it; tilelang itself is imported in each child
    companions=(
        Companion("tilelang", ">=0.1.7.post1,<0.1.10", ("apache-tvm-ffi==0.1.6",),
                  why="tilelang 0.1.7.post1 to 0.1.9 load only with apache-tvm-ffi 0.1.6"),
        Companion("tilelang", ">=0.1.10,<0.1.12", ("apache-tvm-ffi==0.1.10",),
                  why="tilelang 0.1.10 and 0.1.11 abort at import with newer apache-tvm-ffi "
                      "(`__ffi_repr__` registered twice)"),
    ),
    native_packages=("tilelang", "tvm", "tvm_ffi"),
    starter=Starter("cuda:sm_90", "scaled_copy", EXPECT, REPRO),
    oldest_release="0.1.6.post2",  # the oldest the adapter was measured to build
    repositories={"tilelang": "tile-ai/tilelang"},
)  # fmt: skip
