"""atomic_vectorization: vectorized atomics into a buffer whose layout is not contiguous
(tile-ai/tilelang, attention-sink GQA backward).

The GQA-sink backward accumulates dQ with `T.atomic_add` from a GEMM fragment, and lays dQ out in
memory as `[l // 8, d // 8, d % 2, 4 * (l % 8) + (d % 8) // 2]` so that each thread's atomics land
where its fragment is. Under that layout d and d + 1 are 32 floats apart. In TileLang 0.1.6.post2
the auto-vectorizer still turned the atomic add into `AtomicAddx2` (two neighbouring floats at
once): half of every pair went to the wrong place, and dQ was wrong.

`dq_accumulate` is that shape, minimized: split-K partial products dq = A_s @ B_s from a GEMM into
a fragment, atomically added into a dQ annotated with the upstream layout. `contiguous_accumulate`
is the same without the layout, where vectorized atomics are right (the positive control).
"""

from __future__ import annotations

import numpy as np
import tilelang
import tilelang.language as T

from kregress.case import TileLangKernel, Unsupported

SEQ, DIM, INNER, SPLITS = 128, 64, 32, 4
BLOCK = 64  # rows of dQ per program, as block_N upstream


def dq_layout(dq):
    """The upstream `make_dq_layout`, for a [seq, dim] slice: d and d + 1 are 32 floats apart."""
    return T.Layout(dq.shape, lambda row, col: [row // 8, col // 8, col % 2, 4 * (row % 8) + (col % 8) // 2])


def build(custom_layout: bool):
    def make():
        @T.prim_func
        def accumulate(
            A: T.Tensor((SPLITS, SEQ, INNER), "float16"),  # type: ignore[valid-type]
            B: T.Tensor((SPLITS, INNER, DIM), "float16"),  # type: ignore[valid-type]
            dQ: T.Tensor((SEQ, DIM), "float32"),  # type: ignore[valid-type]
        ):
            with T.Kernel(SEQ // BLOCK, SPLITS, threads=128) as (bx, split):
                a = T.alloc_shared((BLOCK, INNER), "float16")
                b = T.alloc_shared((INNER, DIM), "float16")
                dq = T.alloc_fragment((BLOCK, DIM), "float32")
                if custom_layout:
                    T.annotate_layout({dQ: dq_layout(dQ)})
                T.copy(A[split, bx * BLOCK : (bx + 1) * BLOCK, :], a)
                T.copy(B[split, :, :], b)
                T.clear(dq)
                T.gemm(a, b, dq)
                T.atomic_add(dQ[bx * BLOCK : (bx + 1) * BLOCK, :], dq)

        return accumulate

    return make


dq_accumulate = TileLangKernel(build(custom_layout=True))
contiguous_accumulate = TileLangKernel(build(custom_layout=False))


def memory_order(seq: int, dim: int) -> np.ndarray:
    """Where element (l, d) of dQ lives under the upstream layout, as a flat index."""
    row, col = np.meshgrid(np.arange(seq), np.arange(dim), indexing="ij")
    index = (row // 8, col // 8, col % 2, 4 * (row % 8) + (col % 8) // 2)
    return np.ravel_multi_index(index, (seq // 8, dim // 8, 2, 32))


def operands(seed: int = 0):
    import torch

    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(SPLITS, SEQ, INNER, generator=gen).half()
    b = torch.randn(SPLITS, INNER, DIM, generator=gen).half()
    return a, b


def reference(a, b) -> np.ndarray:
    return np.einsum("slk,skd->ld", a.double().numpy(), b.double().numpy())


def run(custom_layout: bool, device: str):
    import torch

    if device == "cpu":
        raise Unsupported("TileLang kernels run on a CUDA device; on cpu the ir check is the judge")
    a, b = operands()
    kernel = tilelang.compile(build(custom_layout)(), target="cuda")
    dq = torch.zeros(SEQ * DIM, dtype=torch.float32, device=device)
    kernel(a.to(device), b.to(device), dq.view(SEQ, DIM))
    flat = dq.cpu().double().numpy()
    got = flat[memory_order(SEQ, DIM)] if custom_layout else flat.reshape(SEQ, DIM)
    return got, reference(a, b)


def check_dq_accumulate(device: str):
    return run(True, device)


def check_contiguous_accumulate(device: str):
    return run(False, device)
