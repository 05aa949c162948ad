"""Two fp32 tiles kept live across a row and a column reduction, one warp, 128 registers: IGC
spills them to per-thread scratch. 128x128 fits the 256 KiB PTSS limit; 256x256 does not."""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel


@triton.jit
def hold_kernel(x, y, M: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, M)
    j = tl.arange(0, N)
    a = tl.load(x + i[:, None] * N + j[None, :])
    b = tl.load(x + M * N + i[:, None] * N + j[None, :])
    row = tl.sum(a * b, axis=1)
    column = tl.max(a - b, axis=0)
    tl.store(y + i[:, None] * N + j[None, :], a * row[:, None] + b * column[None, :])


def args(size: int):
    return lambda: {"x": torch.empty(2 * size * size), "y": torch.empty(size * size), "M": size, "N": size}


SMALL_GRF_ONE_WARP = [{"num_warps": 1, "grf_mode": "small"}]
spills = TritonKernel(hold_kernel, args=args(128), configs=SMALL_GRF_ONE_WARP)
overflows = TritonKernel(hold_kernel, args=args(256), configs=SMALL_GRF_ONE_WARP)
