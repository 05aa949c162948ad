"""scan_replicated_warps: tl.cumsum takes shared memory for every warp, including warps that only
hold copies of other warps' data (triton-lang/triton PR#5910).

A MoE router's block-aligned offsets: each expert's token count is rounded up to the GEMM's block
and an exclusive prefix sum gives where each expert's rows start. With 64 experts and 4 to 16
warps, most warps hold replicated copies of the 64 counts, and up to 3.2.0 the scan's scratch was
sized per warp all the same: 16, 32 and 64 bytes where 8 do. A column scan of an 8x16 tile on 8
and 16 warps shows the same factor at a larger size (512 and 1024 bytes where 256 do). The figure
is the compiled kernel's shared memory, the same for sm_80 and sm_90.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

EXPERTS, BLOCK_M = 64, 64
ROWS, COLS = 8, 16


@triton.jit
def expert_offsets_kernel(counts_ptr, offsets_ptr, EXPERTS: tl.constexpr, BLOCK_M: tl.constexpr):
    experts = tl.arange(0, EXPERTS)
    counts = tl.load(counts_ptr + experts)
    padded = tl.cdiv(counts, BLOCK_M) * BLOCK_M
    tl.store(offsets_ptr + experts, tl.cumsum(padded, 0) - padded)


@triton.jit
def column_scan_kernel(x_ptr, y_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    x = tl.load(x_ptr + rows[:, None] * COLS + cols[None, :])
    tl.store(y_ptr + rows[:, None] * COLS + cols[None, :], tl.cumsum(x, 0))


def token_counts() -> torch.Tensor:
    """Some experts get no tokens, some fewer than a block, some several blocks."""
    return torch.randint(0, 300, (EXPERTS,), generator=torch.Generator().manual_seed(0), dtype=torch.int32)


def tile() -> torch.Tensor:
    return torch.randn(ROWS, COLS, generator=torch.Generator().manual_seed(1))


expert_offsets = TritonKernel(
    expert_offsets_kernel,
    args=lambda: {
        "counts_ptr": token_counts(),
        "offsets_ptr": torch.zeros(EXPERTS, dtype=torch.int32),
        "EXPERTS": EXPERTS,
        "BLOCK_M": BLOCK_M,
    },
    configs=[{"num_warps": 4}, {"num_warps": 8}, {"num_warps": 16}],
)
column_scan = TritonKernel(
    column_scan_kernel,
    args=lambda: {"x_ptr": tile(), "y_ptr": torch.zeros(ROWS, COLS), "ROWS": ROWS, "COLS": COLS},
    configs=[{"num_warps": 8}, {"num_warps": 16}],
)


def check_offsets(device: str):
    """Exact: integer sums."""
    counts = token_counts().to(device)
    offsets = torch.zeros(EXPERTS, dtype=torch.int32, device=device)
    expert_offsets_kernel[(1,)](counts, offsets, EXPERTS=EXPERTS, BLOCK_M=BLOCK_M, num_warps=16)
    padded = (counts.cpu().long() + BLOCK_M - 1) // BLOCK_M * BLOCK_M
    return offsets.cpu().numpy(), (torch.cumsum(padded, 0) - padded).numpy()


def check_column_scan(device: str):
    """Against a float64 prefix sum: eight terms of float32."""
    x = tile().to(device)
    y = torch.zeros(ROWS, COLS, device=device)
    column_scan_kernel[(1,)](x, y, ROWS=ROWS, COLS=COLS, num_warps=16)
    return y.cpu().numpy(), torch.cumsum(x.cpu().double(), 0).numpy()
