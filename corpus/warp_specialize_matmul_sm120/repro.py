"""warp_specialize_matmul_sm120: a plain fp16 matmul loop with `warp_specialize=True` fails to
compile for sm_120 (triton-lang/triton#10284).

The masked K loop of a tiled GEMM (pointer loads, `tl.dot` into an fp32 accumulator, the pointers
advanced each step), 128x128x64 tiles, three stages, asking the compiler to split the loop into
load and MMA partitions with `tl.range(..., warp_specialize=True)`. Consumer Blackwell has no
tcgen05 or TMEM, so the loop ends up software-pipelined for mma.sync; in 3.7.x the
warp-specialization pass left its `ttg.partition` bookkeeping on the loop, and the pipeliner's
verifier rejected the loop's constants ("'arith.constant' op does not have expected attribute
ttg.partition which is expected for ops whose parent has partitions", then "SoftwarePipeliner.cpp:
expandLoops: Assertion 'verify(moduleOp).succeeded()' failed"). 3.8.0 keeps those attributes
inside the warp-specialization pass and compiles it, as 3.5.1 did. The same loop without the hint
(`plain`) compiles in every release.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel, Unsupported

M, N, K = 256, 256, 192
BM, BN, BK = 128, 128, 64


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                WARP_SPECIALIZE: tl.constexpr):  # fmt: skip
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    depth = tl.arange(0, BK)
    a_ptrs = a_ptr + (rows % M)[:, None] * K + depth[None, :]
    b_ptrs = b_ptr + depth[:, None] * N + (cols % N)[None, :]
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK), warp_specialize=WARP_SPECIALIZE):
        a = tl.load(a_ptrs, mask=depth[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=depth[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16), mask=mask)


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    tensors = {
        "a_ptr": torch.randn(M, K, generator=gen).half(),
        "b_ptr": torch.randn(K, N, generator=gen).half(),
        "c_ptr": torch.empty(M, N).half(),
    }
    return {k: v.to(device) for k, v in tensors.items()}


SIZES = {"M": M, "N": N, "K": K, "BM": BM, "BN": BN, "BK": BK}
THREE_STAGES = [{"num_warps": 4, "num_stages": 3}]


def kernel(warp_specialize: bool) -> TritonKernel:
    def args() -> dict:
        return {**operands(), **SIZES, "WARP_SPECIALIZE": warp_specialize}

    return TritonKernel(gemm_kernel, args=args, configs=THREE_STAGES)


specialized = kernel(True)
plain = kernel(False)


def on_sm_120(device: str) -> None:
    """The bug is in the sm_120 lowering: another GPU compiles this loop on other paths, with other
    bugs of its own (on an H100 under 3.6.0 and 3.9.0 warp specialization of a pointer-load GEMM
    stops in Hopper's own warp-specialization passes), so it says nothing of this one."""
    capability = torch.cuda.get_device_capability(device)
    if capability != (12, 0):
        raise Unsupported(f"the bug is sm_120's; this device is sm_{capability[0]}{capability[1]}")


def check_specialized(device: str):
    """The warp-specialized GEMM against float64 (fp16 output), on an sm_120 device."""
    on_sm_120(device)
    args = operands(device)
    gemm_kernel[(M // BM, N // BN)](**args, **SIZES, WARP_SPECIALIZE=True, num_stages=3)
    a, b = (args[k].cpu().double().numpy() for k in ("a_ptr", "b_ptr"))
    return args["c_ptr"].cpu().double().numpy(), a @ b
