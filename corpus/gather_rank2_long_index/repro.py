"""gather_rank2_long_index: a rank-2 `tl.gather` along axis 0 whose index is much longer than its
source fails the gather layout assertion (triton-lang/triton#10838).

Expanding 4 rows of per-group parameters (4 groups x 4 channels) to 4096 tokens by each token's
group id: `tl.gather(params, group_ids, 0)`. The fix for rank-1 gathers (the case
gather_small_codebook) left rank 2 and above to the same assumption, that the index is no longer
than the source along the axis, so the warp-local layout assertion failed ("PassManager::run
failed") on sm_90 and gfx942. Gathering as many rows as the source has (`per_row`) compiles.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

GROUPS, CHANNELS, TOKENS = 4, 4, 4096


@triton.jit
def expand_kernel(param_ptr, group_ptr, out_ptr, GROUPS: tl.constexpr, TOKENS: tl.constexpr,
                  CHANNELS: tl.constexpr):  # fmt: skip
    channels = tl.arange(0, CHANNELS)[None, :]
    params = tl.load(param_ptr + tl.arange(0, GROUPS)[:, None] * CHANNELS + channels)
    rows = tl.arange(0, TOKENS)[:, None] * CHANNELS + channels
    group_ids = tl.load(group_ptr + rows)
    tl.store(out_ptr + rows, tl.gather(params, group_ids, 0))


def operands(tokens: int, device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    group = torch.randint(0, GROUPS, (tokens, 1), generator=gen, dtype=torch.int32).expand(tokens, CHANNELS)
    tensors = {"param_ptr": torch.arange(GROUPS * CHANNELS, dtype=torch.float32) / 8,
               "group_ptr": group.contiguous(), "out_ptr": torch.zeros(tokens, CHANNELS)}  # fmt: skip
    return {k: v.to(device) for k, v in tensors.items()}


def kernel(tokens: int) -> TritonKernel:
    def args() -> dict:
        return {**operands(tokens), "GROUPS": GROUPS, "TOKENS": tokens, "CHANNELS": CHANNELS}

    return TritonKernel(expand_kernel, args=args, configs=[{"num_warps": 4}])


expand = kernel(TOKENS)
per_row = kernel(GROUPS)


def check_expand(device: str):
    args = operands(TOKENS, device)
    expand_kernel[(1,)](**args, GROUPS=GROUPS, TOKENS=TOKENS, CHANNELS=CHANNELS)
    params = args["param_ptr"].cpu().double().numpy().reshape(GROUPS, CHANNELS)
    group = args["group_ptr"].cpu().numpy()
    return args["out_ptr"].cpu().double().numpy(), np.take_along_axis(params, group, 0)
