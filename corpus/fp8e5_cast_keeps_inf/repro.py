"""fp8e5_cast_keeps_inf: float16 -> float8e5 casts on Hopper (triton-lang/triton#5927).

float8e5 (E5M2) has infinities, and an IEEE round-to-nearest conversion maps +-inf (and values
past the largest finite one by more than half an ulp) to +-inf. On sm_90 Triton lowers the cast to
`cvt.rn.satfinite.e5m2x2.f16x2`, whose mandatory `.satfinite` clamps them to +-57344 instead: an
overflow in an fp8 training step silently becomes a large finite value. The cast must either use
a conversion that keeps infinities or fix them up.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

SIZE, BLOCK = 256, 256


@triton.jit
def to_fp8e5_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets).to(tl.float8e5))


def values() -> torch.Tensor:
    """Finite values in range, then +-inf and halves past 57344 that round to inf."""
    finite = torch.linspace(-50000.0, 50000.0, SIZE - 6)
    edges = torch.tensor([float("inf"), float("-inf"), 65504.0, -65504.0, 61440.0, -61440.0])
    return torch.cat([finite, edges]).half()


to_fp8e5 = TritonKernel(
    to_fp8e5_kernel,
    args=lambda: {"x_ptr": values(), "out_ptr": torch.empty(SIZE, dtype=torch.float8_e5m2), "BLOCK": BLOCK},
)


def check_infinities(device: str):
    x = values()
    out = torch.empty(SIZE, dtype=torch.float8_e5m2, device=device)
    to_fp8e5_kernel[(1,)](x.to(device), out, BLOCK=BLOCK)
    expected = x.double().numpy().copy()
    expected = np.asarray(torch.from_numpy(expected).half().to(torch.float8_e5m2).double().numpy())
    return out.cpu().double().numpy(), expected
