"""dot_scaled_mxfp4_mn_packed_sm120: an mxfp4 x mxfp4 `tl.dot_scaled` whose right operand is packed
along N trips an MMA assertion on sm_120 (triton-lang/triton#9678).

A 128x128x128 block-scaled fp4 product: both operands hold two e2m1 values a byte with one e8m0
scale per 32 values along K. The left operand is packed along K (`[M, K/2]`), the right one along
N (`[K, N/2]`, `rhs_k_pack=False`), as a weight stored for the transposed product is. From 3.6.0
the consumer-Blackwell path lowers every mxfp4 x mxfp4 dot to the native block-scaled
`mma.sync ... kind::mxf4nvf4`, which needs both operands packed along K: for the N-packed operand
the lowering counted half the K repetitions of the left one and the LLVM conversion stopped on
`Assertion 'repA[2] == repB[1]' failed` in MMAv2.cpp. 3.9.0 sends the N-packed case to the
decomposition path (upcast to bf16, then a bf16 MMA). The same product with both operands packed
along K (`k_packed`) compiles in every release on sm_120, and `mn_packed` compiles on sm_100,
whose tcgen05 lowering takes the N-packed operand.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel, Unsupported

BM = BN = BK = 128
GROUP = 32  # values per e8m0 scale along K


@triton.jit
def mxfp4_dot_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr,
                     BK: tl.constexpr, RHS_K_PACK: tl.constexpr):  # fmt: skip
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    groups = tl.arange(0, BK // 32)
    a = tl.load(a_ptr + rows[:, None] * (BK // 2) + tl.arange(0, BK // 2)[None, :])
    if RHS_K_PACK:
        b = tl.load(b_ptr + tl.arange(0, BK // 2)[:, None] * BN + cols[None, :])
    else:
        b = tl.load(b_ptr + tl.arange(0, BK)[:, None] * (BN // 2) + tl.arange(0, BN // 2)[None, :])
    sa = tl.load(sa_ptr + rows[:, None] * (BK // 32) + groups[None, :])
    sb = tl.load(sb_ptr + cols[:, None] * (BK // 32) + groups[None, :])
    c = tl.dot_scaled(a, sa, "e2m1", b, sb, "e2m1", rhs_k_pack=RHS_K_PACK)
    tl.store(c_ptr + rows[:, None] * BN + cols[None, :], c)


E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def e2m1_values(packed: np.ndarray, axis: int) -> np.ndarray:
    """Two e2m1 values a byte, the low nibble first along `axis`, as float64."""
    nibbles = np.stack([packed & 0xF, packed >> 4], axis=axis + 1)
    shape = list(packed.shape)
    shape[axis] *= 2
    nibbles = nibbles.reshape(shape)
    return np.where(nibbles & 0x8, -1.0, 1.0) * E2M1[nibbles & 0x7]


def scales(e8m0: np.ndarray) -> np.ndarray:
    """Each e8m0 byte as 2^(byte - 127), repeated over the 32 values along K it scales."""
    return np.repeat(2.0 ** (e8m0.astype(np.float64) - 127), GROUP, 1)


def operands(rhs_k_pack: bool, device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    b_shape = (BK // 2, BN) if rhs_k_pack else (BK, BN // 2)
    tensors = {
        "a_ptr": torch.randint(0, 256, (BM, BK // 2), generator=gen, dtype=torch.uint8),
        "sa_ptr": torch.randint(124, 130, (BM, BK // GROUP), generator=gen, dtype=torch.uint8),
        "b_ptr": torch.randint(0, 256, b_shape, generator=gen, dtype=torch.uint8),
        "sb_ptr": torch.randint(124, 130, (BN, BK // GROUP), generator=gen, dtype=torch.uint8),
        "c_ptr": torch.empty(BM, BN),
    }
    return {k: v.to(device) for k, v in tensors.items()}


def kernel(rhs_k_pack: bool) -> TritonKernel:
    def args() -> dict:
        return {**operands(rhs_k_pack), "BM": BM, "BN": BN, "BK": BK, "RHS_K_PACK": rhs_k_pack}

    return TritonKernel(mxfp4_dot_kernel, args=args, configs=[{"num_warps": 4}])


mn_packed = kernel(False)
k_packed = kernel(True)


def on_sm_120(device: str) -> None:
    """The bug is in the sm_120 lowering: another GPU takes another path for an N-packed mxfp4 dot (on an H100
    under 3.6.0 it stops in make_llir, not on the MMAv2 assertion), so it says nothing of this one."""
    capability = torch.cuda.get_device_capability(device)
    if capability != (12, 0):
        raise Unsupported(f"the bug is sm_120's; this device is sm_{capability[0]}{capability[1]}")


def check_mn_packed(device: str):
    """The N-packed product against float64: fp4 values times 2^(scale - 127), summed over K, on an
    sm_120 device."""
    on_sm_120(device)
    args = operands(False, device)
    mxfp4_dot_kernel[(1,)](**args, BM=BM, BN=BN, BK=BK, RHS_K_PACK=False)
    host = {k: v.cpu().numpy() for k, v in args.items()}
    a = e2m1_values(host["a_ptr"], 1) * scales(host["sa_ptr"])
    b = e2m1_values(host["b_ptr"], 1) * scales(host["sb_ptr"]).T
    return args["c_ptr"].cpu().double().numpy(), a @ b
