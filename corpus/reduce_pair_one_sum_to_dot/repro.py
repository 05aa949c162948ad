"""reduce_pair_one_sum_to_dot: a two-result `tl.reduce` over a broadcast product, whose combine
returns one sum twice, is rewritten into a one-result `tt.dot` (triton-lang/triton#11662).

TritonCombineOps turns `sum(a[:, :, None] * b[None, :, :], axis=1)` into a matrix product. Its
pattern checked that the reduction's combine region is a single add of a product of broadcasts,
not how many results the reduction has: a reduction of the pair `(product, product)` whose combine
adds once and yields that sum for both results matches, and is replaced by one `tt.dot`. Release
wheels fail the pass pipeline (`PassManager::run failed`, 3.5.0 to 3.8.0) or abort in MLIR's
`replaceOp` ("ops have different number of results", 3.0.0 to 3.4.0); 3.9.0 leaves a
multi-result reduction alone.

The twin (`two_sums`, the same kernel with `ONE_SUM=False`) reduces the same pair with a combine of
two adds, which the pattern never matched: it compiles in every release, so a FAIL of `one_sum` is
the rewrite, not the reduction.
Inputs are small integers, so the sums are exact however the product is computed (TF32 included).
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

ROWS, INNER, COLS = 16, 32, 16


@triton.jit
def one_sum_for_both(left_acc, right_acc, left_item, right_item):
    total = left_acc + left_item
    return total, total


@triton.jit
def a_sum_each(left_acc, right_acc, left_item, right_item):
    return left_acc + left_item, right_acc + right_item


@triton.jit
def pair_sum_kernel(
    a_ptr,
    b_ptr,
    sum_ptr,
    twice_ptr,
    ROWS: tl.constexpr,
    INNER: tl.constexpr,
    COLS: tl.constexpr,
    ONE_SUM: tl.constexpr,
):
    rows = tl.arange(0, ROWS)
    inner = tl.arange(0, INNER)
    cols = tl.arange(0, COLS)
    a = tl.load(a_ptr + rows[:, None] * INNER + inner[None, :])
    b = tl.load(b_ptr + inner[:, None] * COLS + cols[None, :])
    product = a[:, :, None] * b[None, :, :]
    if ONE_SUM:  # the bug's shape
        first, second = tl.reduce((product, product), axis=1, combine_fn=one_sum_for_both)
    else:  # the twin: two adds, which the rewrite never matched
        first, second = tl.reduce((product, product), axis=1, combine_fn=a_sum_each)
    offsets = rows[:, None] * COLS + cols[None, :]
    tl.store(sum_ptr + offsets, first)
    tl.store(twice_ptr + offsets, first + second)


def inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(11662)
    a = torch.randint(-3, 4, (ROWS, INNER), generator=gen).float()
    b = torch.randint(-3, 4, (INNER, COLS), generator=gen).float()
    return a, b


def operands(device: str = "cpu", one_sum: bool = True) -> dict:
    a, b = inputs()
    return {
        "a_ptr": a.to(device),
        "b_ptr": b.to(device),
        "sum_ptr": torch.empty(ROWS * COLS, device=device),
        "twice_ptr": torch.empty(ROWS * COLS, device=device),
        "ROWS": ROWS,
        "INNER": INNER,
        "COLS": COLS,
        "ONE_SUM": one_sum,
    }


one_sum = TritonKernel(pair_sum_kernel, args=operands)
two_sums = TritonKernel(pair_sum_kernel, args=lambda: operands(one_sum=False))


def check(one_sum: bool, device: str):
    args = operands(device, one_sum)
    pair_sum_kernel[(1,)](**args)
    a, b = inputs()
    expected = (a.double() @ b.double()).reshape(-1).numpy()
    actual = {
        "sum": args["sum_ptr"].cpu().double().numpy(),
        "twice": args["twice_ptr"].cpu().double().numpy(),
    }
    return actual, {"sum": expected, "twice": 2 * expected}


def check_one_sum(device: str):
    return check(True, device)


def check_two_sums(device: str):
    return check(False, device)
