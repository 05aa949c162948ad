"""interp_sum_int32_wrap: an int32 `tl.sum` whose total does not fit in int32
(triton-lang/triton#11531).

A compiled kernel accumulates an int32 reduction in int32 and wraps around, as a checksum wants.
The interpreter sums in NumPy, which widens to int64; from Triton 3.3.0 it then built the scalar
result with the int32 dtype directly, which NumPy 2 refuses for an out-of-range value, so the
kernel died with OverflowError under TRITON_INTERPRET=1 (3.0.0 to 3.2.0 wrapped like the GPU).
"""

import numpy as np
import torch
import triton
import triton.language as tl

ROWS, COLS = 4, 128


@triton.jit
def checksum_kernel(x_ptr, out_ptr, COLS: tl.constexpr):
    row = tl.program_id(0)
    words = tl.load(x_ptr + row * COLS + tl.arange(0, COLS))
    tl.store(out_ptr + row, tl.sum(words, axis=0))


def words() -> torch.Tensor:
    gen = torch.Generator().manual_seed(0)
    return torch.randint(2**28, 2**31 - 1, (ROWS, COLS), generator=gen, dtype=torch.int32)


def check_checksums(device: str):
    x = words()
    out = torch.zeros(ROWS, dtype=torch.int32, device=device)
    checksum_kernel[(ROWS,)](x.to(device), out, COLS=COLS)
    wrapped = x.numpy().astype(np.int64).sum(axis=1).astype(np.uint64).astype(np.uint32).astype(np.int32)
    return out.cpu().double().numpy(), wrapped.astype(np.float64)
