"""constexpr_comprehension_tuple_target: a list comprehension in a `@triton.jit` function whose
target unpacks a tuple (`for lo, hi in ...`) fails in the frontend (triton-lang/triton#11073,
fixed in 3.9.0).

Each program sums a few constant column ranges of a row, the ranges built at compile time as a
constexpr list from (lo, hi) pairs. Triton 3.5.0 to 3.8.0 lower a comprehension's target as a
single name and stop with `AttributeError: 'Tuple' object has no attribute 'id'` (a
CompilationError, for every target); 3.9.0 binds each name of the tuple. The same widths built
from one name per element (`single_name_target`) compile in those releases, so a FAIL of
`tuple_target` is the unpacking.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

COLS = 64


@triton.jit
def span_sums_kernel(x_ptr, out_ptr, COLS: tl.constexpr, UNPACK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, COLS)
    x = tl.load(x_ptr + row * COLS + offsets)
    if UNPACK:
        widths: tl.constexpr = [hi - lo for lo, hi in ((0, 16), (16, 48))]
    else:
        widths: tl.constexpr = [w for w in (16, 32)]
    first = tl.sum(tl.where(offsets < widths[0], x, 0.0))
    second = tl.sum(tl.where((offsets >= widths[0]) & (offsets < widths[0] + widths[1]), x, 0.0))
    tl.store(out_ptr + row * 2, first)
    tl.store(out_ptr + row * 2 + 1, second)


def kernel(unpack: bool) -> TritonKernel:
    def args() -> dict:
        return {"x_ptr": torch.empty(4, COLS), "out_ptr": torch.empty(4, 2), "COLS": COLS, "UNPACK": unpack}

    return TritonKernel(span_sums_kernel, args=args, configs=[{"num_warps": 4}])


tuple_target = kernel(unpack=True)
single_name_target = kernel(unpack=False)
