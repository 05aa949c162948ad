"""tilelang_shared_fp32_atomics: float32 `T.atomic_add` into shared memory on sm_90
(tile-ai/tilelang#3038, fixed by tile-ai/tilelang#3129).

Block-local accumulation: every thread adds several float32 inputs into a shared-memory tile with
`T.atomic_add`, then the tile is written out. On sm_90 the vectorizer widened those atomics to
`AtomicAddx4`, whose float4 `atomicAdd` exists for global memory only: the kernel compiles, then
fails at launch ("unspecified launch failure"). Shared float32 atomics must stay scalar; the same
add into global memory (`global_sums`) may be widened.
"""

from __future__ import annotations

import tilelang.language as T

from kregress.case import TileLangKernel

N, THREADS = 1024, 128


def build(into_shared: bool):
    def make():
        @T.prim_func
        def block_sums(
            A: T.Tensor((N,), "float32"),  # type: ignore[valid-type]
            B: T.Tensor((N,), "float32"),  # type: ignore[valid-type]
        ):
            with T.Kernel(1, threads=THREADS) as _:
                if into_shared:
                    sums_shared = T.alloc_shared((N,), "float32")
                    for i in T.Parallel(N):
                        sums_shared[i] = 0.0
                    for i in T.Parallel(N):
                        T.atomic_add(sums_shared[i], A[i])
                    for i in T.Parallel(N):
                        B[i] = sums_shared[i]
                else:
                    for i in T.Parallel(N):
                        T.atomic_add(B[i], A[i])

        return block_sums

    return make


shared_sums = TileLangKernel(build(into_shared=True))
global_sums = TileLangKernel(build(into_shared=False))
