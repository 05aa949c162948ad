"""flip_default_dim: `tl.flip(x)` with its documented default `dim=None` (triton-lang/triton#10790).

Reversing each row of a tile, as a right-to-left scan does before and after it runs. From 3.4.0,
when `tl.flip` learned to flip any axis, its bounds check compared the axis with the rank before
`dim=None` had been resolved to the last axis, so the default call raised a TypeError in the
frontend (`'<=' not supported between instances of 'int' and 'NoneType'`) for every target.
`tl.flip(x, 1)` (`rows_explicit`) names the same axis and compiles in every release.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

ROWS, COLS = 16, 64


@triton.jit
def reverse_rows_kernel(x_ptr, out_ptr, COLS: tl.constexpr, ROWS: tl.constexpr, EXPLICIT: tl.constexpr):
    offsets = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    x = tl.load(x_ptr + offsets)
    if EXPLICIT:  # noqa: SIM108 (a compile-time branch: one kernel or the other)
        y = tl.flip(x, 1)
    else:
        y = tl.flip(x)
    tl.store(out_ptr + offsets, y)


def operands(device: str = "cpu") -> dict:
    x = torch.arange(ROWS * COLS, dtype=torch.float32).reshape(ROWS, COLS)
    return {"x_ptr": x.to(device), "out_ptr": torch.empty(ROWS, COLS, device=device)}


def kernel(explicit: bool) -> TritonKernel:
    def args() -> dict:
        return {**operands(), "COLS": COLS, "ROWS": ROWS, "EXPLICIT": explicit}

    return TritonKernel(reverse_rows_kernel, args=args, configs=[{"num_warps": 4}])


rows_default = kernel(False)
rows_explicit = kernel(True)


def check_reverse(device: str):
    args = operands(device)
    reverse_rows_kernel[(1,)](**args, COLS=COLS, ROWS=ROWS, EXPLICIT=False)
    return args["out_ptr"].cpu().double().numpy(), np.flip(args["x_ptr"].cpu().double().numpy(), 1)
