"""gluon_tma_store_proxy_fence: no proxy fence between a shared-memory store and the TMA store
that reads it (triton-lang/triton#10537, a cherry-pick of #9610).

A [64, 64] float16 tile is loaded through pointers, written into an NVMMA-swizzled shared buffer
with an ordinary `smem.store` (the generic proxy) and copied out with a TMA store
(`async_copy_shared_to_global`, `async_store` from 3.9.0), which reads shared memory through the
async proxy. The PTX memory model asks for a `fence.proxy.async` between the two, else the TMA
unit may read stale bytes. Triton's fence-insertion pass adds it, but up to 3.7.0 it did not count
a TMA store among the async-proxy readers of shared memory, so the copy went out without a fence;
3.7.1 (which took #9610's change as #10537) fences it. `fenced_by_hand` is the same kernel with
an explicit `fence_async_shared()` before the copy: its fence is there in every release.
"""

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, tma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from kregress.case import GluonKernel

N, WARPS = 64, 4

if hasattr(tma, "async_store"):

    @gluon.jit
    def tma_store(desc, coord, smem):
        tma.async_store(desc, coord, smem)

else:

    @gluon.jit
    def tma_store(desc, coord, smem):
        tma.async_copy_shared_to_global(desc, coord, smem)


@gluon.jit
def stage_and_store_kernel(src_ptr, out_desc, BY_HAND: gl.constexpr):
    # 32 lanes a warp: a CUDA kernel.
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    rows = gl.arange(0, 64, layout=gl.SliceLayout(1, blocked))
    cols = gl.arange(0, 64, layout=gl.SliceLayout(0, blocked))
    tile = gl.load(src_ptr + rows[:, None] * 64 + cols[None, :])
    smem = gl.allocate_shared_memory(gl.float16, [64, 64], out_desc.layout)
    smem.store(tile)  # generic-proxy writes
    if BY_HAND:
        fence_async_shared()
    tma_store(out_desc, [0, 0], smem)  # async-proxy read of the same bytes
    tma.store_wait(0)


def kernel(by_hand: bool) -> GluonKernel:
    def args() -> dict:
        layout = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
        out = torch.empty(256, 256, dtype=torch.float16)
        return {
            "src_ptr": torch.empty(N * N, dtype=torch.float16),
            "out_desc": TensorDescriptor(out, [256, 256], [256, 1], [N, N], layout),
            "BY_HAND": by_hand,
        }

    return GluonKernel(stage_and_store_kernel, args=args, configs=[{"num_warps": WARPS}])


fenced_by_compiler = kernel(False)
fenced_by_hand = kernel(True)
