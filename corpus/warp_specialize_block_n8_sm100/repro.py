"""warp_specialize_block_n8_sm100: a warp-specialized dot loop whose output tile is 8 columns wide
fails automatic warp specialization on Blackwell (triton-lang/triton#8932).

A skinny GEMM, as a projection onto a handful of outputs does it: each of eight steps loads a
64x64 fp16 tile of A and a 64x8 tile of B and accumulates `tl.dot` into a 64x8 fp32 tile, with
`tl.range(..., warp_specialize=True)` asking for separate load and MMA partitions. With N = 8 the
tcgen05 lowering of sm_100 and sm_103 failed in `NVWSInsertAref` (the pass that puts the
producer/consumer buffers between partitions) in 3.6.0, "PassManager::run failed" with no other
message; the same loop 16 columns wide (`specialized_n16`) compiled. 3.5.1 and 3.8.0 compile both.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel, Unsupported

BM, BK, STEPS = 64, 64, 8


@triton.jit
def skinny_gemm_kernel(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                       STEPS: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):  # fmt: skip
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    depth = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in tl.range(0, STEPS, warp_specialize=WARP_SPECIALIZE):
        a = tl.load(a_ptr + rows[:, None] * (STEPS * BK) + (i * BK + depth)[None, :])
        b = tl.load(b_ptr + (i * BK + depth)[:, None] * BN + cols[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * BN + cols[None, :], acc)


def operands(bn: int, device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    tensors = {
        "a_ptr": torch.randn(BM, STEPS * BK, generator=gen).half(),
        "b_ptr": torch.randn(STEPS * BK, bn, generator=gen).half(),
        "c_ptr": torch.empty(BM, bn),
    }
    return {k: v.to(device) for k, v in tensors.items()}


def kernel(bn: int) -> TritonKernel:
    def args() -> dict:
        return {**operands(bn), "BM": BM, "BN": bn, "BK": BK, "STEPS": STEPS, "WARP_SPECIALIZE": True}

    return TritonKernel(skinny_gemm_kernel, args=args, configs=[{"num_warps": 4, "num_stages": 3}])


specialized_n8 = kernel(8)
specialized_n16 = kernel(16)


def check_specialized_n8(device: str):
    """The warp-specialized 64x8 GEMM against float64, on a tcgen05 (sm_100/sm_103) device. Hopper
    specializes this loop on its own path, with failures of its own (on sm_90 3.6.0 compiles the
    8-column loop and not the 16-column one, 3.8.0 neither), which say nothing of this bug."""
    capability = torch.cuda.get_device_capability(device)
    if capability[0] != 10:
        here = f"sm_{capability[0]}{capability[1]}"
        raise Unsupported(f"the bug is in the tcgen05 lowering of sm_100/sm_103; this device is {here}")
    args = operands(8, device)
    skinny_gemm_kernel[(1,)](**args, BM=BM, BN=8, BK=BK, STEPS=STEPS, WARP_SPECIALIZE=True, num_stages=3)
    a, b = (args[k].cpu().double().numpy() for k in ("a_ptr", "b_ptr"))
    return args["c_ptr"].cpu().double().numpy(), a @ b
