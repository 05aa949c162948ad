"""blackwell_b2b_dots_shared_acc: two `tl.dot`s in a row into one loop-carried accumulator are
pipelined into different stages on Blackwell (triton-lang/triton#10821, fixed by
triton-lang/triton#10988, a reland of #10858).

A K loop that accumulates two products per step into the same fp32 tile
(`acc = tl.dot(a1, b1, acc); acc = tl.dot(a2, b2, acc)`), 128x128x64 fp16 tiles, three stages. On
sm_100 each `tl.dot` became a tcgen05 MMA with its own tensor-memory accumulator, the value copied
from one to the other through registers between them, and the latency assignment gave the two
MMAs different pipeline stages although each depends on the other (within a step, and across
steps through the loop-carried accumulator). The expanded loop then issues the first MMA of step
i+1 in the same iteration as the second MMA of step i, ahead of the copy it depends on: the
prologue peels the first MMA one extra time (five tcgen05 MMAs in the TTGIR instead of four: both
MMAs of the first step before the loop, both in the loop) and results on a B200 are wrong. 3.9.0
keeps both MMAs in one stage, on one accumulator. The same loop with one dot per step (`one_dot`)
has two MMAs in every release.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel, Unsupported

BM, BN, BK, K = 128, 128, 64, 256


@triton.jit
def dots_kernel(a1_ptr, b1_ptr, a2_ptr, b2_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr, TWO: tl.constexpr):  # fmt: skip
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    depth = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=3):
        a1 = tl.load(a1_ptr + rows[:, None] * K + (k + depth)[None, :])
        b1 = tl.load(b1_ptr + (k + depth)[:, None] * BN + cols[None, :])
        acc = tl.dot(a1, b1, acc)
        if TWO:
            a2 = tl.load(a2_ptr + rows[:, None] * K + (k + depth)[None, :])
            b2 = tl.load(b2_ptr + (k + depth)[:, None] * BN + cols[None, :])
            acc = tl.dot(a2, b2, acc)
    tl.store(c_ptr + rows[:, None] * BN + cols[None, :], acc)


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    tensors = {
        "a1_ptr": torch.randn(BM, K, generator=gen).half(),
        "b1_ptr": torch.randn(K, BN, generator=gen).half(),
        "a2_ptr": torch.randn(BM, K, generator=gen).half(),
        "b2_ptr": torch.randn(K, BN, generator=gen).half(),
        "c_ptr": torch.empty(BM, BN),
    }
    return {k: v.to(device) for k, v in tensors.items()}


def kernel(two: bool) -> TritonKernel:
    def args() -> dict:
        return {**operands(), "K": K, "BM": BM, "BN": BN, "BK": BK, "TWO": two}

    return TritonKernel(dots_kernel, args=args, configs=[{"num_warps": 4}])


two_dots = kernel(True)
one_dot = kernel(False)


def check_two_dots(device: str):
    """Both products summed into one accumulator against float64, on a tcgen05 (sm_100/sm_103) device."""
    capability = torch.cuda.get_device_capability(device)
    if capability[0] != 10:
        here = f"sm_{capability[0]}{capability[1]}"
        raise Unsupported(f"the bug is in the tcgen05 pipelining of sm_100/sm_103; this device is {here}")
    args = operands(device)
    dots_kernel[(1,)](**args, K=K, BM=BM, BN=BN, BK=BK, TWO=True)
    a1, b1, a2, b2 = (args[k].cpu().double().numpy() for k in ("a1_ptr", "b1_ptr", "a2_ptr", "b2_ptr"))
    return args["c_ptr"].cpu().double().numpy(), a1 @ b1 + a2 @ b2
