"""interp_reduce_max_nan: the `tl.max` and `tl.min` reductions return NaN under the interpreter
when the reduced block holds one (triton-lang/triton#7349).

Triton's reductions skip NaN: a compiled `tl.max(x, axis)` combines with maxnum, so a row with a
NaN in it still reduces to its largest number (the documented "NaN ignore" behaviour, unlike
`torch.max`). The interpreter short-cut the two reductions with NumPy's `np.max`/`np.min`, which
propagate NaN, so under TRITON_INTERPRET=1 any row holding a NaN came back NaN, and a softmax or
an amax-based scale built on it went NaN from there. Here each row of a block has NaN in a few
columns, and the per-row max, min and their difference (a range) are checked against NumPy's
nanmax/nanmin in float64.
"""

import numpy as np
import torch
import triton
import triton.language as tl

ROWS, COLS = 8, 64


@triton.jit
def row_range_kernel(x_ptr, max_ptr, min_ptr, span_ptr, COLS: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * COLS + tl.arange(0, COLS))
    hi = tl.max(x, axis=0)
    lo = tl.min(x, axis=0)
    tl.store(max_ptr + row, hi)
    tl.store(min_ptr + row, lo)
    tl.store(span_ptr + row, hi - lo)


def samples() -> torch.Tensor:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(ROWS, COLS, generator=gen) * 3.0
    for row in range(ROWS):  # a NaN or two in every row, never a whole row of them
        x[row, (5 * row) % COLS] = float("nan")
        if row % 2:
            x[row, (11 * row + 3) % COLS] = float("nan")
    return x


def check_row_range(device: str):
    x = samples()
    outs = {name: torch.zeros(ROWS, device=device) for name in ("max", "min", "span")}
    row_range_kernel[(ROWS,)](x.to(device), outs["max"], outs["min"], outs["span"], COLS=COLS)
    x64 = x.double().numpy()
    hi, lo = np.nanmax(x64, axis=1), np.nanmin(x64, axis=1)
    expected = {"max": hi, "min": lo, "span": hi - lo}
    return {name: out.cpu().double().numpy() for name, out in outs.items()}, expected
