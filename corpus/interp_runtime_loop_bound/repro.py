"""interp_runtime_loop_bound: a `range` whose bound is a kernel argument, under the interpreter
with NumPy 2.4 (triton-lang/triton#9171).

`for start in range(0, n, BLOCK)` over a runtime `n` is the ordinary K-loop. The interpreter turns
the bound into a Python int through `__index__`, which called `int()` on a one-element array; NumPy
2.4 no longer converts those implicitly, so from Triton 3.2.0 to 3.6.0 every such loop died with
"only 0-dimensional arrays can be converted to Python scalars" under TRITON_INTERPRET=1.
"""

import numpy as np
import torch
import triton
import triton.language as tl

ROWS, COLS, BLOCK = 8, 200, 64


@triton.jit
def row_sums_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def check_row_sums(device: str):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(ROWS, COLS, generator=gen)
    out = torch.zeros(ROWS, device=device)
    row_sums_kernel[(ROWS,)](x.to(device), out, COLS, BLOCK=BLOCK)
    return out.cpu().double().numpy(), x.double().numpy().sum(axis=1).astype(np.float64)
