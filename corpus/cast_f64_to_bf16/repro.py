"""cast_f64_to_bf16: `x.to(tl.bfloat16)` of a float64 tensor aborts the NVIDIA lowering
(fixed by triton-lang/triton#5732).

Rows normalised in float64 (each value over its row's sum) and written out as bfloat16, as a
mixed-precision reference kernel does when it hands its result to a bf16 model. The cast is one
`arith.truncf` from f64 to bf16. Up to 3.2.0 the NVIDIA backend lowered every truncf to bf16
through its own pattern, which handled only an f32 source: `assert(inElemTy.isF32() &&
"unsupported conversion")` aborted the compiling process on sm_80 and sm_90 (a release build
without assertions got no further). From 3.3.0, when the NVIDIA backend switched to native bf16
ops and lowered truncf straight to LLVM's fptrunc, the cast compiles. Going through float32 first
(`via_f32`) compiles in every release, so a FAIL of `direct` is the f64 source.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

ROWS, COLS = 16, 64


@triton.jit
def normalize_rows_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr, VIA_F32: tl.constexpr):
    offsets = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    x = tl.load(x_ptr + offsets)
    y = x / tl.sum(x, 1)[:, None]
    if VIA_F32:
        y = y.to(tl.float32)
    tl.store(out_ptr + offsets, y.to(tl.bfloat16))


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(ROWS, COLS, generator=gen, dtype=torch.float64) + 0.5
    return {"x_ptr": x.to(device), "out_ptr": torch.empty(ROWS, COLS, dtype=torch.bfloat16, device=device)}


def kernel(via_f32: bool) -> TritonKernel:
    def args() -> dict:
        return {**operands(), "ROWS": ROWS, "COLS": COLS, "VIA_F32": via_f32}

    return TritonKernel(normalize_rows_kernel, args=args, configs=[{"num_warps": 4}])


direct = kernel(False)
via_f32 = kernel(True)


def check_normalized(device: str):
    args = operands(device)
    normalize_rows_kernel[(1,)](**args, ROWS=ROWS, COLS=COLS, VIA_F32=False)
    x = args["x_ptr"].cpu().numpy()
    return args["out_ptr"].cpu().double().numpy(), x / x.sum(1, keepdims=True)
