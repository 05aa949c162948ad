"""interp_int_scalar_methods: Python numbers computed inside a kernel are tensors there
(triton-lang/triton#5965).

In a compiled kernel `step = base * 2 + 1` with plain integer literals is a Triton scalar, and
`step.to(tl.float32)` is a cast. The interpreter of Triton 3.0 and 3.1 left such values as Python
ints, so the kernel died with "'int' object has no attribute 'to'" under TRITON_INTERPRET=1 while
it compiled and ran on a GPU.
"""

import numpy as np
import torch
import triton
import triton.language as tl

SIZE, BLOCK = 300, 128


@triton.jit
def ramp_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    base = 3
    step = base * 2 + 1  # 7: a scalar of the kernel, made of literals only
    scale = step.to(tl.float32)
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * scale + offsets.to(tl.float32), mask=mask)


def check_ramp(device: str):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(SIZE, generator=gen)
    out = torch.zeros(SIZE, device=device)
    ramp_kernel[(triton.cdiv(SIZE, BLOCK),)](x.to(device), out, SIZE, BLOCK=BLOCK)
    return out.cpu().double().numpy(), x.double().numpy() * 7 + np.arange(SIZE)
