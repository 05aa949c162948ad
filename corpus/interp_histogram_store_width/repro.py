"""interp_histogram_store_width: under the interpreter, storing a `tl.histogram` writes 8 bytes
for each 4-byte count and clobbers the memory after it (triton-lang/triton#8550).

`tl.histogram` returns int32 counts, but the interpreter computed them with NumPy as int64 and
labelled them int32; `tl.store` then wrote 8 bytes at each 4-byte slot: each count's upper (zero)
half fell on the next slot, overwritten there by the next count, except the last one's, which zeroed
the first slot past the row. Here the counts of a block land in the first half of a buffer whose
second half holds markers: they must stay (the marker after the counts read 0 up to 3.5.1). 3.6.0
casts the counts to the type they are labelled with.
"""

import numpy as np
import torch
import triton
import triton.language as tl

VALUES, BINS = 64, 8
MARKER = 12345


@triton.jit
def count_bins_kernel(x_ptr, counts_ptr, VALUES: tl.constexpr, BINS: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, VALUES))
    tl.store(counts_ptr + tl.arange(0, BINS), tl.histogram(x, BINS))


def inputs():
    gen = torch.Generator().manual_seed(0)
    return torch.randint(0, BINS, (VALUES,), generator=gen, dtype=torch.int32)


def check_count_bins(device: str):
    x = inputs()
    counts = torch.full((2 * BINS,), MARKER, dtype=torch.int32, device=device)
    count_bins_kernel[(1,)](x.to(device), counts, VALUES=VALUES, BINS=BINS)
    expected = np.concatenate([np.bincount(x.numpy(), minlength=BINS), np.full(BINS, MARKER)])
    return counts.cpu().double().numpy(), expected.astype(np.float64)
