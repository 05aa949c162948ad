"""dot_f64_upcast: a float64 `tl.dot` whose operands were upcast from float16 fails on NVIDIA's
MMA path (triton-lang/triton#11632).

A float64 residual correction: float16 tiles, widened to float64 so that the product is exact,
multiplied with `tl.dot`. The layout for the dot operands took its K width from the narrowest
type in the operand's chain (float16, 16 bits), so the float64 MMA was asked for a "large K" it
does not have and the pass pipeline failed on sm_80 and sm_90 ("PassManager::run failed") from
3.5.0, when fp64 dots became MMA dots, to 3.8.0. Operands loaded as float32 and upcast
(`from_f32`) compile.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

M = N = K = 32


@triton.jit
def exact_product_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :]).to(tl.float64)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :]).to(tl.float64)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


def operands(dtype: torch.dtype, device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    a, b = (torch.randn(n, generator=gen).to(dtype) for n in (M * K, K * N))
    return {
        "a_ptr": a.to(device),
        "b_ptr": b.to(device),
        "c_ptr": torch.zeros(M * N, dtype=torch.float64, device=device),
    }


def kernel(dtype: torch.dtype) -> TritonKernel:
    return TritonKernel(exact_product_kernel, args=lambda: {**operands(dtype), "M": M, "N": N, "K": K})


from_f16 = kernel(torch.float16)
from_f32 = kernel(torch.float32)


def check_product(device: str):
    args = operands(torch.float16, device)
    exact_product_kernel[(1,)](**args, M=M, N=N, K=K)
    a = args["a_ptr"].cpu().double().numpy().reshape(M, K)
    b = args["b_ptr"].cpu().double().numpy().reshape(K, N)
    return args["c_ptr"].cpu().numpy().reshape(M, N), a @ b
