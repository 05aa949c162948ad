"""interp_argmax_nan: `tl.argmax` and `tl.argmin` pick a NaN under the interpreter
(triton-lang/triton#10298).

Triton's max/min reductions skip NaN: the compiled argmax combines two candidates with
`value1 > value2 or (value1 == value2 and index1 < index2)`, which is false for a NaN on the left,
so a NaN in front of finite values loses to them. The interpreter took a shortcut to NumPy's
`argmax`/`argmin`, which return the first NaN, so a row that starts with a NaN reported index 0
under TRITON_INTERPRET=1 while a GPU reports the largest (smallest) finite value. Here each row of
scores, half of them with a NaN in column 0 (where every reduction order sees it first), is
reduced to the index of its largest and its smallest value, against NumPy's nanargmax/nanargmin.
"""

import numpy as np
import torch
import triton
import triton.language as tl

ROWS, COLS = 16, 64


@triton.jit
def pick_kernel(x_ptr, best_ptr, worst_ptr, COLS: tl.constexpr):
    row = tl.program_id(0)
    scores = tl.load(x_ptr + row * COLS + tl.arange(0, COLS))
    tl.store(best_ptr + row, tl.argmax(scores, axis=0))
    tl.store(worst_ptr + row, tl.argmin(scores, axis=0))


def scores() -> torch.Tensor:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(ROWS, COLS, generator=gen)
    x[::2, 0] = float("nan")
    return x


def check_pick(device: str):
    x = scores()
    best = torch.zeros(ROWS, dtype=torch.int32, device=device)
    worst = torch.zeros(ROWS, dtype=torch.int32, device=device)
    pick_kernel[(ROWS,)](x.to(device), best, worst, COLS=COLS)
    x64 = x.double().numpy()
    actual = {"argmax": best.cpu().double().numpy(), "argmin": worst.cpu().double().numpy()}
    expected = {
        "argmax": np.nanargmax(x64, axis=1).astype(np.float64),
        "argmin": np.nanargmin(x64, axis=1).astype(np.float64),
    }
    return actual, expected
