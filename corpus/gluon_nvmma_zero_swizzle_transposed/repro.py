"""gluon_nvmma_zero_swizzle_transposed: an unswizzled, transposed `NVMMASharedLayout` laid out as if
it were not transposed (triton-lang/triton#10453).

A [64, 64] float16 tile held row-contiguous in registers (eight neighbours of a row per thread) is
written into shared memory with `NVMMASharedLayout(swizzle_byte_width=0, transposed=True)` and read
back. Transposed means dimension 0 is the contiguous one in shared memory, so a thread's eight row
neighbours lie 64 elements apart there and cannot be moved as one 16-byte vector. Up to 3.7.1 the
conversion of an NVMMA layout to a linear layout built the plain row-major identity whenever the
swizzle width was 0 and never looked at `transposed`: the buffer was addressed as row-major, with
`st.shared.v4`/`ld.shared.v4` of whole row segments, so anything that reads the buffer as the
layout says (TMA, wgmma, tcgen05) sees the tile transposed. 3.8.0 honours the flag.
`swizzled_transposed` (128-byte swizzle, transposed) and `unswizzled_row_major` (swizzle 0, not
transposed) are the controls: the first never vectorizes along the row in any release, the second
always does, so the pattern tells one addressing from the other.
"""

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from kregress.case import GluonKernel

N, WARPS = 64, 4


@gluon.jit
def shared_round_trip_kernel(
    src_ptr, dst_ptr, N: gl.constexpr, SWIZZLE: gl.constexpr, TRANSPOSED: gl.constexpr
):
    # 32 lanes a warp: a CUDA kernel. Each thread holds 8 consecutive elements of a row.
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    rows = gl.arange(0, N, layout=gl.SliceLayout(1, blocked))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, blocked))
    offsets = rows[:, None] * N + cols[None, :]
    tile = gl.load(src_ptr + offsets)
    shared: gl.constexpr = gl.NVMMASharedLayout(
        swizzle_byte_width=SWIZZLE, element_bitwidth=16, rank=2, transposed=TRANSPOSED
    )
    smem = gl.allocate_shared_memory(gl.float16, [N, N], shared, tile)
    gl.store(dst_ptr + offsets, smem.load(blocked))


def kernel(swizzle: int, transposed: bool) -> GluonKernel:
    def args() -> dict:
        return {
            "src_ptr": torch.empty(N * N, dtype=torch.float16),
            "dst_ptr": torch.empty(N * N, dtype=torch.float16),
            "N": N,
            "SWIZZLE": swizzle,
            "TRANSPOSED": transposed,
        }

    return GluonKernel(shared_round_trip_kernel, args=args, configs=[{"num_warps": WARPS}])


unswizzled_transposed = kernel(0, True)
swizzled_transposed = kernel(128, True)
unswizzled_row_major = kernel(0, False)
