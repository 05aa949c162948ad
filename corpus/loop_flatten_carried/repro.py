"""loop_flatten_carried: `tl.range(..., flatten=True)` over a loop nest whose epilogue feeds two
loop-carried values builds invalid IR (triton-lang/triton#11620).

A two-level recurrence, as a scan over blocks of a sequence does it: the inner loop folds a block
into the running value, the outer epilogue hands it to the next block as both its start and its
carry. Flattening the nest into one loop yielded that epilogue value once where two outer results
needed it, so the verifier stopped the pass pipeline ("region branch point has 2 operands, but
region successor needs 1 inputs"). The same nest without `flatten` (`nested`) compiles everywhere.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel


@triton.jit
def recurrence_kernel(out_ptr, BLOCKS: tl.constexpr, FLATTEN: tl.constexpr):
    value = 1
    carry = 2
    for _ in tl.range(BLOCKS, flatten=FLATTEN):
        for j in range(2):
            value += j
        value += carry
        carry = value
    tl.store(out_ptr, value)


def operands(device: str = "cpu") -> dict:
    return {"out_ptr": torch.zeros(1, dtype=torch.int32, device=device)}


flattened = TritonKernel(recurrence_kernel, args=lambda: {**operands(), "BLOCKS": 2, "FLATTEN": True})
nested = TritonKernel(recurrence_kernel, args=lambda: {**operands(), "BLOCKS": 2, "FLATTEN": False})


def check_recurrence(device: str):
    args = operands(device)
    recurrence_kernel[(1,)](**args, BLOCKS=2, FLATTEN=True)
    value, carry = 1, 2
    for _ in range(2):
        value += 0 + 1
        value += carry
        carry = value
    return args["out_ptr"].cpu().double().numpy(), np.array([value], dtype=np.float64)
