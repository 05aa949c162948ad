"""cast_f64_to_fp8: casting float64 values to fp8 cannot be compiled for any target
(triton-lang/triton#11897, open).

Quantizing a float64 reference tensor straight to fp8 e5m2, as Inductor emits for
`x_fp64.to(torch.float8_e5m2)`. The frontend emits one `tt.fp_to_fp` from f64 to fp8, and
neither backend lowers it: NVIDIA's conversion table has no f64 entry (a fatal "Unsupported
conversion", or "PassManager::run failed"), AMD fails to legalize it. Going through float32
(`via_f32`) compiles in every release.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

N = 256


@triton.jit
def quantize_kernel(x_ptr, q_ptr, N: tl.constexpr, VIA_F32: tl.constexpr):
    offsets = tl.arange(0, N)
    x = tl.load(x_ptr + offsets)
    if VIA_F32:
        x = x.to(tl.float32)
    tl.store(q_ptr + offsets, x.to(tl.float8e5))


def operands(device: str = "cpu") -> dict:
    x = torch.linspace(-100.0, 100.0, N, dtype=torch.float64)
    return {"x_ptr": x.to(device), "q_ptr": torch.zeros(N, dtype=torch.float8_e5m2, device=device)}


direct = TritonKernel(quantize_kernel, args=lambda: {**operands(), "N": N, "VIA_F32": False})
via_f32 = TritonKernel(quantize_kernel, args=lambda: {**operands(), "N": N, "VIA_F32": True})


def check_quantize(device: str):
    args = operands(device)
    quantize_kernel[(1,)](**args, N=N, VIA_F32=False)
    expected = args["x_ptr"].cpu().to(torch.float8_e5m2).double().numpy()
    return args["q_ptr"].cpu().double().numpy(), np.asarray(expected)
