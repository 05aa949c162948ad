"""Gluon (`triton.experimental.gluon`): Triton's lower-level language, where a kernel states its
layouts, shared-memory buffers, barriers and (on Blackwell) tensor memory itself. It ships inside
the triton wheel from 3.4.0 and compiles through Triton's own pipeline from TTGIR on, so it shares
Triton's adapter; it has no CPU interpreter (measured under 3.6.0: TRITON_INTERPRET=1 still asks
for a GPU driver, "0 active drivers"), and its layouts name the warp size, so a kernel is written
for one backend's warps (32 threads: CUDA; 64: CDNA)."""

from __future__ import annotations

from dataclasses import dataclass

from kregress.frameworks.base import PER_BLOCK, PTXAS_FIGURES, Framework, Starter
from kregress.frameworks.triton import TritonKernel


@dataclass(frozen=True)
class GluonKernel(TritonKernel):
    """A @gluon.jit kernel plus example launch arguments, compiled as a TritonKernel is (the same
    specialization a real launch gets; every config judged)."""


EXPECT = """\
[[expect]]
name = "no-layout-conversion"
kind = "ir"
kernel = "scaled_copy"
stage = "ttgir"
pattern = "ttg.convert_layout"
max_count = 0
targets = ["cuda"]
"""

REPRO = '''\
"""$name: $title ($issue).

Replace the kernel below with the smallest Gluon kernel that shows the bug, written for this case.
Its layouts name the warp size: 32 threads a warp for CUDA targets, 64 for CDNA (gfx942, gfx950).
"""

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from kregress.case import GluonKernel

SIZE, BLOCK, WARPS = 1000, 256, 4


@gluon.jit
def scaled_copy_kernel(x_ptr, out_ptr, alpha, n, BLOCK: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([2], [32], [4], [0])
    offsets = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=layout)
    mask = offsets < n
    gl.store(out_ptr + offsets, alpha * gl.load(x_ptr + offsets, mask=mask), mask=mask)


scaled_copy = GluonKernel(
    scaled_copy_kernel,
    args=lambda: {"x_ptr": torch.empty(SIZE), "out_ptr": torch.empty(SIZE), "alpha": 0.5, "n": SIZE,
                  "BLOCK": BLOCK},
    configs=[{"num_warps": WARPS}],
)
'''

FRAMEWORK = Framework(
    "gluon",
    "Gluon",
    modules=("triton",),  # `triton.experimental.gluon` is missing before 3.4.0: SKIP, not a FAIL
    imports=("triton.experimental.gluon", "triton.experimental"),
    target_kinds=frozenset({"compile", "device"}),
    unsupported_kinds="Gluon has no CPU interpreter (TRITON_INTERPRET runs triton.language kernels only)",
    compile_backends=frozenset({"cuda", "hip"}),  # triton-xpu's releases predate Gluon
    adapter="kregress.adapters.gluon_aot",
    figures={"cuda": PTXAS_FIGURES | PER_BLOCK, "hip": PTXAS_FIGURES | PER_BLOCK},
    loaded_binaries=True,
    ir_stages=("ttgir", "llir", "ptx", "amdgcn"),
    traced_stages=("ttgir", "llir"),
    wrappers=(GluonKernel,),
    preload=("triton", "triton.language", "triton.experimental.gluon"),
    starter=Starter("cuda:sm_100", "scaled_copy", EXPECT, REPRO, scope=("cuda",)),
    oldest_release="3.4.0",  # the first triton wheel with triton.experimental.gluon
    package="triton",
    repositories={"triton": "triton-lang/triton"},
)
