"""interp_atomic_min_float_old: a float32 `tl.atomic_min` whose returned old value is used dies
under the interpreter (triton-lang/triton#8594).

There is no float atomic min in hardware, so Triton's frontend splits a float32 `atomic_min` by
sign: a signed int32 min on the bit patterns of the non-negative values, an unsigned uint32 max on
those of the negative ones, and a `where` that picks the old value from one of the two. The
interpreter evaluated that `where` with NumPy, which promotes int32 and uint32 to int64, then
bitcast the 8-byte result to float32: twice as many elements as the block has, so reading the old
value failed with "cannot reshape array of size 16 into shape (8,)". The fix checks each handle's
NumPy item size against its Triton type and casts a promoted result back.

Here each program lowers a block of running minima (negative, positive and mixed-sign pairs) and
keeps the previous minima it replaced, as a min-tracking update that logs what it overwrote does;
the addresses are distinct, so the old values are the initial minima whatever the order.
"""

import numpy as np
import torch
import triton
import triton.language as tl

SIZE, BLOCK = 32, 8


@triton.jit
def lower_minima_kernel(x_ptr, minima_ptr, previous_ptr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets)
    previous = tl.atomic_min(minima_ptr + offsets, x)
    tl.store(previous_ptr + offsets, previous)


def inputs():
    gen = torch.Generator().manual_seed(0)
    x = (torch.randn(SIZE, generator=gen) * 4.0).round(decimals=2)
    minima = (torch.randn(SIZE, generator=gen) * 4.0).round(decimals=2)
    return x, minima


def check_lower_minima(device: str):
    x, minima = inputs()
    minima_dev = minima.clone().to(device)  # the kernel lowers it in place; keep the initial minima
    previous = torch.zeros(SIZE, device=device)
    lower_minima_kernel[(SIZE // BLOCK,)](x.to(device), minima_dev, previous, BLOCK=BLOCK)
    x64, minima64 = x.double().numpy(), minima.double().numpy()
    actual = {"minima": minima_dev.cpu().double().numpy(), "previous": previous.cpu().double().numpy()}
    expected = {"minima": np.fmin(minima64, x64), "previous": minima64}
    return actual, expected
