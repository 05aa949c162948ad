"""amd_select_base_pointer: `tl.where` between two base pointers, then offset and loaded, fails
AMD's pointer canonicalization (triton-lang/triton#10381).

Reading each row from one of two tensors (a row of a cache, or of a freshly computed block) chosen
per row. The AMD pass that splits pointers into a base and an offset for buffer loads met a scalar
base picked by `arith.select` where it expected a tensor and its cast assertion failed
(`PassManager::run failed`) from 3.6.0, when buffer operations became the default, to 3.7.1.
Rows from a single base (`one_base`) compile in every release.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

ROWS, D = 4, 64


@triton.jit
def pick_rows_kernel(out_ptr, a_ptr, b_ptr, D: tl.constexpr, ROWS: tl.constexpr, SELECT: tl.constexpr):
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, D)
    base = a_ptr + rows * 0
    if SELECT:
        base = tl.where(rows % 2 == 1, b_ptr, base)
    values = tl.load(base[:, None] + rows[:, None] * D + cols[None, :])
    tl.store(out_ptr + rows[:, None] * D + cols[None, :], values)


def operands(device: str = "cpu") -> dict:
    a = torch.arange(ROWS * D, dtype=torch.float32)
    return {"out_ptr": torch.zeros(ROWS * D, device=device), "a_ptr": a.to(device), "b_ptr": (-a).to(device)}


def kernel(select: bool) -> TritonKernel:
    return TritonKernel(pick_rows_kernel, args=lambda: {**operands(), "D": D, "ROWS": ROWS, "SELECT": select})


two_bases = kernel(True)
one_base = kernel(False)


def check_pick_rows(device: str):
    args = operands(device)
    pick_rows_kernel[(1,)](**args, D=D, ROWS=ROWS, SELECT=True)
    a = args["a_ptr"].cpu().double().numpy().reshape(ROWS, D)
    expected = np.where((np.arange(ROWS) % 2 == 1)[:, None], -a, a)
    return args["out_ptr"].cpu().double().numpy().reshape(ROWS, D), expected
