"""layernorm_bwd_spills: a layer-norm backward over 8192-wide rows spills kilobytes on sm_80 from
Triton 3.4 (triton-lang/triton#7449, Liger-Kernel#801).

One program per group of rows: each row's dx is computed and stored, and dweight and dbias are
accumulated across the rows in two fp32 vectors of the block's width, stored at the end (the
shape of Liger's and Triton's tutorial backward for hidden sizes 4096 < N <= 8192). With 4 warps
the block is 64 values a thread for each of x, dy, w and the two accumulators, so ptxas spills
some under every release (about 650 bytes up to 3.3). LLVM's NVPTX backend stopped typing float
registers (llvm/llvm-project#140487, in Triton from 3.4); the PTX is the same modulo register
types and names, but ptxas no longer keeps the values out of local memory: 3.4.0 spills 4364
bytes in fp32, 3.5.x 5016 in bf16, and 3.6 to 3.9 3680 to 4352 in fp32. The release-branch revert
(#7449) was never merged.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

BLOCK = 8192  # the next power of two above the hidden sizes of the report (4096 < N <= 8192)


@triton.jit
def layer_norm_bwd_kernel(x_ptr, w_ptr, dy_ptr, mean_ptr, rstd_ptr, dx_ptr, dw_ptr, db_ptr, rows, cols,
                          rows_per_program, BLOCK: tl.constexpr):  # fmt: skip
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK], dtype=tl.float32)
    db = tl.zeros([BLOCK], dtype=tl.float32)
    first = pid * rows_per_program
    # a bound known only at run time, as in the report (a constant one is unrolled and spills
    # differently, under every release)
    for row in range(first, tl.minimum(first + rows_per_program, rows)):
        x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        xhat = (x - tl.load(mean_ptr + row)) * rstd
        wdy = w * dy
        c1 = tl.sum(xhat * wdy, axis=0) / cols
        c2 = tl.sum(wdy, axis=0) / cols
        tl.store(dx_ptr + row * cols + offs, ((wdy - (xhat * c1 + c2)) * rstd).to(dx_ptr.dtype.element_ty),
                 mask=mask)  # fmt: skip
        dw += dy * xhat
        db += dy
    tl.store(dw_ptr + pid * cols + offs, dw, mask=mask)
    tl.store(db_ptr + pid * cols + offs, db, mask=mask)


def operands(rows: int, cols: int, dtype: torch.dtype, device: str = "cpu") -> dict:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(rows, cols, generator=generator)
    mean, rstd = x.mean(dim=1), 1 / torch.sqrt(x.var(dim=1, unbiased=False) + 1e-5)
    on = {"x_ptr": x, "w_ptr": torch.randn(cols, generator=generator) * 0.5 + 1,
          "dy_ptr": torch.randn(rows, cols, generator=generator)}  # fmt: skip
    on = {k: v.to(dtype) for k, v in on.items()}
    partials = max(1, rows // 4)
    made = {**on, "mean_ptr": mean, "rstd_ptr": rstd, "dx_ptr": torch.empty(rows, cols, dtype=dtype),
            "dw_ptr": torch.zeros(partials, cols), "db_ptr": torch.zeros(partials, cols)}  # fmt: skip
    return {**{k: v.to(device) for k, v in made.items()},
            "rows": rows, "cols": cols, "rows_per_program": 4}  # fmt: skip


def launch_args(dtype: torch.dtype) -> dict:
    return {**operands(16, 4608, dtype), "BLOCK": BLOCK}


backward_fp32 = TritonKernel(layer_norm_bwd_kernel, args=lambda: launch_args(torch.float32),
                             configs=[{"num_warps": 4}])  # fmt: skip
backward_bf16 = TritonKernel(layer_norm_bwd_kernel, args=lambda: launch_args(torch.bfloat16),
                             configs=[{"num_warps": 4}])  # fmt: skip


def check_backward(device: str):
    """dx, dweight and dbias of 64 rows of 4608 against float64, on a GPU: the interpreter cannot
    run a loop bounded at run time under NumPy 2.4 (its scalars are one-element arrays there)."""
    rows, cols, block = 64, 4608, BLOCK
    t = operands(rows, cols, torch.float32, device)
    layer_norm_bwd_kernel[(rows // 4,)](**t, BLOCK=block)
    x, w, dy = (t[k].cpu().double().numpy() for k in ("x_ptr", "w_ptr", "dy_ptr"))
    mean, rstd = t["mean_ptr"].cpu().double().numpy(), t["rstd_ptr"].cpu().double().numpy()
    xhat = (x - mean[:, None]) * rstd[:, None]
    wdy = w * dy
    c1, c2 = (xhat * wdy).mean(axis=1, keepdims=True), wdy.mean(axis=1, keepdims=True)
    dx = (wdy - (xhat * c1 + c2)) * rstd[:, None]
    got = {"dx": t["dx_ptr"], "dweight": t["dw_ptr"].sum(dim=0), "dbias": t["db_ptr"].sum(dim=0)}
    got = {k: v.cpu().double().numpy() for k, v in got.items()}
    return got, {"dx": dx, "dweight": (dy * xhat).sum(axis=0), "dbias": dy.sum(axis=0)}


if __name__ == "__main__":
    got, want = check_backward("cuda")
    print({k: float(np.abs(got[k] - want[k]).max()) for k in got})
