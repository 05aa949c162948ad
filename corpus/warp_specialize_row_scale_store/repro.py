"""warp_specialize_row_scale_store: a warp-specialized loop that stores a per-row reduction fails
the partition verifier on Blackwell (triton-lang/triton#10901).

Per-block fp8 quantization, as an RMS-norm + quantize epilogue does it: a program owns 64 rows of a
bf16 activation and walks its 1024 columns 128 at a time with `tl.range(..., warp_specialize=True)`;
each step takes the absolute maximum of every row of the block, stores the scale `amax / 448` (one
float per row and block) and the block divided by it as float8e4nv. The per-row scale lives in a
slice of the block's layout and the store wants it in a layout of its own, so the loop carries a
`ttg.convert_layout`. In 3.7.0 and 3.7.1 automatic warp specialization (sm_100, sm_103, sm_120)
left that conversion without a `ttg.partition` attribute, and TritonGPURemoveLayoutConversions
stopped on "'ttg.convert_layout' op does not have expected attribute ttg.partition which is expected
for ops whose parent has partitions" (PassManager::run failed). The same loop without the scale
store (`block_quant_no_scale_store`) compiles in every release; 3.6.0 and 3.8.0 compile both.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel, Unsupported

M, N = 256, 1024
BM, BN = 64, 128
E4M3_MAX = 448.0


@triton.jit
def block_quant_kernel(x_ptr, s_ptr, q_ptr, N, BM: tl.constexpr, BN: tl.constexpr,
                       STORE_SCALE: tl.constexpr):  # fmt: skip
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    for j in tl.range(0, N, BN, warp_specialize=True):
        cols = j + tl.arange(0, BN)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :]).to(tl.float32)
        scale = tl.max(tl.abs(x), axis=1) / 448.0
        if STORE_SCALE:
            tl.store(s_ptr + rows * (N // BN) + j // BN, scale)
        q = (x / scale[:, None]).to(tl.float8e4nv)
        tl.store(q_ptr + rows[:, None] * N + cols[None, :], q)


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    tensors = {
        "x_ptr": torch.randn(M, N, generator=gen).to(torch.bfloat16),
        "s_ptr": torch.zeros(M, N // BN),
        "q_ptr": torch.zeros(M, N, dtype=torch.float8_e4m3fn),
    }
    return {k: v.to(device) for k, v in tensors.items()}


def kernel(store_scale: bool) -> TritonKernel:
    def args() -> dict:
        return {**operands(), "N": N, "BM": BM, "BN": BN, "STORE_SCALE": store_scale}

    return TritonKernel(block_quant_kernel, args=args, configs=[{"num_warps": 4}])


block_quant = kernel(True)
block_quant_no_scale_store = kernel(False)


def check_block_quant(device: str):
    """The scales against float64 `amax / 448` per row and block, and the dequantized blocks (fp8
    value times its scale) against the input, within e4m3's rounding (3 mantissa bits), on a
    Blackwell device. Hopper does not specialize this loop, so it says nothing of the bug."""
    capability = torch.cuda.get_device_capability(device)
    if capability[0] not in (10, 12):
        here = f"sm_{capability[0]}{capability[1]}"
        raise Unsupported(f"the bug is in Blackwell's automatic warp specialization; this device is {here}")
    args = operands(device)
    block_quant_kernel[(M // BM,)](**args, N=N, BM=BM, BN=BN, STORE_SCALE=True, num_warps=4)
    x = args["x_ptr"].cpu().double()
    scales = args["s_ptr"].cpu().double()
    dequant = args["q_ptr"].cpu().double() * scales.repeat_interleave(BN, 1)
    amax = x.abs().reshape(M, N // BN, BN).amax(2)
    return {"scales": scales.numpy(), "values": dequant.numpy()}, {
        "scales": (amax / E4M3_MAX).numpy(),
        "values": x.numpy(),
    }
