"""atomic_add_through_block_pointer: `tl.atomic_add` through a block pointer
(triton-lang/triton#7381).

Each program adds a scaled copy of a (ROWS, COLS) tile back into it. Through a block pointer
(`through_block_pointer`) Triton 3.0.0 to 3.3.1 build a `tt.atomic_rmw` whose pointer operand is
the block pointer itself, and the MLIR verifier stops the compile: "'tt.atomic_rmw' op failed to
verify that ptr type matches value type" (printed on stderr; the exception says only "PassManager::
run failed"). 3.4.0 to 3.8.0 stop earlier, in the frontend, with an AttributeError of the block
type; 3.9.0 has no block pointers. The same update through a tensor of pointers
(`through_pointer_tensor`) compiles in every release, so a FAIL of the first is the block pointer.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

ROWS, COLS = 16, 32


@triton.jit
def scale_back_kernel(x_ptr, stride, ROWS: tl.constexpr, COLS: tl.constexpr, BLOCK_POINTER: tl.constexpr):
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    if BLOCK_POINTER:
        tile = tl.make_block_ptr(
            base=x_ptr, shape=(ROWS, COLS), strides=(stride, 1), offsets=(0, 0),
            block_shape=(ROWS, COLS), order=(1, 0),
        )  # fmt: skip
        x = tl.load(tile)
        tl.atomic_add(tile, x * 0.5)
    else:
        pointers = x_ptr + rows * stride + cols
        x = tl.load(pointers)
        tl.atomic_add(pointers, x * 0.5)


def kernel(block_pointer: bool) -> TritonKernel:
    def args() -> dict:
        return {"x_ptr": torch.empty(ROWS, COLS), "stride": COLS, "ROWS": ROWS, "COLS": COLS,
                "BLOCK_POINTER": block_pointer}  # fmt: skip

    return TritonKernel(scale_back_kernel, args=args, configs=[{"num_warps": 4}])


through_block_pointer = kernel(block_pointer=True)
through_pointer_tensor = kernel(block_pointer=False)
