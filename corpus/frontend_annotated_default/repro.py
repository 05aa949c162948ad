"""frontend_annotated_default: a kernel parameter with both an annotation and a default value
(`alpha: float = 1.0`) stops the code generator (triton-lang/triton#4412).

The frontend binds a defaulted parameter by generating an assignment of its default; with an
annotation that statement is an `ast.AnnAssign`, which the code generator then read as an
`ast.Assign` (`.targets`), raising `AttributeError: 'AnnAssign' object has no attribute 'targets'`
whatever the value passed. The same kernel without the annotation (`scaled_add_plain_kernel`)
compiles in every release; 3.2.0 handles both.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

SIZE = 128


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, alpha: float = 1.0, BLOCK: tl.constexpr = 128):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, alpha * tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))


@triton.jit
def scaled_add_plain_kernel(x_ptr, y_ptr, out_ptr, alpha=1.0, BLOCK: tl.constexpr = 128):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, alpha * tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(SIZE, generator=gen), torch.randn(SIZE, generator=gen)
    return {"x_ptr": x.to(device), "y_ptr": y.to(device), "out_ptr": torch.empty(SIZE, device=device),
            "alpha": 0.5, "BLOCK": SIZE}  # fmt: skip


scaled_add = TritonKernel(scaled_add_kernel, args=operands)
scaled_add_plain = TritonKernel(scaled_add_plain_kernel, args=operands)


def check_scaled_add(device: str):
    args = operands(device)
    scaled_add_kernel[(1,)](**args)
    x, y = args["x_ptr"].cpu().double().numpy(), args["y_ptr"].cpu().double().numpy()
    return args["out_ptr"].cpu().double().numpy(), np.float64(0.5) * x + y
