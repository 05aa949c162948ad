"""Vector add: every expectation kind holds for it (the positive controls)."""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import Benchmark, TritonKernel


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    # tl.cdiv is one of triton.language's own @jit helpers: under the interpreter it must be an
    # interpreted function too (the fork server preloads triton in the matching mode).
    mask = offsets < tl.minimum(n, tl.cdiv(n, BLOCK) * BLOCK)
    tl.store(
        out_ptr + offsets,
        tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
        mask=mask,
    )


def launch_args():
    x = torch.empty(4096)
    return {"x_ptr": x, "y_ptr": x, "out_ptr": x, "n": 4096, "BLOCK": 1024}


add = TritonKernel(add_kernel, args=launch_args, configs=[{"num_warps": 4}, {"num_warps": 8}])


def run_add(device, n=3000, block=1024):
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(n, generator=gen), torch.randn(n, generator=gen)
    out = torch.empty(n, device=device)
    add_kernel[(triton.cdiv(n, block),)](x.to(device), y.to(device), out, n, BLOCK=block)
    return out, x.double().numpy() + y.double().numpy()


def check_add(device):
    return run_add(device)


def timed_add(repeats):
    def setup(device):
        x = torch.randn(1024, device=device)
        out = torch.empty_like(x)

        def run():
            for _ in range(repeats):
                add_kernel[(1,)](x, x, out, 1024, BLOCK=1024)

        return run

    return setup


add_once = Benchmark(timed_add(1), flops=1024)
add_once_again = Benchmark(timed_add(1), flops=1024)

if __name__ == "__main__":
    actual, expected = run_add("cpu")
    print("max abs err", np.abs(actual.double().numpy() - expected).max())
