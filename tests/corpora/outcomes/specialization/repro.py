"""A strided copy whose code depends on what the JIT knows: with the divisibility-by-16 facts of
a real launch the loads vectorize (ld.global.v4); compiled without them they stay scalar."""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel


@triton.jit
def strided_copy_kernel(src_ptr, dst_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    tl.store(dst_ptr + row * stride + offsets, tl.load(src_ptr + row * stride + offsets))


def args():
    t = torch.empty(64 * 256)
    return {"src_ptr": t, "dst_ptr": t, "stride": 256, "BLOCK": 256}


as_launched = TritonKernel(strided_copy_kernel, args=args)
unspecialized = TritonKernel(strided_copy_kernel, args=args, specialize=False)
