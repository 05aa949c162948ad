"""dot_scaled_batched_sm120: a batched (rank-3) mxfp8 `tl.dot_scaled` fails a layout assertion on
sm_120 (triton-lang/triton#11733, fixed by triton-lang/triton#11262).

Two independent 64x64x128 block-scaled e4m3 products in one program, as a grouped expert GEMM
does: operands `[2, 64, 128]` and `[2, 128, 64]` with e8m0 scales `[2, 64, 4]`, one byte per 32
values along K. The consumer-Blackwell path lowers mxfp8 dots to the native block-scaled
`mma.sync ... kind::mxf8f6f4`, and built the layout of the scale operands for rank 2 only: a batch
dimension made the CTA layout one dimension short, and the compile stopped on
"combineCtaCgaWithShape: Assertion 'ctaLayout.getNumOutDims() == rank' failed" (PassManager::run
failed). 3.9.0 keeps the batch dimension in the scale layout. sm_100 lowers the same batched dot
through its decomposition and compiles it in every release that takes it.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

B, BM, BN, BK = 2, 64, 64, 128
GROUP = 32  # values per e8m0 scale along K


@triton.jit
def batched_mxfp8_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, B: tl.constexpr, BM: tl.constexpr,
                         BN: tl.constexpr, BK: tl.constexpr):  # fmt: skip
    batch = tl.arange(0, B)[:, None, None]
    rows = tl.arange(0, BM)[None, :, None]
    cols = tl.arange(0, BN)[None, None, :]
    depth = tl.arange(0, BK)
    groups = tl.arange(0, BK // 32)[None, None, :]
    a = tl.load(a_ptr + batch * BM * BK + rows * BK + depth[None, None, :])
    b = tl.load(b_ptr + batch * BK * BN + depth[None, :, None] * BN + cols)
    sa = tl.load(sa_ptr + batch * BM * (BK // 32) + rows * (BK // 32) + groups)
    sb = tl.load(sb_ptr + batch * BN * (BK // 32) + tl.arange(0, BN)[None, :, None] * (BK // 32) + groups)
    c = tl.dot_scaled(a, sa, "e4m3", b, sb, "e4m3")
    tl.store(c_ptr + batch * BM * BN + rows * BN + cols, c)


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    tensors = {
        "a_ptr": torch.randn(B, BM, BK, generator=gen).to(torch.float8_e4m3fn),
        "sa_ptr": torch.randint(124, 130, (B, BM, BK // GROUP), generator=gen, dtype=torch.uint8),
        "b_ptr": torch.randn(B, BK, BN, generator=gen).to(torch.float8_e4m3fn),
        "sb_ptr": torch.randint(124, 130, (B, BN, BK // GROUP), generator=gen, dtype=torch.uint8),
        "c_ptr": torch.empty(B, BM, BN),
    }
    return {k: v.to(device) for k, v in tensors.items()}


batched = TritonKernel(
    batched_mxfp8_kernel,
    args=lambda: {**operands(), "B": B, "BM": BM, "BN": BN, "BK": BK},
    configs=[{"num_warps": 4}],
)


def scales(e8m0: torch.Tensor) -> np.ndarray:
    """Each e8m0 byte as 2^(byte - 127), repeated over the 32 values along K it scales."""
    return np.repeat(2.0 ** (e8m0.cpu().numpy().astype(np.float64) - 127), GROUP, 2)


def check_batched(device: str):
    """Each batch's scaled product against float64."""
    args = operands(device)
    batched_mxfp8_kernel[(1,)](**args, B=B, BM=BM, BN=BN, BK=BK)
    a = args["a_ptr"].cpu().double().numpy() * scales(args["sa_ptr"])
    b = args["b_ptr"].cpu().double().numpy() * scales(args["sb_ptr"]).transpose(0, 2, 1)
    return args["c_ptr"].cpu().double().numpy(), a @ b
