"""dot_scaled_e8m0_min_scale: an E8M0 scale byte of 0 is decoded as zero instead of 2^-127
(triton-lang/triton#11624).

E8M0, the block-scale type of the OCP microscaling formats, has no zero: byte 0 stands for 2^-127
(and 255 for NaN). The software path of `tl.dot_scaled` built each scale by shifting the byte into
the exponent field of a float (`byte << 23` for fp32, `byte << 7` for bf16), which turns byte 0
into +0.0, so every block quantized with the smallest scale vanished from the product (2^-127 is
subnormal in bf16 and fp32, so the shift can never produce it). 3.9.0 decodes byte 0 as that
subnormal wherever the scale is applied in bf16, in the decomposition of scaled dots and in the
interpreter.

Two block-scaled e4m3 operands, the left one with every scale byte 0 (2^-127), the right one with
every scale byte 254 (2^127): the exact product is the plain product of the fp8 values, whereas the
buggy decoding makes it all zeros. The interpreter computes it (`check_min_scale`). The same
decoding is visible ahead of time in the compiled decomposition of a bf16 x mxfp4 scaled dot
(`bf16_fp4`): the fixed release raises every shifted scale to at least 0x0040 (an unsigned max),
on sm_100, sm_103, sm_120 and gfx950 alike.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel, Unsupported

BM = BN = BK = 64
GROUP = 32  # values per e8m0 scale along K
MIN_SCALE, MAX_SCALE = 0, 254  # 2^-127 and 2^127


@triton.jit
def mxfp8_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    depth = tl.arange(0, BK)
    groups = tl.arange(0, BK // 32)
    a = tl.load(a_ptr + rows[:, None] * BK + depth[None, :])
    b = tl.load(b_ptr + depth[:, None] * BN + cols[None, :])
    sa = tl.load(sa_ptr + rows[:, None] * (BK // 32) + groups[None, :])
    sb = tl.load(sb_ptr + cols[:, None] * (BK // 32) + groups[None, :])
    c = tl.dot_scaled(a, sa, "e4m3", b, sb, "e4m3")
    tl.store(c_ptr + rows[:, None] * BN + cols[None, :], c)


@triton.jit
def bf16_fp4_kernel(a_ptr, b_ptr, sb_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    a = tl.load(a_ptr + rows[:, None] * BK + tl.arange(0, BK)[None, :])
    b = tl.load(b_ptr + tl.arange(0, BK // 2)[:, None] * BN + cols[None, :])
    sb = tl.load(sb_ptr + cols[:, None] * (BK // 32) + tl.arange(0, BK // 32)[None, :])
    c = tl.dot_scaled(a, None, "bf16", b, sb, "e2m1")
    tl.store(c_ptr + rows[:, None] * BN + cols[None, :], c)


FP8_VALUES = torch.tensor([0.125, 0.25, 0.375, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75], dtype=torch.float64)


def e4m3_operand(shape: tuple, gen: torch.Generator) -> torch.Tensor:
    """e4m3 values of magnitude 1/8 to 7/4, either sign: 2^127 times any of them stays finite."""
    magnitude = FP8_VALUES[torch.randint(0, len(FP8_VALUES), shape, generator=gen)]
    sign = torch.where(torch.rand(shape, generator=gen) < 0.5, -1.0, 1.0).double()
    return (sign * magnitude).to(torch.float8_e4m3fn)


def mxfp8_operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    tensors = {
        "a_ptr": e4m3_operand((BM, BK), gen),
        "sa_ptr": torch.full((BM, BK // GROUP), MIN_SCALE, dtype=torch.uint8),
        "b_ptr": e4m3_operand((BK, BN), gen),
        "sb_ptr": torch.full((BN, BK // GROUP), MAX_SCALE, dtype=torch.uint8),
        "c_ptr": torch.empty(BM, BN),
    }
    return {k: v.to(device) for k, v in tensors.items()}


def bf16_fp4_args() -> dict:
    gen = torch.Generator().manual_seed(0)
    return {
        "a_ptr": torch.randn(BM, BK, generator=gen).bfloat16(),
        "b_ptr": torch.randint(0, 256, (BK // 2, BN), generator=gen, dtype=torch.uint8),
        "sb_ptr": torch.randint(0, 4, (BN, BK // GROUP), generator=gen, dtype=torch.uint8),
        "c_ptr": torch.empty(BM, BN),
        "BM": BM,
        "BN": BN,
        "BK": BK,
    }


bf16_fp4 = TritonKernel(bf16_fp4_kernel, args=bf16_fp4_args, configs=[{"num_warps": 4}])


def check_min_scale(device: str):
    """The product of the two block-scaled e4m3 operands, scales 2^-127 and 2^127, against float64."""
    if device == "cpu":
        from triton.runtime import interpreter

        if not hasattr(interpreter.InterpreterBuilder, "create_dot_scaled"):
            why = f"the interpreter of triton {triton.__version__} has no tl.dot_scaled (3.8.0 added it)"
            raise Unsupported(why)
    args = mxfp8_operands(device)
    mxfp8_kernel[(1,)](**args, BM=BM, BN=BN, BK=BK)
    a, b = (args[k].cpu().double().numpy() for k in ("a_ptr", "b_ptr"))
    return args["c_ptr"].cpu().double().numpy(), a @ b
