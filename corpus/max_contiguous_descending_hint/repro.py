"""max_contiguous_descending_hint: a negative `tl.max_contiguous` hint (triton-lang/triton#10909).

Reversing each row of a tile reads the columns right to left, and a caller may state that run as a
descending one with a negative contiguity hint. From 3.5.0 such a hint reaches the axis analysis as
a negative contiguity, whose join is then not monotonic: the compiler aborts on an assertion inside
MLIR's dataflow solver (Triton's wheels keep assertions on) and the compile ends in "PassManager::run
failed", for every target. 3.4.0 and earlier compile it. The same kernel hinted with 1
(`hint_one`) compiles in every release, so a FAIL of `hint_descending` is the hint's value.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

ROWS, COLS = 16, 64


@triton.jit
def reverse_rows_kernel(x_ptr, out_ptr, COLS: tl.constexpr, ROWS: tl.constexpr, HINT: tl.constexpr):
    rows = tl.arange(0, ROWS)[:, None]
    backwards = tl.max_contiguous(COLS - 1 - tl.arange(0, COLS), HINT)
    x = tl.load(x_ptr + rows * COLS + backwards[None, :])
    tl.store(out_ptr + rows * COLS + tl.arange(0, COLS)[None, :], x)


def operands(device: str = "cpu") -> dict:
    x = torch.arange(ROWS * COLS, dtype=torch.float32).reshape(ROWS, COLS)
    return {"x_ptr": x.to(device), "out_ptr": torch.empty(ROWS, COLS, device=device)}


def kernel(hint: int) -> TritonKernel:
    def args() -> dict:
        return {**operands(), "COLS": COLS, "ROWS": ROWS, "HINT": hint}

    return TritonKernel(reverse_rows_kernel, args=args, configs=[{"num_warps": 4}])


hint_descending = kernel(-COLS)
hint_one = kernel(1)


def check_reverse(device: str):
    args = operands(device)
    reverse_rows_kernel[(1,)](**args, COLS=COLS, ROWS=ROWS, HINT=-COLS)
    return args["out_ptr"].cpu().double().numpy(), np.flip(args["x_ptr"].cpu().double().numpy(), 1)
