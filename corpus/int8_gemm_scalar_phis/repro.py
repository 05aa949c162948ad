"""int8_gemm_scalar_phis: an int8 GEMM on sm_80 carries its int8 operands across the K loop as
scalar i8 values, and runs out of registers (triton-lang/triton#10503).

Triton 3.8.0 turns LLVM's SLP vectorizer off for sm_80 (PR#10503, to work around a ptxas bug;
compiler.py: "disable_slp_vectorizer = capability == 80"). An int8 mma.sync on sm_80 takes its
operands four bytes to a register, and a loop that carries such packed values needs the SLP
vectorizer to keep them packed (#5930 shows the same four scalar phis when SLP misjudges them).
Without it, each packed word of the pipelined operands becomes four `phi i8`, rebuilt with byte
permutes every iteration. Measured here for a 128x128x64 tile on 4 warps: up to 3.7.1 no i8 phi in
the LLVM IR, 225 registers, no spills; from 3.8.0 128 i8 phis, 2.8x the byte permutes, 255
registers and 556 bytes of spills. sm_90 keeps the vectorizer (and uses wgmma).
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

SIZE = 256


@triton.jit
def int8_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    inner = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.int32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * K + (k + inner)[None, :])
        b = tl.load(b_ptr + (k + inner)[:, None] * N + cols[None, :])
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc)


def operands(size: int, device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    tensors = {
        "a_ptr": torch.randint(-128, 128, (size, size), generator=gen, dtype=torch.int8),
        "b_ptr": torch.randint(-128, 128, (size, size), generator=gen, dtype=torch.int8),
        "c_ptr": torch.zeros(size, size, dtype=torch.int32),
    }
    return {k: v.to(device) for k, v in tensors.items()}


def launch_args(bm: int, bn: int, bk: int) -> dict:
    return {**operands(SIZE), "M": SIZE, "N": SIZE, "K": SIZE, "BM": bm, "BN": bn, "BK": bk}


# The tile a W8A8 GEMM picks on an A100, pipelined 2 and 3 deep.
tile_128 = TritonKernel(
    int8_gemm_kernel,
    args=lambda: launch_args(128, 128, 64),
    configs=[{"num_warps": 4, "num_stages": 3}, {"num_warps": 4, "num_stages": 2}],
)


def check_product(device: str):
    """Exact: int8 products summed in int32 (64 products of at most 2^14 each: no overflow)."""
    size, block = 64, 32
    args = operands(size, device)
    int8_gemm_kernel[(size // block, size // block)](
        **args, M=size, N=size, K=size, BM=block, BN=block, BK=block
    )
    a, b = args["a_ptr"].cpu().long(), args["b_ptr"].cpu().long()
    return args["c_ptr"].cpu().numpy(), (a @ b).numpy()
