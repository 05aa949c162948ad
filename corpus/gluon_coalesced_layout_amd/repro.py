"""gluon_coalesced_layout_amd: a Gluon `CoalescedLayout` left unresolved on AMD (triton-lang/triton#11599).

A copy kernel whose offsets start in `gl.AutoLayout()` and whose pointers are pinned to
`gl.CoalescedLayout()`, asking the compiler to pick the coalesced blocked layout for the access.
That choice is made by the `gluon-infer-coalesced-encodings` pass, which from 3.6.0 (when
`CoalescedLayout` appeared) to 3.8.0 only the NVIDIA backend's Gluon pipeline ran. On HIP the
`#gluon.coalesced_encoding` attribute reached the TritonGPU lowering unresolved, and converting it
to a linear layout aborted the compiler ("unknown layout"). 3.9.0 runs the pass for AMD too.
`blocked_copy` is the same copy with the blocked layout written out (64 lanes a warp): it compiles
in every release, so a FAIL of `coalesced_copy` is the unresolved layout, not the copy.
"""

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from kregress.case import GluonKernel

SIZE, BLOCK, WARPS = 4096, 1024, 4


@gluon.jit
def coalesced_copy_kernel(src_ptr, dst_ptr, BLOCK: gl.constexpr):
    offsets = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=gl.AutoLayout())
    src = gl.set_auto_layout(src_ptr + offsets, gl.CoalescedLayout())
    dst = gl.set_auto_layout(dst_ptr + offsets, gl.CoalescedLayout())
    gl.store(dst, gl.load(src))


@gluon.jit
def blocked_copy_kernel(src_ptr, dst_ptr, BLOCK: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([4], [64], [4], [0])
    offsets = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=layout)
    gl.store(dst_ptr + offsets, gl.load(src_ptr + offsets))


def args() -> dict:
    return {"src_ptr": torch.empty(SIZE), "dst_ptr": torch.empty(SIZE), "BLOCK": BLOCK}


coalesced_copy = GluonKernel(coalesced_copy_kernel, args=args, configs=[{"num_warps": WARPS}])
blocked_copy = GluonKernel(blocked_copy_kernel, args=args, configs=[{"num_warps": WARPS}])
