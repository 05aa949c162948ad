"""interp_numpy_global: under the interpreter, launching a kernel whose module holds a NumPy array
fails before the kernel runs (triton-lang/triton#5484).

To run a kernel the interpreter patches the names in its function's globals, and it compared each
global against what it was about to put there; a NumPy array answers `==` elementwise, so the truth
of the comparison raised `ValueError: The truth value of an array with more than one element is
ambiguous`. A script that keeps a reference table at module level, as this one does, could not
launch anything. 3.3.0 no longer compares the values.
"""

import numpy as np
import torch
import triton
import triton.language as tl

SIZE = 64
# A module-level table, as scripts keep their reference data: unused by the kernel, it is in the
# kernel's globals all the same.
GAINS = np.linspace(0.5, 2.0, SIZE)


@triton.jit
def apply_gains_kernel(x_ptr, gains_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) * tl.load(gains_ptr + offsets))


def check_apply_gains(device: str):
    x = torch.arange(SIZE, dtype=torch.float32) - 8.0
    gains = torch.from_numpy(GAINS).float()
    out = torch.empty(SIZE, device=device)
    apply_gains_kernel[(1,)](x.to(device), gains.to(device), out, BLOCK=SIZE)
    return out.cpu().double().numpy(), x.double().numpy() * gains.double().numpy()
