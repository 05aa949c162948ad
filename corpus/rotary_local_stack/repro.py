"""rotary_local_stack: tl.sin and tl.cos keep a local-memory stack frame (triton-lang/triton#1756).

A rotary embedding turns each pair (x, y) by an angle: x cos(a) - y sin(a), x sin(a) + y cos(a).
libdevice's sin and cos reduce a large argument with a Payne-Hanek table kept in a local array, so
ptxas gives every thread a stack frame in local memory (32 bytes per thread on sm_80 and sm_90 up
to triton 3.8.0), and tools that read spills and stack from ptxas (Inductor's autotuner among
them) see a kernel that goes to local memory although nothing spills.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

PAIRS, BLOCK = 4096, 1024


@triton.jit
def rotate_kernel(x_ptr, y_ptr, angle_ptr, out_x_ptr, out_y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    angle = tl.load(angle_ptr + offsets, mask=mask)
    c, s = tl.cos(angle), tl.sin(angle)
    tl.store(out_x_ptr + offsets, x * c - y * s, mask=mask)
    tl.store(out_y_ptr + offsets, x * s + y * c, mask=mask)


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(PAIRS, generator=gen), torch.randn(PAIRS, generator=gen)
    angle = torch.rand(PAIRS, generator=gen) * 2000.0 - 1000.0  # large angles: the slow reduction
    tensors = {"x_ptr": x, "y_ptr": y, "angle_ptr": angle, "out_x_ptr": torch.empty(PAIRS),
               "out_y_ptr": torch.empty(PAIRS)}  # fmt: skip
    return {k: v.to(device) for k, v in tensors.items()}


rotate = TritonKernel(rotate_kernel, args=lambda: {**operands(), "n": PAIRS, "BLOCK": BLOCK},
                      configs=[{"num_warps": 4}])  # fmt: skip


def check_rotate(device: str):
    args = operands(device)
    rotate_kernel[(triton.cdiv(PAIRS, BLOCK),)](**args, n=PAIRS, BLOCK=BLOCK)
    x, y, a = (args[k].cpu().double().numpy() for k in ("x_ptr", "y_ptr", "angle_ptr"))
    actual = {"x": args["out_x_ptr"].cpu().double().numpy(), "y": args["out_y_ptr"].cpu().double().numpy()}
    return actual, {"x": x * np.cos(a) - y * np.sin(a), "y": x * np.sin(a) + y * np.cos(a)}
