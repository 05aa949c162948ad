"""fp8_inexact_constant: a float8 tensor filled with a constant float8 cannot hold exactly
(triton-lang/triton#11667).

`tl.full(shape, 1.1, tl.float8e4nv)` is how a kernel seeds an fp8 accumulator or pads a tile.
1.1 is not a float8e4nv value. Up to 3.8 the frontend has no fp8 constants at all ("builder has no
attribute get_fp8e4nv"); 3.9 emits the constant as an `arith.truncf` from fp32 that reaches LLVM as
an FP32-to-i8 truncation it cannot lower ("PassManager::run failed"). Either way the kernel does not
compile for sm_90, where fp8 is native; the constant should be rounded to nearest even (1.125).
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

BLOCK = 128


@triton.jit
def fill_fp8_kernel(out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.full((BLOCK,), 1.1, tl.float8e4nv))


fill_fp8 = TritonKernel(
    fill_fp8_kernel, args=lambda: {"out_ptr": torch.empty(BLOCK, dtype=torch.float8_e4m3fn), "BLOCK": BLOCK}
)


def check_fill(device: str):
    out = torch.zeros(BLOCK, dtype=torch.float8_e4m3fn, device=device)
    fill_fp8_kernel[(1,)](out, BLOCK=BLOCK)
    expected = torch.full((BLOCK,), 1.1).to(torch.float8_e4m3fn)
    return out.cpu().double().numpy(), expected.double().numpy()
