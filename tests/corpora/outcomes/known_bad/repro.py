"""Known-bad entries: a failing expectation becomes XFAIL, a passing one XPASS ("looks fixed")."""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel


@triton.jit
def copy_kernel(src_ptr, dst_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets))


def args():
    t = torch.empty(256)
    return {"src_ptr": t, "dst_ptr": t, "BLOCK": 256}


copy = TritonKernel(copy_kernel, args=args)
