"""atomic_vectorization_triton: the Triton twin of atomic_vectorization (tile-ai/tilelang,
attention-sink GQA backward): split-K partial products from a `tl.dot` atomically added into dQ,
once through the upstream's permuted index map (`[l // 8, d // 8, d % 2, 4 * (l % 8) + (d % 8) // 2]`,
where d and d + 1 are 32 floats apart) and once row-major. A compiler may only widen an atomic
over elements that are neighbours in memory.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

SEQ, DIM, INNER, SPLITS = 128, 64, 32, 4
BLOCK = 64


@triton.jit
def accumulate_kernel(
    a_ptr, b_ptr, dq_ptr, SEQ: tl.constexpr, DIM: tl.constexpr, INNER: tl.constexpr, BLOCK: tl.constexpr,
    CUSTOM_LAYOUT: tl.constexpr,
):  # fmt: skip
    pid, split = tl.program_id(0), tl.program_id(1)
    rows = pid * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, DIM)
    ks = tl.arange(0, INNER)
    a = tl.load(a_ptr + split * SEQ * INNER + rows[:, None] * INNER + ks[None, :])
    b = tl.load(b_ptr + split * INNER * DIM + ks[:, None] * DIM + cols[None, :])
    dq = tl.dot(a, b)
    if CUSTOM_LAYOUT:
        row, col = rows[:, None], cols[None, :]
        offsets = (((row // 8) * (DIM // 8) + col // 8) * 2 + col % 2) * 32 + 4 * (row % 8) + (col % 8) // 2
    else:
        offsets = rows[:, None] * DIM + cols[None, :]
    tl.atomic_add(dq_ptr + offsets, dq)


def operands(device: str = "cpu", seed: int = 0) -> dict:
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(SPLITS, SEQ, INNER, generator=gen).half()
    b = torch.randn(SPLITS, INNER, DIM, generator=gen).half()
    return {"a_ptr": a.to(device), "b_ptr": b.to(device), "dq_ptr": torch.zeros(SEQ * DIM, device=device)}


def kernel(custom_layout: bool) -> TritonKernel:
    def args() -> dict:
        sizes = {"SEQ": SEQ, "DIM": DIM, "INNER": INNER, "BLOCK": BLOCK}
        return {**operands(), **sizes, "CUSTOM_LAYOUT": custom_layout}

    return TritonKernel(accumulate_kernel, args=args, configs=[{"num_warps": 4}])


dq_accumulate = kernel(custom_layout=True)
contiguous_accumulate = kernel(custom_layout=False)


def memory_order(seq: int, dim: int) -> np.ndarray:
    row, col = np.meshgrid(np.arange(seq), np.arange(dim), indexing="ij")
    index = (row // 8, col // 8, col % 2, 4 * (row % 8) + (col % 8) // 2)
    return np.ravel_multi_index(index, (seq // 8, dim // 8, 2, 32))


def run(custom_layout: bool, device: str):
    x = operands(device)
    accumulate_kernel[(SEQ // BLOCK, SPLITS)](
        **x, SEQ=SEQ, DIM=DIM, INNER=INNER, BLOCK=BLOCK, CUSTOM_LAYOUT=custom_layout
    )
    flat = x["dq_ptr"].cpu().double().numpy()
    got = flat[memory_order(SEQ, DIM)] if custom_layout else flat.reshape(SEQ, DIM)
    a, b = x["a_ptr"].cpu().double().numpy(), x["b_ptr"].cpu().double().numpy()
    return got, np.einsum("slk,skd->ld", a, b)


def check_dq_accumulate(device: str):
    return run(True, device)


def check_contiguous_accumulate(device: str):
    return run(False, device)
