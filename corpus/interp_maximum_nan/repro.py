"""interp_maximum_nan: `tl.maximum`, `tl.minimum` and `tl.clamp` let NaN through under the
interpreter (triton-lang/triton#10333).

With the default `propagate_nan=tl.PropagateNan.NONE` these ops skip a NaN operand and return the
other one, the way the compiled kernels do (LLVM's maxnum/minnum, C's fmax/fmin). The interpreter
computed them with NumPy's `maximum`/`minimum`, which propagate NaN, and its clamp ignored
`propagate_nan` and used `np.clip`. So a ReLU written `tl.maximum(x, 0.0)`, or a clamp that is
meant to sanitize activations, handed NaN on under TRITON_INTERPRET=1 where a GPU gives a number.
Here a block with a NaN in every seventh element goes through a ReLU, its negative twin and a
clamp to [-LIMIT, LIMIT], checked against NumPy's fmax/fmin.
"""

import numpy as np
import torch
import triton
import triton.language as tl

SIZE, BLOCK, LIMIT = 200, 64, 1.5


@triton.jit
def sanitize_kernel(x_ptr, relu_ptr, neg_ptr, clamped_ptr, n, limit, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(relu_ptr + offsets, tl.maximum(x, 0.0), mask=mask)
    tl.store(neg_ptr + offsets, tl.minimum(x, 0.0), mask=mask)
    tl.store(clamped_ptr + offsets, tl.clamp(x, -limit, limit), mask=mask)


def activations() -> torch.Tensor:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(SIZE, generator=gen) * 2.0
    x[::7] = float("nan")
    return x


def check_sanitize(device: str):
    x = activations()
    outs = {name: torch.zeros(SIZE, device=device) for name in ("relu", "neg", "clamped")}
    grid = (triton.cdiv(SIZE, BLOCK),)
    sanitize_kernel[grid](x.to(device), outs["relu"], outs["neg"], outs["clamped"], SIZE, LIMIT, BLOCK=BLOCK)
    x64 = x.double().numpy()
    expected = {
        "relu": np.fmax(x64, 0.0),
        "neg": np.fmin(x64, 0.0),
        "clamped": np.fmin(np.fmax(x64, -LIMIT), LIMIT),
    }
    return {name: out.cpu().double().numpy() for name, out in outs.items()}, expected
