"""xpu_nested_block_ptr_loop: a block pointer carried through two nested loops stops the Intel
backend's Coalesce pass (intel/intel-xpu-backend-for-triton#4000).

A running product over a matrix streamed in 4x4 tiles: the outer loop walks row blocks, the inner
one column blocks, and both carry the block pointer (the inner loop yields the product and the
pointer: two results). Coalesce, propagating the pointer's new layout out of the inner loop,
assumed the defining op yields a single result and asserted ("Expecting operation yielding a
result"); the pipeline fails for PVC and DG2. A single loop carrying the same pointer compiles.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

M, N, XB, RB = 16, 16, 4, 4


@triton.jit
def tile_product_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, XB: tl.constexpr, RB: tl.constexpr):
    tile = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (XB, RB), (1, 0))
    product = tl.full((XB, RB), 1.0, tl.float32)
    for _ in range(0, M, XB):
        for _ in range(0, N, RB):
            product = product * tl.load(tile, boundary_check=(0, 1), padding_option="zero")
            tile = tl.advance(tile, (0, RB))
        tile = tl.advance(tile, (XB, -N))
    tl.store(out_ptr + tl.arange(0, XB), tl.sum(product, 1))


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, XB: tl.constexpr, RB: tl.constexpr):
    """The control: one loop carrying the same block pointer."""
    tile = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (XB, RB), (1, 0))
    total = tl.zeros((XB, RB), tl.float32)
    for _ in range(0, M, XB):
        total += tl.load(tile, boundary_check=(0, 1), padding_option="zero")
        tile = tl.advance(tile, (XB, 0))
    tl.store(out_ptr + tl.arange(0, XB), tl.sum(total, 1))


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    x = 1.0 + 0.05 * torch.randn(M, N, generator=gen)  # near 1: 16 factors stay well inside fp32
    return {"x_ptr": x.to(device), "out_ptr": torch.zeros(XB, device=device)}


SIZES = {"M": M, "N": N, "XB": XB, "RB": RB}
nested = TritonKernel(tile_product_kernel, args=lambda: {**operands(), **SIZES}, configs=[{"num_warps": 2}])
single = TritonKernel(row_sum_kernel, args=lambda: {**operands(), **SIZES}, configs=[{"num_warps": 2}])


def check_product(device: str):
    """out[r] = sum over the tile's columns c of the product of x[i*XB + r, j*RB + c] over all
    row blocks i and column blocks j."""
    args = operands(device)
    tile_product_kernel[(1,)](**args, **SIZES)
    x = args["x_ptr"].cpu().double().numpy().reshape(M // XB, XB, N // RB, RB)
    return args["out_ptr"].cpu().double().numpy(), np.prod(x, axis=(0, 2)).sum(axis=1)
