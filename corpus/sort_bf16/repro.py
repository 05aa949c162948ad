"""sort_bf16: `tl.sort` of bfloat16 values fails to compile (triton-lang/triton#3873).

Sorting each row of scores in bfloat16, as a top-k sampler does before it cuts. The lowering
represented bf16 as i16, so the compare in `tl.sort`'s compare-and-swap network became an
`llvm.fcmp` on integers and the pass pipeline failed; float16 rows sort in every release (`rows_f16`).
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

ROWS, COLS = 8, 64


@triton.jit
def sort_rows_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    offsets = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    tl.store(out_ptr + offsets, tl.sort(tl.load(x_ptr + offsets)))


def operands(dtype: torch.dtype, device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(ROWS, COLS, generator=gen).to(dtype)
    return {"x_ptr": x.to(device), "out_ptr": torch.empty(ROWS, COLS, dtype=dtype, device=device)}


rows_bf16 = TritonKernel(
    sort_rows_kernel, args=lambda: {**operands(torch.bfloat16), "ROWS": ROWS, "COLS": COLS}
)
rows_f16 = TritonKernel(
    sort_rows_kernel, args=lambda: {**operands(torch.float16), "ROWS": ROWS, "COLS": COLS}
)


def check_sort(device: str):
    args = operands(torch.bfloat16, device)
    sort_rows_kernel[(1,)](**args, ROWS=ROWS, COLS=COLS)
    return args["out_ptr"].cpu().double().numpy(), np.sort(args["x_ptr"].cpu().double().numpy(), axis=1)
