"""dot_f16_accumulator_default_out: `tl.dot(a, b, acc)` with a float16 accumulator and no
`out_dtype` fails to compile (triton-lang/triton#10341, fixed in 3.8.0).

A 16x16 float16 product accumulated into a float16 tile. Up to 3.7.1 `tl.dot` takes `out_dtype`
to be float32 whatever the accumulator is, and the frontend's own check that the accumulator has
that type fails with a bare `AssertionError` (compiled for any target, and in the interpreter).
From 3.8.0 the accumulator's type is the default. The same dot given `out_dtype=tl.float16`
(`f16_accumulator_explicit`) compiles in every release, so a FAIL of `f16_accumulator` is the
default, not the float16 accumulation.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

N = 16


@triton.jit
def dot_into_kernel(a_ptr, b_ptr, out_ptr, N: tl.constexpr, EXPLICIT: tl.constexpr):
    tile = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + tile)
    b = tl.load(b_ptr + tile)
    acc = tl.zeros([N, N], dtype=tl.float16)
    if EXPLICIT:  # noqa: SIM108 (the two calls compared, one per branch)
        acc = tl.dot(a, b, acc, out_dtype=tl.float16)
    else:
        acc = tl.dot(a, b, acc)
    tl.store(out_ptr + tile, acc)


def operands(device: str = "cpu") -> dict:
    """Small integers: every product and sum is exact in float16."""
    gen = torch.Generator().manual_seed(0)
    a = torch.randint(0, 3, (N, N), generator=gen).to(torch.float16)
    b = torch.randint(0, 3, (N, N), generator=gen).to(torch.float16)
    return {
        "a_ptr": a.to(device),
        "b_ptr": b.to(device),
        "out_ptr": torch.empty(N, N, dtype=torch.float16, device=device),
    }


def kernel(explicit: bool) -> TritonKernel:
    return TritonKernel(
        dot_into_kernel, args=lambda: {**operands(), "N": N, "EXPLICIT": explicit}, configs=[{"num_warps": 4}]
    )


f16_accumulator = kernel(explicit=False)
f16_accumulator_explicit = kernel(explicit=True)


def check_f16_accumulator(device: str):
    args = operands(device)
    dot_into_kernel[(1,)](**args, N=N, EXPLICIT=False)
    expected = args["a_ptr"].cpu().double() @ args["b_ptr"].cpu().double()
    return args["out_ptr"].cpu().double().numpy(), expected.numpy()
