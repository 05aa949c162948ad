"""fma_dot_registers: a small fp32 dot on the FMA path takes every register and spills
(triton-lang/triton#5572).

A 16x256 by 256x16 product in exact fp32 (`input_precision="ieee"`: no tensor cores, so Triton
lowers it to FMAs). A 16x16 accumulator over 4 warps is one or two values per thread; the operand
tiles are what each thread must hold while the FMAs run. After the FMA dot operands moved to
linear layouts (Triton 3.3), each thread kept far more of them live: ptxas reports 34 registers up
to 3.2, 72 under 3.3, 255 with spills under 3.4, and under 64 again from 3.5.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

M, N, K = 16, 16, 256


@triton.jit
def projection_kernel(x_ptr, w_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    depth = tl.arange(0, K)
    x = tl.load(x_ptr + rows[:, None] * K + depth[None, :])
    w = tl.load(w_ptr + depth[:, None] * N + cols[None, :])
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], tl.dot(x, w, input_precision="ieee"))


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    tensors = {"x_ptr": torch.randn(M, K, generator=gen), "w_ptr": torch.randn(K, N, generator=gen),
               "out_ptr": torch.zeros(M, N)}  # fmt: skip
    return {k: v.to(device) for k, v in tensors.items()}


SIZES = {"M": M, "N": N, "K": K}
projection = TritonKernel(projection_kernel, args=lambda: {**operands(), **SIZES}, configs=[{"num_warps": 4}])


def check_projection(device: str):
    """ieee fp32 against float64: within fp32 rounding of a 256-term sum."""
    args = operands(device)
    projection_kernel[(1,)](**args, **SIZES)
    x, w = args["x_ptr"].cpu().double(), args["w_ptr"].cpu().double()
    return args["out_ptr"].cpu().double().numpy(), (x @ w).numpy()
