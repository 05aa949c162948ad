"""dot_scaled_bf16_fp4_mn_packed: a `tl.dot_scaled` of an unscaled bf16 left operand and an mxfp4
right operand packed along N fails the AccelerateMatmul pass on Blackwell
(triton-lang/triton#11613).

Activations in bf16 times an fp4 weight stored two values a byte along N (`[K, N/2]`,
`rhs_k_pack=False`), with one e8m0 scale per 32 values along K. On sm_100 and sm_120 the pass
rewrites a dot whose only scaled operand is the right one as the transposed product (scaled
operand on the left), and the rewrite dropped the `lhs_k_pack`/`rhs_k_pack` flags, so the swapped
fp4 operand was taken as packed along K: the rewritten IR had mismatched shapes ("'ttg.convert_layout'
op requires the same shape for all operands and results" up to 3.7.1, "scale factor must be 16 or
32. Got 64" in 3.8.0), "PassManager::run failed" in `TritonGPUAccelerateMatmul`. 3.9.0 forwards
the flags. The same product with the fp4 operand packed along K (`k_packed`) compiles in every
release.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

BM = BN = BK = 128
GROUP = 32  # values per e8m0 scale along K


@triton.jit
def bf16_fp4_dot_kernel(a_ptr, b_ptr, sb_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr,
                        BK: tl.constexpr, RHS_K_PACK: tl.constexpr):  # fmt: skip
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    a = tl.load(a_ptr + rows[:, None] * BK + tl.arange(0, BK)[None, :])
    if RHS_K_PACK:
        b = tl.load(b_ptr + tl.arange(0, BK // 2)[:, None] * BN + cols[None, :])
    else:
        b = tl.load(b_ptr + tl.arange(0, BK)[:, None] * (BN // 2) + tl.arange(0, BN // 2)[None, :])
    sb = tl.load(sb_ptr + cols[:, None] * (BK // 32) + tl.arange(0, BK // 32)[None, :])
    c = tl.dot_scaled(a, None, "bf16", b, sb, "e2m1", rhs_k_pack=RHS_K_PACK)
    tl.store(c_ptr + rows[:, None] * BN + cols[None, :], c)


E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def e2m1_values(packed: np.ndarray, axis: int) -> np.ndarray:
    """Two e2m1 values a byte, the low nibble first along `axis`, as float64."""
    nibbles = np.stack([packed & 0xF, packed >> 4], axis=axis + 1)
    shape = list(packed.shape)
    shape[axis] *= 2
    nibbles = nibbles.reshape(shape)
    return np.where(nibbles & 0x8, -1.0, 1.0) * E2M1[nibbles & 0x7]


def operands(rhs_k_pack: bool, device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    b_shape = (BK // 2, BN) if rhs_k_pack else (BK, BN // 2)
    tensors = {
        "a_ptr": torch.randn(BM, BK, generator=gen).bfloat16(),
        "b_ptr": torch.randint(0, 256, b_shape, generator=gen, dtype=torch.uint8),
        "sb_ptr": torch.randint(124, 130, (BN, BK // GROUP), generator=gen, dtype=torch.uint8),
        "c_ptr": torch.empty(BM, BN),
    }
    return {k: v.to(device) for k, v in tensors.items()}


def kernel(rhs_k_pack: bool) -> TritonKernel:
    def args() -> dict:
        return {**operands(rhs_k_pack), "BM": BM, "BN": BN, "BK": BK, "RHS_K_PACK": rhs_k_pack}

    return TritonKernel(bf16_fp4_dot_kernel, args=args, configs=[{"num_warps": 4}])


mn_packed = kernel(False)
k_packed = kernel(True)


def check_mn_packed(device: str):
    """The N-packed product against float64: bf16 values times fp4 values times 2^(scale - 127)."""
    args = operands(False, device)
    bf16_fp4_dot_kernel[(1,)](**args, BM=BM, BN=BN, BK=BK, RHS_K_PACK=False)
    a = args["a_ptr"].cpu().double().numpy()
    scales = np.repeat(2.0 ** (args["sb_ptr"].cpu().numpy().astype(np.float64) - 127), GROUP, 1)
    b = e2m1_values(args["b_ptr"].cpu().numpy(), 1) * scales.T
    return args["c_ptr"].cpu().double().numpy(), a @ b
