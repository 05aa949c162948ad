"""interp_full_int1: a boolean block made with `tl.full(..., tl.int1)` (triton-lang/triton#6200).

`tl.full(shape, False, tl.int1)` is the natural start of a mask built up in a loop. The compiled
path lowers it to an i1 constant; the interpreter of releases before 3.4.0 asked its builder for
an int1 type it did not have (`get_int1_ty`), so any kernel with a boolean block died under
TRITON_INTERPRET=1 while it ran on a GPU. Here the mask marks the elements of each block above a
threshold in either of two inputs, and is stored as int32 against a NumPy reference.
"""

import numpy as np
import torch
import triton
import triton.language as tl

SIZE, BLOCK, THRESHOLD = 300, 128, 0.5


@triton.jit
def either_above_kernel(a_ptr, b_ptr, out_ptr, n, threshold, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    seen = tl.full([BLOCK], False, tl.int1)
    seen = seen | (tl.load(a_ptr + offsets, mask=inside, other=0.0) > threshold)
    seen = seen | (tl.load(b_ptr + offsets, mask=inside, other=0.0) > threshold)
    tl.store(out_ptr + offsets, seen.to(tl.int32), mask=inside)


def check_either_above(device: str):
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(SIZE, generator=gen), torch.randn(SIZE, generator=gen)
    out = torch.zeros(SIZE, dtype=torch.int32, device=device)
    grid = (triton.cdiv(SIZE, BLOCK),)
    either_above_kernel[grid](a.to(device), b.to(device), out, SIZE, THRESHOLD, BLOCK=BLOCK)
    expected = ((a.numpy() > THRESHOLD) | (b.numpy() > THRESHOLD)).astype(np.float64)
    return out.cpu().double().numpy(), expected
