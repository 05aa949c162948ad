"""scratch_overflow: the WY-representation backward of flash-linear-attention's RWKV7/DPLR chunked
kernels, minimized (intel/intel-xpu-backend-for-triton#3449).

What matters for the bug is kept: 64x64 tiles held in registers across two loops of `tl.dot` on
block pointers (tensor descriptors from Triton 3.9.0, which removed block pointers), a
strictly-lower-triangular mask, two more dots on the masked accumulator, and
the upstream autotune list (1, 2, 4, 8 warps). With few warps each thread holds several 64x64
fp32 tiles and the compiler spills; on an Arc A770 (which has no tf32 DPAS, so fp32 dots become
FMA chains) the scratch this needed exceeded the hardware's per-thread limit (594720 > 262144
bytes upstream; 560896 with 1 warp and 296800 with 2 when built here by IGC 2.40 for dg2).

Per chunk of BT rows (A is the chunk's BT x BT inverse, lower triangular):
    dA_inv = dw @ ag^T + du @ v^T        dag = A^T @ dw        dv = A^T @ du
    dA     = -strict_lower(A^T @ strict_lower(dA_inv) @ A^T)
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

BT, K, V = 64, 128, 128  # chunk size and head dims of the upstream models
BK, BV = 64, 64


def has_block_pointers() -> bool:
    """Triton 3.9.0 keeps `tl.make_block_ptr` as a stub that raises NotImplementedError, so the name
    alone does not tell. Its body is called bare: a stub raises at once, a real one fails otherwise
    for want of a kernel and arguments."""
    make_block_ptr = getattr(tl, "make_block_ptr", None)
    if make_block_ptr is None:
        return False
    try:
        make_block_ptr.__wrapped__(*[None] * 6)
    except NotImplementedError:
        return False
    except Exception:
        return True
    return True


# Chosen once: releases with block pointers keep the upstream kernel, so their judgements do not move.
BLOCK_POINTERS = has_block_pointers()


@triton.autotune(
    configs=[triton.Config({}, num_warps=num_warps) for num_warps in (1, 2, 4, 8)],
    key=["BT", "BK", "BV"],
)
@triton.jit
def wy_repr_bwd_kernel(
    A, ag, v, dw, du, dA, dag, dv, T,
    K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
):  # fmt: skip
    i_t = tl.program_id(0)
    p_A = tl.make_block_ptr(A, (T, BT), (BT, 1), (i_t * BT, 0), (BT, BT), (1, 0))
    b_A = tl.load(p_A, boundary_check=(0, 1))
    b_dA = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        p_ag = tl.make_block_ptr(ag, (T, K), (K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        p_dw = tl.make_block_ptr(dw, (T, K), (K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        p_dag = tl.make_block_ptr(dag, (T, K), (K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        b_ag = tl.load(p_ag, boundary_check=(0, 1))
        b_dw = tl.load(p_dw, boundary_check=(0, 1))
        b_dA += tl.dot(b_dw, tl.trans(b_ag))
        tl.store(p_dag, tl.dot(tl.trans(b_A), b_dw).to(p_dag.dtype.element_ty), boundary_check=(0, 1))
    for i_v in range(tl.cdiv(V, BV)):
        p_v = tl.make_block_ptr(v, (T, V), (V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
        p_du = tl.make_block_ptr(du, (T, V), (V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
        p_dv = tl.make_block_ptr(dv, (T, V), (V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
        b_v = tl.load(p_v, boundary_check=(0, 1))
        b_du = tl.load(p_du, boundary_check=(0, 1))
        b_dA += tl.dot(b_du, tl.trans(b_v))
        tl.store(p_dv, tl.dot(tl.trans(b_A), b_du).to(p_dv.dtype.element_ty), boundary_check=(0, 1))
    o_t = tl.arange(0, BT)
    strictly_lower = o_t[:, None] > o_t[None, :]
    b_dA = tl.where(strictly_lower, b_dA, 0)
    b_dA = tl.dot(b_dA, tl.trans(b_A))
    b_dA = tl.dot(tl.trans(b_A), b_dA)
    b_dA = tl.where(strictly_lower, -b_dA, 0)
    p_dA = tl.make_block_ptr(dA, (T, BT), (BT, 1), (i_t * BT, 0), (BT, BT), (1, 0))
    tl.store(p_dA, b_dA.to(p_dA.dtype.element_ty), boundary_check=(0, 1))


# The same kernel on tensor descriptors, for releases without block pointers. Descriptors zero-pad
# out-of-bounds reads and drop out-of-bounds writes, as boundary_check=(0, 1) did; they are made
# once rather than per iteration, since on Hopper each one is written to global memory. The tiles
# held across the loops are the same: compiled by 3.6.0, it spills exactly as the block-pointer
# kernel for sm_80 and gfx942, and less for sm_90 (1640 bytes against 9160 with 1 warp), whose
# descriptor loads go through shared memory.
@triton.autotune(
    configs=[triton.Config({}, num_warps=num_warps) for num_warps in (1, 2, 4, 8)],
    key=["BT", "BK", "BV"],
)
@triton.jit
def wy_repr_bwd_desc_kernel(
    A, ag, v, dw, du, dA, dag, dv, T,
    K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
):  # fmt: skip
    i_t = tl.program_id(0)
    d_A = tl.make_tensor_descriptor(A, shape=[T, BT], strides=[BT, 1], block_shape=[BT, BT])
    d_ag = tl.make_tensor_descriptor(ag, shape=[T, K], strides=[K, 1], block_shape=[BT, BK])
    d_dw = tl.make_tensor_descriptor(dw, shape=[T, K], strides=[K, 1], block_shape=[BT, BK])
    d_dag = tl.make_tensor_descriptor(dag, shape=[T, K], strides=[K, 1], block_shape=[BT, BK])
    d_v = tl.make_tensor_descriptor(v, shape=[T, V], strides=[V, 1], block_shape=[BT, BV])
    d_du = tl.make_tensor_descriptor(du, shape=[T, V], strides=[V, 1], block_shape=[BT, BV])
    d_dv = tl.make_tensor_descriptor(dv, shape=[T, V], strides=[V, 1], block_shape=[BT, BV])
    d_dA = tl.make_tensor_descriptor(dA, shape=[T, BT], strides=[BT, 1], block_shape=[BT, BT])
    b_A = d_A.load([i_t * BT, 0])
    b_dA = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        b_ag = d_ag.load([i_t * BT, i_k * BK])
        b_dw = d_dw.load([i_t * BT, i_k * BK])
        b_dA += tl.dot(b_dw, tl.trans(b_ag))
        d_dag.store([i_t * BT, i_k * BK], tl.dot(tl.trans(b_A), b_dw).to(d_dag.dtype))
    for i_v in range(tl.cdiv(V, BV)):
        b_v = d_v.load([i_t * BT, i_v * BV])
        b_du = d_du.load([i_t * BT, i_v * BV])
        b_dA += tl.dot(b_du, tl.trans(b_v))
        d_dv.store([i_t * BT, i_v * BV], tl.dot(tl.trans(b_A), b_du).to(d_dv.dtype))
    o_t = tl.arange(0, BT)
    strictly_lower = o_t[:, None] > o_t[None, :]
    b_dA = tl.where(strictly_lower, b_dA, 0)
    b_dA = tl.dot(b_dA, tl.trans(b_A))
    b_dA = tl.dot(tl.trans(b_A), b_dA)
    b_dA = tl.where(strictly_lower, -b_dA, 0)
    d_dA.store([i_t * BT, 0], b_dA.to(d_dA.dtype))


KERNEL = wy_repr_bwd_kernel if BLOCK_POINTERS else wy_repr_bwd_desc_kernel


def make_inputs(chunks: int, device: str = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """Random chunk inverses (unit lower triangular, as upstream) and gradients, fp32."""
    gen = torch.Generator().manual_seed(seed)
    T = chunks * BT
    strict = torch.tril(torch.randn(chunks, BT, BT, generator=gen) * 0.1, diagonal=-1)
    A = torch.linalg.inv(torch.eye(BT) - strict).reshape(T, BT)
    rand = lambda *shape: torch.randn(*shape, generator=gen)  # noqa: E731
    inputs = {"A": A, "ag": rand(T, K), "v": rand(T, V), "dw": rand(T, K), "du": rand(T, V)}
    return {name: t.contiguous().to(device) for name, t in inputs.items()}


def launch(inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Through the autotuner on a GPU, as upstream; the interpreter cannot autotune (and ignores
    num_warps), so there the kernel itself runs."""
    T = inputs["A"].shape[0]
    outputs = {"dA": torch.empty_like(inputs["A"]), "dag": torch.empty_like(inputs["ag"]),
               "dv": torch.empty_like(inputs["v"])}  # fmt: skip
    device = inputs["A"].device
    if device.type != "cpu" and not BLOCK_POINTERS:
        # Descriptors made inside a kernel need global memory of their own on a GPU.
        def alloc(size: int, alignment: int, stream) -> torch.Tensor:
            return torch.empty(size, dtype=torch.int8, device=device)

        triton.set_allocator(alloc)
    kernel = KERNEL if device.type != "cpu" else KERNEL.fn
    kernel[(T // BT,)](**inputs, **outputs, T=T, K=K, V=V, BT=BT, BK=BK, BV=BV)
    return outputs


def reference(inputs: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
    """The same math per chunk in float64 numpy."""
    x = {name: t.detach().cpu().double().numpy() for name, t in inputs.items()}
    chunks = x["A"].shape[0] // BT
    out = {"dA": np.zeros_like(x["A"]), "dag": np.zeros_like(x["ag"]), "dv": np.zeros_like(x["v"])}
    lower = np.tril(np.ones((BT, BT), dtype=bool), k=-1)
    for c in range(chunks):
        rows = slice(c * BT, (c + 1) * BT)
        a = x["A"][rows]
        d_a_inv = x["dw"][rows] @ x["ag"][rows].T + x["du"][rows] @ x["v"][rows].T
        out["dag"][rows] = a.T @ x["dw"][rows]
        out["dv"][rows] = a.T @ x["du"][rows]
        out["dA"][rows] = np.where(lower, -(a.T @ np.where(lower, d_a_inv, 0.0) @ a.T), 0.0)
    return out


def check_two_chunks(device: str):
    inputs = make_inputs(chunks=2, device=device)
    return launch(inputs), reference(inputs)


def launch_args() -> dict:
    """What a real launch passes: 16 chunks (T = 1024), fp32 tensors."""
    inputs = make_inputs(chunks=16)
    outputs = {"dA": torch.empty_like(inputs["A"]), "dag": torch.empty_like(inputs["ag"]),
               "dv": torch.empty_like(inputs["v"])}  # fmt: skip
    return {**inputs, **outputs, "T": 1024, "K": K, "V": V, "BT": BT, "BK": BK, "BV": BV}


wy_repr_bwd = TritonKernel(KERNEL, args=launch_args)

# What the maintainers suggested in the upstream thread: twice the registers per hardware thread
# and more warps, so each thread holds a smaller share of the tiles. XPU options only.
wy_repr_bwd_suggested = TritonKernel(
    KERNEL,
    args=launch_args,
    configs={"xpu": [{"grf_mode": "large", "num_warps": num_warps} for num_warps in (8, 16, 32)]},
)

if __name__ == "__main__":
    actual, expected = check_two_chunks("cpu")
    for name in expected:
        print(name, float(np.abs(actual[name].double().numpy() - expected[name]).max()))
