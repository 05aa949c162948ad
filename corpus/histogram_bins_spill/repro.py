"""histogram_bins_spill: tl.histogram kept a count per bin in every lane's registers, so a
histogram with thousands of bins took all 255 registers and spilled (triton-lang/triton PR#9517).

One pass of an LSD radix sort with 12-bit digits: each program counts the digits of a block of
4096 keys into 4096 buckets and adds its counts to the global histogram. Up to 3.7.1 the lowering
built each warp's histogram with ballots, every lane holding 4096 / 32 = 128 counters in registers
on top of the keys it loads; from 3.8.0 each key is one shared-memory atomic increment. An 8-bit
digit (256 buckets) is the control: it fits under every release. The figures are ptxas's, the
same in kind for sm_80 and sm_90.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

BLOCK = 4096
PROGRAMS = 4


@triton.jit
def digit_count_kernel(key_ptr, count_ptr, SHIFT: tl.constexpr, BLOCK: tl.constexpr, BUCKETS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keys = tl.load(key_ptr + offs)
    digits = (keys >> SHIFT) & (BUCKETS - 1)
    tl.atomic_add(count_ptr + tl.arange(0, BUCKETS), tl.histogram(digits, BUCKETS))


def keys(n: int) -> torch.Tensor:
    """Non-negative 31-bit keys; the caller pads to a whole block."""
    return torch.randint(0, 2**31 - 1, (n,), generator=torch.Generator().manual_seed(0), dtype=torch.int32)


def digit_count(bits: int) -> TritonKernel:
    return TritonKernel(
        digit_count_kernel,
        args=lambda: {
            "key_ptr": keys(BLOCK),
            "count_ptr": torch.zeros(1 << bits, dtype=torch.int32),
            "SHIFT": 12,
            "BLOCK": BLOCK,
            "BUCKETS": 1 << bits,
        },
        configs=[{"num_warps": 4}, {"num_warps": 8}],
    )


digit12_count = digit_count(12)
digit8_count = digit_count(8)


def check_digit12_counts(device: str):
    """Exact: integer counts of four blocks, against torch.bincount."""
    k = keys(PROGRAMS * BLOCK).to(device)
    counts = torch.zeros(4096, dtype=torch.int32, device=device)
    digit_count_kernel[(PROGRAMS,)](k, counts, SHIFT=12, BLOCK=BLOCK, BUCKETS=4096, num_warps=4)
    expected = torch.bincount((k.cpu() >> 12) & 4095, minlength=4096)
    return counts.cpu().numpy(), expected.numpy()
