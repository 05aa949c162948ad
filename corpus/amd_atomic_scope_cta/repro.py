"""amd_atomic_scope_cta: AMD atomics ignored `scope=` and always used agent (device) scope
(triton-lang/triton#5580).

A per-block histogram whose bins belong to one program: its atomic adds need only be visible to
that block's threads, so the kernel asks for `scope="cta"`. The AMD lowering dropped the scope and
emitted every `atomicrmw` with `syncscope("agent")`, the device-wide scope, which costs cache
invalidations a workgroup-scoped atomic does not. The NVIDIA lowering honoured it.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

VALUES, BINS = 1024, 16


@triton.jit
def block_histogram_kernel(value_ptr, bin_ptr, VALUES: tl.constexpr, BINS: tl.constexpr):
    offsets = tl.program_id(0) * VALUES + tl.arange(0, VALUES)
    bins = tl.load(value_ptr + offsets) % BINS
    tl.atomic_add(bin_ptr + tl.program_id(0) * BINS + bins, tl.full([VALUES], 1, tl.int32), scope="cta")


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    values = torch.randint(0, 1000, (2 * VALUES,), generator=gen, dtype=torch.int32)
    return {
        "value_ptr": values.to(device),
        "bin_ptr": torch.zeros(2 * BINS, dtype=torch.int32, device=device),
    }


histogram = TritonKernel(block_histogram_kernel, args=lambda: {**operands(), "VALUES": VALUES, "BINS": BINS})


def check_histogram(device: str):
    args = operands(device)
    block_histogram_kernel[(2,)](**args, VALUES=VALUES, BINS=BINS)
    values = args["value_ptr"].cpu().numpy().reshape(2, VALUES) % BINS
    expected = np.stack([np.bincount(row, minlength=BINS) for row in values]).astype(np.float64)
    return args["bin_ptr"].cpu().double().numpy().reshape(2, BINS), expected
