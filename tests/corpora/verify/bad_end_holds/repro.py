"""A copy kernel that loads 128 bits at a time, and its control, which reads every other element:
the vector-load check must catch the control."""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel


@triton.jit
def copy_kernel(src, dst, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(dst + offsets, tl.load(src + offsets * STRIDE))


def args(stride: int):
    return lambda: {"src": torch.empty(2048), "dst": torch.empty(1024), "STRIDE": stride, "BLOCK": 1024}


contiguous = TritonKernel(copy_kernel, args=args(1), configs=[{"num_warps": 4}])
strided = TritonKernel(copy_kernel, args=args(2), configs=[{"num_warps": 4}])
