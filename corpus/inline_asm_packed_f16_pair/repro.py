"""inline_asm_packed_f16_pair: `tl.inline_asm_elementwise` with two float16 results packed four
to a call aborts the NVIDIA lowering (triton-lang/triton#5272).

A packed inline asm returns each result as registers holding `pack` values: two float16 results of
four values each are four 32-bit registers. The lowering sized the registers of the results by one
result only and indexed past the end of the list, an LLVM `ArrayRef` assertion that kills the
compiler's process (SIGABRT). One float16 result (`one_result_kernel`) lowers in every release; the
fix in 3.3.0 unpacks each result by its own element type.

The asm itself is kept trivial (it writes 1.0 and 2.0 into the halves of each result): what is
judged is how the compiler unpacks its results.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

BLOCK = 64


@triton.jit
def two_results_kernel(src_ptr, first_ptr, second_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    packed = tl.load(src_ptr + offsets)
    first, second = tl.inline_asm_elementwise(
        "mov.b32 $0, 0x3C003C00; mov.b32 $1, 0x3C003C00; mov.b32 $2, 0x40004000; mov.b32 $3, 0x40004000;",
        "=r,=r,=r,=r,r",
        [packed],
        dtype=(tl.float16, tl.float16),
        is_pure=True,
        pack=4,
    )
    tl.store(first_ptr + offsets, first)
    tl.store(second_ptr + offsets, second)


@triton.jit
def one_result_kernel(src_ptr, first_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    packed = tl.load(src_ptr + offsets)
    first = tl.inline_asm_elementwise(
        "mov.b32 $0, 0x3C003C00; mov.b32 $1, 0x3C003C00;",
        "=r,=r,r",
        [packed],
        dtype=tl.float16,
        is_pure=True,
        pack=4,
    )
    tl.store(first_ptr + offsets, first)


def operands(device: str = "cpu") -> dict:
    return {
        "src_ptr": torch.zeros(BLOCK, dtype=torch.int8, device=device),
        "first_ptr": torch.empty(BLOCK, dtype=torch.float16, device=device),
        "second_ptr": torch.empty(BLOCK, dtype=torch.float16, device=device),
        "BLOCK": BLOCK,
    }


two_results = TritonKernel(two_results_kernel, args=operands)
one_result = TritonKernel(
    one_result_kernel, args=lambda: {k: v for k, v in operands().items() if k != "second_ptr"}
)


def check_two_results(device: str):
    args = operands(device)
    two_results_kernel[(1,)](**args)
    actual = {
        "first": args["first_ptr"].cpu().double().numpy(),
        "second": args["second_ptr"].cpu().double().numpy(),
    }
    return actual, {"first": np.ones(BLOCK), "second": np.full(BLOCK, 2.0)}
