"""amd_libdevice_round: `libdevice.round` does not exist in the HIP libdevice module
(triton-lang/triton#7135).

Rounding half away from zero, as a quantizer does before a cast. `triton.language.extra.libdevice`
dispatches to the backend's module, and the HIP one had no `round`, so a kernel that compiles for
NVIDIA failed for AMD with `AttributeError: module 'triton.language.extra.hip.libdevice' has no
attribute 'round'`. `libdevice.floor` (`floor_codes`) exists in both.
"""

import numpy as np
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from kregress.case import TritonKernel

N = 1024


@triton.jit
def quantize_kernel(x_ptr, out_ptr, N: tl.constexpr, ROUND: tl.constexpr):
    offsets = tl.arange(0, N)
    x = tl.load(x_ptr + offsets) * 8.0
    if ROUND:  # noqa: SIM108 (a compile-time branch: one kernel or the other)
        q = libdevice.round(x)
    else:
        q = libdevice.floor(x)
    tl.store(out_ptr + offsets, q)


def operands(device: str = "cpu") -> dict:
    x = torch.linspace(-4, 4, N)
    return {"x_ptr": x.to(device), "out_ptr": torch.zeros(N, device=device)}


round_codes = TritonKernel(quantize_kernel, args=lambda: {**operands(), "N": N, "ROUND": True})
floor_codes = TritonKernel(quantize_kernel, args=lambda: {**operands(), "N": N, "ROUND": False})


def check_round(device: str):
    args = operands(device)
    quantize_kernel[(1,)](**args, N=N, ROUND=True)
    x = args["x_ptr"].cpu().double().numpy() * 8.0
    return args["out_ptr"].cpu().double().numpy(), np.sign(x) * np.floor(np.abs(x) + 0.5)
