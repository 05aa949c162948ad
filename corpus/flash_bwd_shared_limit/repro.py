"""flash_bwd_shared_limit: an attention backward kernel needs more shared memory from Triton 3.3 on
and no longer fits an L4 or A10G (triton-lang/triton#7268).

One program per block of 128 keys: it holds K and V, walks the query blocks, and accumulates dK and
dV while updating dQ, five dots per step (bfloat16, head dim 64, 8 warps, one stage, as
flash-attention's Triton backward is launched). Up to Triton 3.2 it takes 98304 bytes of shared
memory, under the 101376 of sm_86/sm_89 parts; from 3.3 on, 114688, and the launch fails there
with OutOfResources. The figure is the same when compiled for sm_80.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

SEQ, HEAD = 128, 64  # one key block, one program: dQ is read, added to and stored without atomics
BLOCK = 128


@triton.jit
def attention_bwd_kernel(q_ptr, k_ptr, v_ptr, do_ptr, dq_ptr, dk_ptr, dv_ptr, lse_ptr, delta_ptr, scale,
                         seq_len, HEAD: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    keys = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    dims = tl.arange(0, HEAD)
    k = tl.load(k_ptr + keys[:, None] * HEAD + dims[None, :])
    v = tl.load(v_ptr + keys[:, None] * HEAD + dims[None, :])
    dk = tl.zeros([BLOCK, HEAD], tl.float32)
    dv = tl.zeros([BLOCK, HEAD], tl.float32)
    for start in range(0, seq_len, BLOCK):
        queries = start + tl.arange(0, BLOCK)
        tile = queries[:, None] * HEAD + dims[None, :]
        q = tl.load(q_ptr + tile)
        do = tl.load(do_ptr + tile)
        p = tl.exp(tl.dot(q, tl.trans(k)) * scale - tl.load(lse_ptr + queries)[:, None])
        dv += tl.dot(tl.trans(p.to(do.dtype)), do)
        ds = (p * (tl.dot(do, tl.trans(v)) - tl.load(delta_ptr + queries)[:, None]) * scale).to(q.dtype)
        dk += tl.dot(tl.trans(ds), q)
        tl.store(dq_ptr + tile, (tl.load(dq_ptr + tile) + tl.dot(ds, k)).to(q.dtype))
    tl.store(dk_ptr + keys[:, None] * HEAD + dims[None, :], dk.to(tl.bfloat16))
    tl.store(dv_ptr + keys[:, None] * HEAD + dims[None, :], dv.to(tl.bfloat16))


def inputs() -> dict:
    """Q, K, V and dO, with the forward's log-sum-exp and rowsum(dO * O) computed in float64."""
    gen = torch.Generator().manual_seed(0)
    q, k, v, do = (torch.randn(SEQ, HEAD, generator=gen, dtype=torch.float64) for _ in range(4))
    q, k, v, do = (t.to(torch.bfloat16).double() for t in (q, k, v, do))  # what the kernel reads
    scale = HEAD**-0.5
    scores = q @ k.T * scale
    lse = torch.logsumexp(scores, dim=1)
    out = torch.softmax(scores, dim=1) @ v
    return {"q": q, "k": k, "v": v, "do": do, "lse": lse, "delta": (do * out).sum(dim=1), "scale": scale}


def operands(device: str = "cpu") -> dict:
    x = inputs()
    bf16 = {f"{n}_ptr": x[n].to(torch.bfloat16) for n in ("q", "k", "v", "do")}
    zeros = {f"{n}_ptr": torch.zeros(SEQ, HEAD, dtype=torch.bfloat16) for n in ("dq", "dk", "dv")}
    f32 = {"lse_ptr": x["lse"].float(), "delta_ptr": x["delta"].float()}
    return {**{k: t.to(device) for k, t in {**bf16, **zeros, **f32}.items()}, "scale": x["scale"]}


SIZES = {"seq_len": SEQ, "HEAD": HEAD, "BLOCK": BLOCK}
backward = TritonKernel(attention_bwd_kernel, args=lambda: {**operands(), **SIZES},
                        configs=[{"num_warps": 8, "num_stages": 1}])  # fmt: skip


def check_backward(device: str):
    """dQ, dK, dV against float64 autograd-free formulas; bfloat16 operands and outputs."""
    args = operands(device)
    attention_bwd_kernel[(SEQ // BLOCK,)](**args, **SIZES, num_warps=8, num_stages=1)
    x = inputs()
    p = torch.exp(x["q"] @ x["k"].T * x["scale"] - x["lse"][:, None])
    ds = p * (x["do"] @ x["v"].T - x["delta"][:, None]) * x["scale"]
    expected = {"dq": ds @ x["k"], "dk": ds.T @ x["q"], "dv": p.T @ x["do"]}
    actual = {n: args[f"{n}_ptr"].cpu().double().numpy() for n in expected}
    return actual, {n: t.numpy() for n, t in expected.items()}
