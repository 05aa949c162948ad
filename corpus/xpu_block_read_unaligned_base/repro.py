"""xpu_block_read_unaligned_base: a 2D block read from a base that is not 64-byte aligned is
shifted twice on Battlemage (intel/intel-xpu-backend-for-triton#4304, fixed by #4335).

A GEMM whose operands are views into larger buffers: each starts 16 bytes past a 64-byte line (8
float16 elements into its buffer), as a slice of a packed projection does. The launch only knows
the pointers to be 16-byte aligned. Both operands are read with 2D block messages, whose base must
be 64-byte aligned. From #3397 (in triton-xpu 3.3.0b1) the lowering moves the base's bytes past its
64-byte line into the message's x offset and width, but still passes the base itself unchanged.
PVC ignores the low 6 bits of the base, so there the read lands right; BMG does not, so the tile is
read that many bytes too far along the row. #4335 clears the low 6 bits of the base as well. Before
#3397 (triton-xpu 3.2.0b1) neither was done: the raw base went to the message with the x offset and
width of the tile, which is where a device that keeps the low bits reads.

In the LLVM IR this is a block read given a kernel argument as its base together with a base width
computed at run time (the argument's bytes past its line folded in): the width was compensated, the
base was not.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

M, N, K = 64, 64, 64
BM, BN, BK = 32, 32, 32
# float16 elements between a 64-byte line and the start of each operand view: 16 bytes.
SKEW = 8


@triton.jit
def sliced_gemm_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M: tl.constexpr,
    N: tl.constexpr,
    K: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_tile = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (pid_m * BM, 0), (BM, BK), (1, 0))
    b_tile = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        acc += tl.dot(tl.load(a_tile), tl.load(b_tile))
        a_tile = tl.advance(a_tile, (0, BK))
        b_tile = tl.advance(b_tile, (BK, 0))
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc)


def operands(device: str = "cpu") -> dict:
    """Each operand a view SKEW elements into its buffer (16 bytes past the buffer's start)."""
    gen = torch.Generator().manual_seed(0)
    a_buf = (torch.randn(M * K + SKEW, generator=gen) / 8).to(torch.float16).to(device)
    b_buf = (torch.randn(K * N + SKEW, generator=gen) / 8).to(torch.float16).to(device)
    return {
        "a_ptr": a_buf[SKEW:].view(M, K),
        "b_ptr": b_buf[SKEW:].view(K, N),
        "c_ptr": torch.zeros(M, N, device=device),
    }


sliced_gemm = TritonKernel(
    sliced_gemm_kernel,
    args=lambda: {**operands(), "M": M, "N": N, "K": K, "BM": BM, "BN": BN, "BK": BK},
    configs=[{"num_warps": 4}, {"num_warps": 8}],
)


def check_sliced_gemm(device: str):
    """The product of the two skewed views against float64."""
    args = operands(device)
    sliced_gemm_kernel[(M // BM, N // BN)](**args, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK)
    a, b = (args[k].cpu().double() for k in ("a_ptr", "b_ptr"))
    return args["c_ptr"].cpu().double().numpy(), (a @ b).numpy()
