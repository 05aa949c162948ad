"""amd_pipeline_four_loads_stages4: an attention-style loop with four loads per step fails the AMD
software pipeliner at num_stages=4 (triton-lang/triton#9815).

One 64-row block of attention with an additive bias and an additive mask: per 32-key step the loop
loads K (transposed), V, a bias tile and a mask tile, computes `q @ k + bias + mask`, an online
softmax (running max, `exp`, rescaling) and accumulates `p @ v`, bf16 in, fp32 out, 64-wide heads.
With four stages the AMD pipeliner (`tritonamdgpu-schedule-loops`) erased one of the loads while a
layout conversion feeding a dot still used it: "'tt.load' op operation destroyed but still has
uses", "LLVM ERROR: operation destroyed but still has uses" (`TritonAMDGPUPipeline`). The same
loop with three stages (`attention_s3`) compiles in every release.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel, Unsupported

BQ, BKV, D, N = 64, 32, 64, 256


@triton.jit
def masked_attention_kernel(q_ptr, k_ptr, v_ptr, bias_ptr, mask_ptr, o_ptr, N, BQ: tl.constexpr,
                            BKV: tl.constexpr, D: tl.constexpr, STAGES: tl.constexpr):  # fmt: skip
    rq = tl.arange(0, BQ)
    rk = tl.arange(0, BKV)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rq[:, None] * D + rd[None, :])
    m_i = tl.full([BQ], float("-inf"), tl.float32)
    l_i = tl.zeros([BQ], tl.float32)
    acc = tl.zeros([BQ, D], tl.float32)
    for start in tl.range(0, N, BKV, num_stages=STAGES):
        keys = start + rk
        valid = keys < N
        k = tl.load(k_ptr + rd[:, None] + keys[None, :] * D, mask=valid[None, :], other=0.0)
        v = tl.load(v_ptr + keys[:, None] * D + rd[None, :], mask=valid[:, None], other=0.0)
        bias = tl.load(bias_ptr + rq[:, None] * N + keys[None, :], mask=valid[None, :], other=0.0)
        mask = tl.load(mask_ptr + rq[:, None] * N + keys[None, :], mask=valid[None, :], other=0.0)
        qk = tl.dot(q, k) + bias.to(tl.float32) + mask.to(tl.float32)
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    tl.store(o_ptr + rq[:, None] * D + rd[None, :], acc / l_i[:, None])


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    tensors = {
        "q_ptr": (torch.randn(BQ, D, generator=gen) / 8).bfloat16(),
        "k_ptr": torch.randn(N, D, generator=gen).bfloat16(),
        "v_ptr": torch.randn(N, D, generator=gen).bfloat16(),
        "bias_ptr": torch.randn(BQ, N, generator=gen).bfloat16(),
        "mask_ptr": torch.where(torch.rand(BQ, N, generator=gen) < 0.2, -30.0, 0.0).bfloat16(),
        "o_ptr": torch.empty(BQ, D),
    }
    return {k: v.to(device) for k, v in tensors.items()}


def kernel(stages: int) -> TritonKernel:
    def args() -> dict:
        return {**operands(), "N": N, "BQ": BQ, "BKV": BKV, "D": D, "STAGES": stages}

    return TritonKernel(masked_attention_kernel, args=args, configs=[{"num_warps": 4}])


attention_s4 = kernel(4)
attention_s3 = kernel(3)


def check_attention_s4(device: str):
    """The four-stage attention block against float64 softmax(q k^T + bias + mask) v, on an AMD GPU."""
    if torch.version.hip is None:
        raise Unsupported("the bug is in the AMD pipeliner; this device is not an AMD GPU")
    args = operands(device)
    masked_attention_kernel[(1,)](**args, N=N, BQ=BQ, BKV=BKV, D=D, STAGES=4)
    names = ("q_ptr", "k_ptr", "v_ptr", "bias_ptr", "mask_ptr")
    q, k, v, bias, mask = (args[n].cpu().double().numpy() for n in names)
    scores = q @ k.T + bias + mask
    p = np.exp(scores - scores.max(axis=1, keepdims=True))
    return args["o_ptr"].cpu().double().numpy(), (p / p.sum(axis=1, keepdims=True)) @ v
