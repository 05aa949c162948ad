"""fp8_bf16_cast_sm89: float8e4nv to bfloat16 on Ada (sm_89) fails in ptxas
(triton-lang/triton#5491).

Each program widens a block of e4m3 values to bfloat16, halves them and narrows them back. For
sm_89 Triton 3.0.0 to 3.2.0 convert e4m3 to bfloat16 through float16 with `cvt.bf16.f16`, which PTX
has only from sm_90, and ptxas stops: "Feature 'cvt with .bf16.f16' requires .target sm_90 or
higher" (inside Triton's "Internal Triton PTX codegen error"). 3.3.0 converts another way. The same
kernel widened to float32 instead (`through_float32`) compiles for sm_89 in every release, so a
FAIL of `through_bfloat16` is the bfloat16 conversion.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

BLOCK = 128


@triton.jit
def halve_e4m3_kernel(x_ptr, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    wide = tl.load(x_ptr + offsets).to(WIDE)
    tl.store(x_ptr + offsets, (wide * 0.5).to(tl.float8e4nv))


def kernel(wide: tl.dtype) -> TritonKernel:
    def args() -> dict:
        return {"x_ptr": torch.empty(4 * BLOCK, dtype=torch.float8_e4m3fn), "BLOCK": BLOCK, "WIDE": wide}

    return TritonKernel(halve_e4m3_kernel, args=args, configs=[{"num_warps": 4}])


through_bfloat16 = kernel(tl.bfloat16)
through_float32 = kernel(tl.float32)
