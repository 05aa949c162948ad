"""amd_int8_small_k_dot: an int8 dot whose K tile is not a multiple of four goes through fp32 on
AMD (triton-lang/triton#11282, reported as ROCm/triton#958).

gfx942 multiplies int8 pairs exactly with `v_dot4c_i32_i8` (four products and an int32 add per
instruction). A dot whose K tile is 1 or 2 cannot fill a group of four, and releases before 3.8.0
legalized it through fp32 (`sitofp`, an fp32 FMA, `fptosi`): exact while every partial sum stays
below 2^24, silently rounded once the loop-carried int32 accumulator passes it. Here a histogram-
like accumulation of int8 codes over a long K, two at a time, in a 32x32 tile.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

TILE, K, BK = 32, 2048, 2


@triton.jit
def int8_gram_kernel(a_ptr, b_ptr, c_ptr, K, TILE: tl.constexpr, BK: tl.constexpr):
    rows = tl.arange(0, TILE)
    depth = tl.arange(0, BK)
    acc = tl.zeros([TILE, TILE], dtype=tl.int32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * K + (k + depth)[None, :])
        b = tl.load(b_ptr + (k + depth)[:, None] * TILE + rows[None, :])
        acc += tl.dot(a, b, out_dtype=tl.int32)
    tl.store(c_ptr + rows[:, None] * TILE + rows[None, :], acc)


def operands(device: str = "cpu") -> dict:
    """Codes near the int8 limits: 2048 products of about 127 x 127 reach 3.3e7, past 2^24."""
    gen = torch.Generator().manual_seed(0)
    a = torch.randint(120, 128, (TILE, K), generator=gen, dtype=torch.int8)
    b = torch.randint(120, 128, (K, TILE), generator=gen, dtype=torch.int8)
    tensors = {"a_ptr": a, "b_ptr": b, "c_ptr": torch.zeros(TILE, TILE, dtype=torch.int32)}
    return {k: v.to(device) for k, v in tensors.items()}


gram = TritonKernel(int8_gram_kernel, args=lambda: {**operands(), "K": K, "TILE": TILE, "BK": BK},
                    configs=[{"num_warps": 4}])  # fmt: skip


def check_gram(device: str):
    args = operands(device)
    int8_gram_kernel[(1,)](**args, K=K, TILE=TILE, BK=BK)
    a, b = (args[k].cpu().numpy().astype(np.int64) for k in ("a_ptr", "b_ptr"))
    return args["c_ptr"].cpu().double().numpy(), (a @ b).astype(np.float64)
