"""amd_select_base_pointer_chain: a chain of `tl.where` over four base pointers builds an invalid
`tt.addptr` in AMD's pointer canonicalization (triton-lang/triton#10804).

Each of four rows read from its own tensor, the base chosen by three chained selects (rows of
attention residuals from different layers). After the two-base case was fixed (3.8.0), a select
whose arms came from different rewrites, one already a tensor of pointers and the other a (base,
offset) pair, combined a scalar base with a tensor offset: `'tt.addptr' op failed to verify that
result type matches ptr type`. Two bases (`two_bases`) compile from 3.8.0 on.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

ROWS, D = 4, 64


@triton.jit
def gather_layers_kernel(out_ptr, base0, base1, base2, base3, D: tl.constexpr, ROWS: tl.constexpr,
                         CHAIN: tl.constexpr):  # fmt: skip
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, D)
    base = base0 + rows * 0
    base = tl.where(rows == 1, base1, base)
    if CHAIN:
        base = tl.where(rows == 2, base2, base)
        base = tl.where(rows == 3, base3, base)
    values = tl.load(base[:, None] + rows[:, None] * D + cols[None, :])
    tl.store(out_ptr + rows[:, None] * D + cols[None, :], values)


def operands(device: str = "cpu") -> dict:
    layers = [torch.arange(ROWS * D, dtype=torch.float32) + 1000 * k for k in range(4)]
    tensors = {"out_ptr": torch.zeros(ROWS * D), **{f"base{k}": layer for k, layer in enumerate(layers)}}
    return {k: v.to(device) for k, v in tensors.items()}


def kernel(chain: bool) -> TritonKernel:
    return TritonKernel(
        gather_layers_kernel, args=lambda: {**operands(), "D": D, "ROWS": ROWS, "CHAIN": chain}
    )


four_bases = kernel(True)
two_bases = kernel(False)


def check_layers(device: str):
    args = operands(device)
    gather_layers_kernel[(1,)](**args, D=D, ROWS=ROWS, CHAIN=True)
    layers = [args[f"base{k}"].cpu().double().numpy().reshape(ROWS, D) for k in range(4)]
    expected = np.stack([layers[r][r] for r in range(ROWS)])
    return args["out_ptr"].cpu().double().numpy().reshape(ROWS, D), expected
