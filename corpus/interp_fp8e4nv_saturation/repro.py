"""interp_fp8e4nv_saturation: float32 -> float8e4nv casts past the largest finite value
(triton-lang/triton#11667).

float8e4nv (OCP E4M3FN) has no infinity; a compiled cast on NVIDIA GPUs saturates (`cvt.rn.satfinite`),
so 500.0 becomes 448.0, the largest finite value. The interpreter's encoder lets the exponent wrap,
and 500.0 comes back as 256.0: an fp8 scaling kernel whose amax is slightly off looks fine on a GPU
and wrong under TRITON_INTERPRET=1, or the other way around.
"""

import numpy as np
import torch
import triton
import triton.language as tl

BLOCK = 256
E4M3_MAX = 448.0


@triton.jit
def scale_to_fp8_kernel(x_ptr, out_ptr, scale, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask) * scale
    tl.store(out_ptr + offsets, x.to(tl.float8e4nv).to(tl.float32), mask=mask)


def values() -> torch.Tensor:
    """In range, at the edge, and past it by up to 4x, both signs."""
    inside = torch.linspace(-440.0, 440.0, 301)
    past = torch.linspace(449.0, 1792.0, 211)
    return torch.cat([inside, past, -past])


def check_saturation(device: str):
    x = values()
    out = torch.zeros_like(x, device=device)
    scale_to_fp8_kernel[(triton.cdiv(x.numel(), BLOCK),)](x.to(device), out, 1.0, x.numel(), BLOCK=BLOCK)
    saturated = x.clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn).to(torch.float64)
    return out.cpu().double().numpy(), np.asarray(saturated.numpy())
