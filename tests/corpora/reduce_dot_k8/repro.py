"""A GEMM with an epilogue, two dots and an autotune list; one config asks tl.dot for K = 8, which
Triton refuses (K must be at least 16). The failure needs the two loads and the dot of that config:
everything else is there for the reducer to remove."""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel


@triton.jit
def leaky(x, slope):
    return tl.where(x > 0, x, x * slope)


@triton.jit
def scale_rows(tile, scale_ptr, rows, M):
    scale = tl.load(scale_ptr + rows, mask=rows < M, other=1.0)
    return tile * scale[:, None]


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 8}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=4, num_stages=4),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def gemm_epilogue_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    gate_ptr,
    bias_ptr,
    scale_ptr,
    out_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_om,
    stride_on,
    slope,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_n
    pid_n = pid % num_n
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    gate = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a_mask = (rows[:, None] < M) & (k + ks[None, :] < K)
        b_mask = (k + ks[:, None] < K) & (cols[None, :] < N)
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k + ks[None, :]) * stride_ak, mask=a_mask, other=0.0)
        b = tl.load(b_ptr + (k + ks[:, None]) * stride_bk + cols[None, :] * stride_bn, mask=b_mask, other=0.0)
        g = tl.load(
            gate_ptr + (k + ks[:, None]) * stride_bk + cols[None, :] * stride_bn, mask=b_mask, other=0.0
        )
        acc += tl.dot(a, b)
        gate += tl.dot(a, g)
    bias = tl.load(bias_ptr + cols, mask=cols < N, other=0.0)
    acc = acc + bias[None, :]
    acc = leaky(acc, slope)
    gate = tl.sigmoid(gate)
    acc = acc * gate
    acc = scale_rows(acc, scale_ptr, rows, M)
    residual = tl.load(
        c_ptr + rows[:, None] * stride_om + cols[None, :] * stride_on,
        mask=(rows[:, None] < M) & (cols[None, :] < N),
        other=0.0,
    )
    acc = acc + residual
    out_mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(
        out_ptr + rows[:, None] * stride_om + cols[None, :] * stride_on, acc.to(tl.float16), mask=out_mask
    )


def gemm_args() -> dict:
    m, n, k = 256, 256, 128
    half = torch.float16
    return {
        "a_ptr": torch.empty(m * k, dtype=half),
        "b_ptr": torch.empty(k * n, dtype=half),
        "c_ptr": torch.empty(m * n, dtype=half),
        "gate_ptr": torch.empty(k * n, dtype=half),
        "bias_ptr": torch.empty(n, dtype=half),
        "scale_ptr": torch.empty(m, dtype=half),
        "out_ptr": torch.empty(m * n, dtype=half),
        "M": m,
        "N": n,
        "K": k,
        "stride_am": k,
        "stride_ak": 1,
        "stride_bk": n,
        "stride_bn": 1,
        "stride_om": n,
        "stride_on": 1,
        "slope": 0.01,
    }


gemm = TritonKernel(gemm_epilogue_kernel, args=gemm_args)
