"""xpu_loop_flatten: on Intel GPUs, `tl.range(..., flatten=True)` over a nest whose epilogue
feeds two loop-carried values builds invalid IR (triton-lang/triton#11620, as shipped in
triton-xpu).

Fibonacci-like block totals: the inner loop adds a block's step offsets to the running total, the
epilogue adds the previous total and carries it. The flattened nest yielded the epilogue's value
once where two loop-carried results needed it, and the verifier stopped the pipeline for PVC and
DG2 under triton-xpu 3.3.0b1. Without `flatten` (`nested`) the same nest compiles. Upstream triton
fixed it in 3.9.0 (triton-lang/triton#11621).
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

BLOCKS, STEPS = 2, 2


@triton.jit
def block_totals_kernel(out_ptr, BLOCKS: tl.constexpr, STEPS: tl.constexpr, FLATTEN: tl.constexpr):
    total = 1
    previous = 2
    for _ in tl.range(BLOCKS, flatten=FLATTEN):
        for step in range(STEPS):
            total += step
        total += previous
        previous = total
    tl.store(out_ptr, total)


def operands(device: str = "cpu") -> dict:
    return {"out_ptr": torch.zeros(1, dtype=torch.int32, device=device)}


def kernel(flatten: bool) -> TritonKernel:
    return TritonKernel(block_totals_kernel, args=lambda: {**operands(), "BLOCKS": BLOCKS, "STEPS": STEPS,
                                                           "FLATTEN": flatten})  # fmt: skip


flattened = kernel(True)
nested = kernel(False)


def check_block_totals(device: str):
    args = operands(device)
    block_totals_kernel[(1,)](**args, BLOCKS=BLOCKS, STEPS=STEPS, FLATTEN=True)
    total, previous = 1, 2
    for _ in range(BLOCKS):
        total += sum(range(STEPS)) + previous
        previous = total
    return args["out_ptr"].cpu().double().numpy(), np.array([total], dtype=np.float64)
