"""interp_atomic_add_f16: the interpreter refused `tl.atomic_add` into float16 memory
(triton-lang/triton#4992; reported again as triton-lang/triton#5894).

Accumulating float16 partial sums into a float16 output, two programs per row, as a split-K
reduction does. Compiled for a GPU this is a plain half-precision atomic add; under
TRITON_INTERPRET=1 the interpreter's atomic add handled float and double only and stopped with
`ValueError: Unsupported data type` up to 3.2.0. Values are small integers, exact in float16
whatever the order of the adds.
"""

import numpy as np
import torch
import triton
import triton.language as tl

ROWS, SPLITS = 64, 2


@triton.jit
def split_sum_kernel(part_ptr, out_ptr, ROWS: tl.constexpr):
    offsets = tl.arange(0, ROWS)
    tl.atomic_add(out_ptr + offsets, tl.load(part_ptr + tl.program_id(0) * ROWS + offsets))


def check_split_sum(device: str):
    parts = (torch.arange(SPLITS * ROWS) % 7).to(torch.float16).to(device)
    out = torch.zeros(ROWS, dtype=torch.float16, device=device)
    split_sum_kernel[(SPLITS,)](parts, out, ROWS=ROWS)
    expected = parts.cpu().double().numpy().reshape(SPLITS, ROWS).sum(axis=0)
    return out.cpu().double().numpy(), np.asarray(expected)
