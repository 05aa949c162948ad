"""tf32x3_gemm_smem: a tf32x3 GEMM takes more shared memory than its pipelined tiles need
(triton-lang/triton#11526).

`input_precision="tf32x3"` splits each fp32 operand into a tf32 high part and a tf32 remainder and
sums three tensor-core products, so fp32 accuracy comes at tensor-core speed. The operands still
stream through shared memory once per stage: three stages of a 64x32 and a 32x64 fp32 tile are
3 x (8 KiB + 8 KiB) = 48 KiB. Triton 3.8.0 kept extra buffers for the split (56 KiB on sm_80 and
sm_90), which costs occupancy and pushes bigger tiles past the limit.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

M = N = K = 256
BM, BN, BK = 64, 64, 32


@triton.jit
def gemm_bias_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):  # fmt: skip
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    depth = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * K + (k + depth)[None, :])
        b = tl.load(b_ptr + (k + depth)[:, None] * N + cols[None, :])
        acc = tl.dot(a, b, acc, input_precision="tf32x3")
    acc += tl.load(bias_ptr + cols)[None, :]
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc)


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(M, K, generator=gen), torch.randn(K, N, generator=gen)
    tensors = {"a_ptr": a, "b_ptr": b, "bias_ptr": torch.randn(N, generator=gen), "c_ptr": torch.empty(M, N)}
    return {k: v.to(device) for k, v in tensors.items()}


SIZES = {"M": M, "N": N, "K": K, "BM": BM, "BN": BN, "BK": BK}
THREE_STAGES = [{"num_warps": 4, "num_stages": 3}]
gemm = TritonKernel(gemm_bias_kernel, args=lambda: {**operands(), **SIZES}, configs=THREE_STAGES)


def check_gemm(device: str):
    """tf32x3 keeps fp32 accuracy: against float64, within fp32 rounding of a 256-term sum."""
    args = operands(device)
    gemm_bias_kernel[(M // BM, N // BN)](**args, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, num_stages=3)
    a, b, bias = (args[k].cpu().double().numpy() for k in ("a_ptr", "b_ptr", "bias_ptr"))
    return args["c_ptr"].cpu().double().numpy(), a @ b + bias[None, :]
