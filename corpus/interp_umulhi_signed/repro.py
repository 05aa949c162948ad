"""interp_umulhi_signed: `tl.umulhi` of signed int32 operands under the interpreter
(triton-lang/triton#11043).

`tl.umulhi(a, b)` is the high half of the unsigned product of the operands' bit patterns, as
`__nv_umulhi` computes it on the GPU. The interpreter widened signed operands by sign extension,
so any negative operand (a key or a multiplier with its top bit set, as in multiplicative hashing)
gave a wrong high half: 0 instead of 0xFFFFFFFE for -1 * -1.
"""

import numpy as np
import torch
import triton
import triton.language as tl

SIZE, BLOCK = 256, 64
GOLDEN = -1640531535  # 0x9E3779B1, Knuth's multiplicative hash constant, as an int32


@triton.jit
def bucket_kernel(keys_ptr, out_ptr, n, multiplier, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    keys = tl.load(keys_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.umulhi(keys, multiplier), mask=mask)


def keys() -> torch.Tensor:
    gen = torch.Generator().manual_seed(0)
    return torch.randint(-(2**31), 2**31 - 1, (SIZE,), generator=gen, dtype=torch.int32)


def reference(k: torch.Tensor, multiplier: int) -> np.ndarray:
    a = k.numpy().astype(np.uint32).astype(np.uint64)
    b = np.uint64(multiplier & 0xFFFFFFFF)
    return ((a * b) >> np.uint64(32)).astype(np.uint32).astype(np.int32).astype(np.float64)


def check_buckets(device: str):
    k = keys()
    out = torch.zeros(SIZE, dtype=torch.int32, device=device)
    bucket_kernel[(triton.cdiv(SIZE, BLOCK),)](k.to(device), out, SIZE, GOLDEN, BLOCK=BLOCK)
    return out.cpu().double().numpy(), reference(k, GOLDEN)
