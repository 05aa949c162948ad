"""Negative controls: each expectation kind FAILS on a kernel or measurement that breaks it."""

import torch
import triton
import triton.language as tl

from kregress.case import Benchmark, TritonKernel


@triton.jit
def off_by_one_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    total = tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets + 1, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, total, mask=mask)


def vector_args():
    x = torch.empty(4096)
    return {"x_ptr": x, "y_ptr": x, "out_ptr": x, "n": 4096, "BLOCK": 1024}


off_by_one = TritonKernel(off_by_one_kernel, args=vector_args)


def check_off_by_one(device):
    n = 3000
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(n, generator=gen), torch.randn(n, generator=gen)
    out = torch.empty(n, device=device)
    off_by_one_kernel[(triton.cdiv(n, 1024),)](x.to(device), y.to(device), out, n, BLOCK=1024)
    return out, x.double().numpy() + y.double().numpy()


@triton.jit
def tiny_dot_kernel(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    tile = rows[:, None] * BLOCK + rows[None, :]
    tl.store(c_ptr + tile, tl.dot(tl.load(a_ptr + tile), tl.load(b_ptr + tile)))


def dot_args(block):
    def args():
        t = torch.empty(block * block)
        return {"a_ptr": t, "b_ptr": t, "c_ptr": t, "BLOCK": block}

    return args


# tl.arange needs a power-of-two range: BLOCK=12 is a compile error on every target.
tiny_dot = TritonKernel(tiny_dot_kernel, args=dot_args(12))
# A 64x64 fp32 dot stages its operands through shared memory.
staged_dot = TritonKernel(tiny_dot_kernel, args=dot_args(64), configs=[{"num_warps": 4, "num_stages": 2}])


def repeated_add(repeats):
    def setup(device):
        x = torch.randn(1024, device=device)
        out = torch.empty_like(x)

        def run():
            for _ in range(repeats):
                off_by_one_kernel[(1,)](x, x, out, 1024, BLOCK=1024)

        return run

    return setup


add_eight_times = Benchmark(repeated_add(8))
add_once = Benchmark(repeated_add(1))


BASELINE_CALLS = [0]  # shared by the two callables below, in the one child that times them


def spin(loops: int) -> None:
    for _ in range(loops):
        pass


def steady(device):
    def run():
        BASELINE_CALLS[0] += 1
        spin(40_000)

    return run


def evicted(device):
    """Eight times slower on every other stretch of calls that follows the baseline: as if the
    baseline evicted its cache. Noise made deterministic, whatever the machine's load, so the
    alternating rounds of one job disagree."""
    seen = {"baseline_calls": 0, "stretches": 0}

    def run():
        if BASELINE_CALLS[0] != seen["baseline_calls"]:
            seen["baseline_calls"], seen["stretches"] = BASELINE_CALLS[0], seen["stretches"] + 1
        spin(160_000 if seen["stretches"] % 2 else 20_000)

    return run


evicted_by_baseline = Benchmark(evicted)
steady_loop = Benchmark(steady)
