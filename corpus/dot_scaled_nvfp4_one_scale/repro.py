"""dot_scaled_nvfp4_one_scale: an NVFP4 `tl.dot_scaled` (fp4 operands, float8e4nv scales over 16
values) with a scale on one operand only asserts in AccelerateMatmul on Blackwell
(triton-lang/triton#7549).

A 128x128x128 fp4 x fp4 product, two e2m1 values a byte packed along K, as a weight-only scaled
GEMM has it: the weight carries one e4m3 scale per 16 values along K and the other operand none.
To lower the dot to the block-scaled MMA (tcgen05 on sm_100, `mma.sync ... kind::mxf4nvf4` on
sm_120) the compiler makes a unit scale for the unscaled operand, of the other scale's type. Up to
3.7.1 it built that constant from an integer (`DenseElementsAttr::get` with an `APInt`) although
the NVFP4 scale type is float8e4nv, and the pass stopped on "Assertion
'type.getElementType().isIntOrIndex()' failed" (PassManager::run failed), whichever operand was
the scaled one. The same product with a scale on both operands (`both_scales`) compiles on sm_100
in every release, and mxfp4 (e8m0 scales, stored as uint8) with one scale compiles too: only a
float scale type meets the integer constant. 3.8.0 compiles the one-sided products.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel, Unsupported

BM = BN = BK = 128
GROUP = 16  # values per e4m3 scale along K (NVFP4)


@triton.jit
def nvfp4_dot_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr,
                     BK: tl.constexpr, SCALE_A: tl.constexpr, SCALE_B: tl.constexpr):  # fmt: skip
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    groups = tl.arange(0, BK // 16)
    a = tl.load(a_ptr + rows[:, None] * (BK // 2) + tl.arange(0, BK // 2)[None, :])
    b = tl.load(b_ptr + tl.arange(0, BK // 2)[:, None] * BN + cols[None, :])
    sa = None
    sb = None
    if SCALE_A:
        sa = tl.load(sa_ptr + rows[:, None] * (BK // 16) + groups[None, :])
    if SCALE_B:
        sb = tl.load(sb_ptr + cols[:, None] * (BK // 16) + groups[None, :])
    c = tl.dot_scaled(a, sa, "e2m1", b, sb, "e2m1")
    tl.store(c_ptr + rows[:, None] * BN + cols[None, :], c)


E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
E4M3_SCALES = torch.tensor([0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0])  # exact in e4m3


def e2m1_values(packed: np.ndarray, axis: int) -> np.ndarray:
    """Two e2m1 values a byte, the low nibble first along `axis`, as float64."""
    nibbles = np.stack([packed & 0xF, packed >> 4], axis=axis + 1)
    shape = list(packed.shape)
    shape[axis] *= 2
    nibbles = nibbles.reshape(shape)
    return np.where(nibbles & 0x8, -1.0, 1.0) * E2M1[nibbles & 0x7]


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)

    def scales(rows: int) -> torch.Tensor:
        pick = torch.randint(0, len(E4M3_SCALES), (rows, BK // GROUP), generator=gen)
        return E4M3_SCALES[pick].to(torch.float8_e4m3fn)

    tensors = {
        "a_ptr": torch.randint(0, 256, (BM, BK // 2), generator=gen, dtype=torch.uint8),
        "sa_ptr": scales(BM),
        "b_ptr": torch.randint(0, 256, (BK // 2, BN), generator=gen, dtype=torch.uint8),
        "sb_ptr": scales(BN),
        "c_ptr": torch.empty(BM, BN),
    }
    return {k: v.to(device) for k, v in tensors.items()}


def kernel(scale_a: bool, scale_b: bool) -> TritonKernel:
    def args() -> dict:
        return {**operands(), "BM": BM, "BN": BN, "BK": BK, "SCALE_A": scale_a, "SCALE_B": scale_b}

    return TritonKernel(nvfp4_dot_kernel, args=args, configs=[{"num_warps": 4}])


rhs_scale_only = kernel(False, True)
lhs_scale_only = kernel(True, False)
both_scales = kernel(True, True)


def check_rhs_scale_only(device: str):
    """The product with e4m3 scales on the right operand only, against float64: fp4 values, the
    right ones times their scale, summed over K, on a Blackwell device (sm_100/sm_103/sm_120).
    Hopper and older have no NVFP4 product before 3.8.0, a failure that says nothing of this bug."""
    capability = torch.cuda.get_device_capability(device)
    if capability[0] not in (10, 12):
        here = f"sm_{capability[0]}{capability[1]}"
        raise Unsupported(f"the bug is in the Blackwell block-scaled lowering; this device is {here}")
    args = operands(device)
    nvfp4_dot_kernel[(1,)](**args, BM=BM, BN=BN, BK=BK, SCALE_A=False, SCALE_B=True)
    host = {k: v.cpu() for k, v in args.items()}
    a = e2m1_values(host["a_ptr"].numpy(), 1)
    sb = np.repeat(host["sb_ptr"].double().numpy(), GROUP, 1)
    b = e2m1_values(host["b_ptr"].numpy(), 0) * sb.T
    return args["c_ptr"].cpu().double().numpy(), a @ b
