"""atomic_add_bf16: `tl.atomic_add` into a bfloat16 buffer (triton-lang/triton#1387).

Split-K and index_put(accumulate=True) kernels accumulate partial results atomically; with bf16
outputs that needs a bf16 atomic add. Triton refused bf16 atomics at compile time until BF16
atomic_add support landed (triton-lang/triton#6519): on sm_90 it is one native
`atom.global...add.noftz.bf16` per element, on sm_80 and gfx942 a compare-and-swap loop.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

ROWS, COLS, SPLITS = 64, 64, 4
BLOCK = 64


@triton.jit
def split_k_accumulate_kernel(part_ptr, out_ptr, COLS: tl.constexpr, BLOCK: tl.constexpr):
    row, split = tl.program_id(0), tl.program_id(1)
    cols = tl.arange(0, BLOCK)
    partial = tl.load(part_ptr + (split * tl.num_programs(0) + row) * COLS + cols)
    tl.atomic_add(out_ptr + row * COLS + cols, partial.to(tl.bfloat16), sem="relaxed")


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    parts = torch.randint(-8, 8, (SPLITS, ROWS, COLS), generator=gen).float()  # exact in bf16
    return {
        "part_ptr": parts.to(device),
        "out_ptr": torch.zeros(ROWS * COLS, dtype=torch.bfloat16, device=device),
    }


accumulate = TritonKernel(
    split_k_accumulate_kernel,
    args=lambda: {**operands(), "COLS": COLS, "BLOCK": BLOCK},
    configs=[{"num_warps": 2}],
)


def check_accumulate(device: str):
    x = operands(device)
    split_k_accumulate_kernel[(ROWS, SPLITS)](**x, COLS=COLS, BLOCK=BLOCK)
    expected = x["part_ptr"].cpu().double().sum(0).reshape(-1).numpy()
    return x["out_ptr"].cpu().double().numpy(), expected
