"""interp_reduce_tuple_unpack: under the interpreter, `tl.reduce` over a tuple of one tensor does
not return a tuple, so unpacking its result raises (triton-lang/triton#6490).

`tl.reduce` takes a tuple of tensors and returns a tuple of the same length, which compiled code
unpacks as `total, = tl.reduce((values,), 0, combine)`. The interpreter reduced the tuple's one
tensor and returned the bare result (a scalar), so the unpacking failed with
`InterpreterError: TypeError("'int' object is not iterable")` where the compiled kernel ran. 3.4.0
returns the tuple. The same reduction of a bare tensor (`check_bare_sum`) works in every release.
"""

import numpy as np
import torch
import triton
import triton.language as tl

BLOCK = 512


@triton.jit
def add(a, b):
    return a + b


@triton.jit
def tuple_sum_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    values = tl.load(x_ptr + tl.arange(0, BLOCK))
    (total,) = tl.reduce((values,), 0, add)
    tl.store(out_ptr, total)


@triton.jit
def bare_sum_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    values = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr, tl.reduce(values, 0, add))


def inputs():
    gen = torch.Generator().manual_seed(42)
    return torch.randint(0, 10, (BLOCK,), generator=gen, dtype=torch.int32)


def check(kernel, device: str):
    x = inputs()
    out = torch.zeros(1, dtype=torch.int32, device=device)
    kernel[(1,)](x.to(device), out, BLOCK=BLOCK)
    return out.cpu().double().numpy(), np.array([x.sum().item()], dtype=np.float64)


def check_tuple_sum(device: str):
    return check(tuple_sum_kernel, device)


def check_bare_sum(device: str):
    return check(bare_sum_kernel, device)
