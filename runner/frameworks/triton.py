"""Triton: compiled ahead of time for CUDA, HIP and XPU targets by its adapter, and run by its CPU
interpreter or on a device. The wheels named triton and triton-xpu are both this framework."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kregress.frameworks.base import PER_BLOCK, PTXAS_FIGURES, Companion, Framework, Starter


@dataclass(frozen=True)
class TritonKernel:
    """A @triton.jit (or @triton.autotune) kernel plus example launch arguments.

    `args()` returns the arguments of a real launch (tensors may be small CPU tensors: only their
    dtype and alignment matter), so ahead-of-time compiles get the same specialization
    (divisibility by 16, constants) as the JIT would. Every config is judged: `configs` if given,
    otherwise the autotuner's, otherwise one default config. Configs may be scoped per backend,
    `{"xpu": [...], "cuda": [...]}`, when one backend's config cannot exist on another (32 warps
    of 32 threads leave a CUDA thread 64 registers); a backend without any is a SKIP.

    `cold_cache` compiles each config into an empty cache, so every tool the compiler runs (ptxas,
    ocloc) really runs and is seen, then compiles it again to report whether that was a cache hit.
    """

    fn: Any
    args: Callable[[], Mapping[str, Any]]
    configs: Sequence[Mapping[str, Any]] | Mapping[str, Sequence[Mapping[str, Any]]] | None = None
    specialize: bool = True
    cold_cache: bool = False


def postpones_annotations(repro: Path) -> bool:
    """Whether repro.py starts with `from __future__ import annotations`."""
    try:
        tree = ast.parse(repro.read_text(), str(repro))
    except (OSError, SyntaxError):
        return False  # a broken repro is reported when it runs, with its traceback
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(alias.name == "annotations" for alias in node.names)
        for node in tree.body
    )


class TritonFramework(Framework):
    def repro_problems(self, repro: Path) -> list[str]:
        if not postpones_annotations(repro):
            return []
        return [
            "repro.py: `from __future__ import annotations` turns `tl.constexpr` annotations into strings, "
            "which Triton before 3.2 does not take for constexpr (measured on 3.0.0 and 3.1.0: "
            '"arange\'s arguments must be of type tl.constexpr"), so the kernel fails there for a '
            "reason that is not the bug and a bisect across those releases is wrong; remove the import"
        ]


EXPECT = """\
[[expect]]
name = "numerics"
kind = "numerics"
check = "check_scaled_add"
rtol = 1e-6
atol = 1e-6
"""

REPRO = '''\
"""$name: $title ($issue).

Replace the kernel below with the smallest one that shows the bug, written for this case; keep a
float64 reference computed without the compiler under test.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

SIZE, BLOCK = 1000, 256


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, alpha * x + y, mask=mask)


def operands(device: str = "cpu", seed: int = 0) -> dict:
    gen = torch.Generator().manual_seed(seed)
    x, y = torch.randn(SIZE, generator=gen), torch.randn(SIZE, generator=gen)
    return {"x_ptr": x.to(device), "y_ptr": y.to(device), "out_ptr": torch.empty(SIZE, device=device)}


scaled_add = TritonKernel(
    scaled_add_kernel, args=lambda: {**operands(), "alpha": 0.5, "n": SIZE, "BLOCK": BLOCK}
)


def reference(x: torch.Tensor, y: torch.Tensor, alpha: float) -> np.ndarray:
    return alpha * x.double().numpy() + y.double().numpy()


def check_scaled_add(device: str):
    """(actual, float64 expected) on `device`: the interpreter on cpu, the GPU elsewhere."""
    args = operands(device)
    scaled_add_kernel[(triton.cdiv(SIZE, BLOCK),)](**args, alpha=0.5, n=SIZE, BLOCK=BLOCK)
    return args["out_ptr"].cpu().double().numpy(), reference(args["x_ptr"].cpu(), args["y_ptr"].cpu(), 0.5)
'''

FRAMEWORK = TritonFramework(
    "triton",
    "Triton",
    imports=("triton",),
    adapter="kregress.adapters.triton_aot",
    figures={
        "cuda": PTXAS_FIGURES | PER_BLOCK,  # ptxas -v on the PTX
        "hip": PTXAS_FIGURES | PER_BLOCK,  # the AMDGCN kernel descriptor
        "xpu": PTXAS_FIGURES - {"stack_bytes"} | PER_BLOCK,  # IGC's figures from ocloc
    },
    loaded_binaries=True,
    ir_stages=("ttir", "ttgir", "llir", "ptx", "amdgcn", "spv"),
    traced_stages=("ttir", "ttgir", "llir"),
    wrappers=(TritonKernel,),
    preload=("triton", "triton.language"),
    companions=(
        Companion("triton", "<3.2", ("numpy<2",),
                  why="the interpreters of triton 3.0 and 3.1 store nothing under numpy 2"),
        Companion("triton-xpu", "", ("intel-sycl-rt>=2025.0.0",), (("CC", "g++"),),
                  why="the XPU backend builds its helper with the SYCL headers of intel-sycl-rt; built by "
                      "gcc it fails to load (undefined std::ios_base symbol), so g++"),
    ),
    starter=Starter("cpu:interpreter", "scaled_add", EXPECT, REPRO),
    oldest_release="3.0.0",  # the adapter absorbs the compile API from 3.0.0 on
    repositories={"triton": "triton-lang/triton", "triton-xpu": "intel/intel-xpu-backend-for-triton"},
)  # fmt: skip
