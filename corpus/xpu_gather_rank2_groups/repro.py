"""xpu_gather_rank2_groups: on Intel GPUs, a rank-2 `tl.gather` that expands 4 rows of group
parameters to 1024 rows fails the shared gather layout pass (triton-lang/triton#10838, as shipped
in triton-xpu).

Per-group scale and shift (4 groups x 8 channels) expanded to 1024 tokens by their group ids, as
a grouped normalization does. triton-xpu 3.3.0b1 carries the gather layout pass that assumed the
index no longer than the source along the gather axis, so compilation stops ("PassManager::run
failed") for PVC and DG2. Gathering as many rows as there are groups (`per_group`) compiles.
Upstream triton fixed rank 2 and above in 3.9.0.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

GROUPS, CHANNELS = 4, 8


@triton.jit
def expand_groups_kernel(param_ptr, group_ptr, out_ptr, GROUPS: tl.constexpr, TOKENS: tl.constexpr,
                         CHANNELS: tl.constexpr):  # fmt: skip
    channels = tl.arange(0, CHANNELS)[None, :]
    params = tl.load(param_ptr + tl.arange(0, GROUPS)[:, None] * CHANNELS + channels)
    rows = tl.arange(0, TOKENS)[:, None] * CHANNELS + channels
    tl.store(out_ptr + rows, tl.gather(params, tl.load(group_ptr + rows), 0))


def operands(tokens: int, device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(2)
    group = torch.randint(0, GROUPS, (tokens, 1), generator=gen, dtype=torch.int32).expand(tokens, CHANNELS)
    tensors = {"param_ptr": torch.arange(GROUPS * CHANNELS, dtype=torch.float32) / 4,
               "group_ptr": group.contiguous(), "out_ptr": torch.zeros(tokens, CHANNELS)}  # fmt: skip
    return {k: v.to(device) for k, v in tensors.items()}


def kernel(tokens: int) -> TritonKernel:
    def args() -> dict:
        return {**operands(tokens), "GROUPS": GROUPS, "TOKENS": tokens, "CHANNELS": CHANNELS}

    return TritonKernel(expand_groups_kernel, args=args)


expand = kernel(1024)
per_group = kernel(GROUPS)


def check_expand(device: str):
    args = operands(1024, device)
    expand_groups_kernel[(1,)](**args, GROUPS=GROUPS, TOKENS=1024, CHANNELS=CHANNELS)
    params = args["param_ptr"].cpu().double().numpy().reshape(GROUPS, CHANNELS)
    group = args["group_ptr"].cpu().numpy()
    return args["out_ptr"].cpu().double().numpy(), np.take_along_axis(params, group, 0)
