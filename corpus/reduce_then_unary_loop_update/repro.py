"""reduce_then_unary_loop_update: a row sum carried out of a loop through a unary update
(`acc = -r`) crashes TritonGPU's OptimizeThreadLocality pass (triton-lang/triton#11631, fixed in
3.9.0).

Each program sums a tile's rows chunk by chunk and keeps the negated sum of the last chunk. The
pass rewrites a reduction whose result updates a loop-carried value, and expects the update to be
a binary op of the carried value and the reduction (`acc = acc + r`): handed `acc = -r`, Triton
3.8.0 fails the assertion `oldUpdate->getNumOperands() == 2` (printed; the exception says
"PassManager::run failed") and 3.0.0 to 3.7.1 an earlier assertion of the same rewrite,
`isa<BlockArgument>(accumOperand)` (3.0.0 to 3.2.0 abort on it). 3.9.0 skips such an update.
The same loop carrying the running sum (`acc = acc + r`, `binary_update`) compiles in every
release, so a FAIL of `unary_update` is the update's shape.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

ROWS, COLS, CHUNKS = 16, 256, 2


@triton.jit
def chunked_row_sum_kernel(
    x_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr, CHUNKS: tl.constexpr, NEGATE: tl.constexpr
):
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    acc = tl.zeros((ROWS,), tl.float32)
    for chunk in tl.range(0, CHUNKS):
        tile = tl.load(x_ptr + chunk * ROWS * COLS + rows[:, None] * COLS + cols[None, :])
        r = tl.sum(tile, axis=1)
        if NEGATE:  # noqa: SIM108 -- the update as a statement of its own, as the loop carries it
            acc = -r
        else:
            acc = acc + r
    tl.store(out_ptr + rows, acc)


def kernel(negate: bool) -> TritonKernel:
    def args() -> dict:
        return {"x_ptr": torch.empty(CHUNKS, ROWS, COLS), "out_ptr": torch.empty(ROWS), "ROWS": ROWS,
                "COLS": COLS, "CHUNKS": CHUNKS, "NEGATE": negate}  # fmt: skip

    return TritonKernel(chunked_row_sum_kernel, args=args, configs=[{"num_warps": 4}])


unary_update = kernel(negate=True)
binary_update = kernel(negate=False)
