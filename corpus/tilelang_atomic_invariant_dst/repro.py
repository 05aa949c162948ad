"""tilelang_atomic_invariant_dst: an element-wise `T.atomic_add` whose destination does not move
with the vectorized index (tile-ai/tilelang#3219).

Pairwise sums `B[i // 2] += A[i]` under `T.Parallel`: lanes i and i + 1 add into the same cell.
The atomic-add vectorizer picked its width from the dtype alone, so it emitted one
`AtomicAddx2(&B[i // 2], A[i:i + 2])`, which adds A[i + 1] into B[i // 2 + 1], a neighbour's cell
(or faults on an odd address). A destination may only be widened when it is contiguous and
aligned with the lanes; `contiguous_sums` (`B[i] += A[i]`) is where widening is right.
"""

from __future__ import annotations

import tilelang.language as T

from kregress.case import TileLangKernel

N, THREADS = 1024, 128


def build(invariant: bool):
    def make():
        @T.prim_func
        def pair_sums(
            A: T.Tensor((N,), "float16"),  # type: ignore[valid-type]
            B: T.Tensor((N,), "float16"),  # type: ignore[valid-type]
        ):
            with T.Kernel(1, threads=THREADS) as _:
                for i in T.Parallel(N):
                    if invariant:
                        T.atomic_add(B[i // 2], A[i])
                    else:
                        T.atomic_add(B[i], A[i])

        return pair_sums

    return make


pair_sums = TileLangKernel(build(invariant=True))
contiguous_sums = TileLangKernel(build(invariant=False))
