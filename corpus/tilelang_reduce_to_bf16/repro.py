"""tilelang_reduce_to_bf16: `T.reduce_sum` from a float32 fragment into a bfloat16 one
(tile-ai/tilelang#2277).

Squared row norms of a float32 tile, kept in bfloat16 for the next kernel. The reduction chose its
packed (two-lane) path by the output's dtype alone and then loaded the float32 source as if it were
bfloat16 pairs, so 0.1.10 generated a conversion no overload of `tl::from_uint1` matches and nvcc
refused the kernel. The same reduction into float32 (`norms_f32`) compiles in every release.
"""

from __future__ import annotations

import tilelang.language as T

from kregress.case import TileLangKernel

ROWS, COLS = 64, 128


def build(out_dtype: str):
    def make():
        @T.prim_func
        def squared_norms(
            A: T.Tensor((ROWS, COLS), "float32"),  # type: ignore[valid-type]
            B: T.Tensor((ROWS,), out_dtype),  # type: ignore[valid-type]
        ):
            with T.Kernel(1, threads=128) as _:
                tile = T.alloc_fragment((ROWS, COLS), "float32")
                norms = T.alloc_fragment((ROWS,), out_dtype)
                T.copy(A, tile)
                for i, j in T.Parallel(ROWS, COLS):
                    tile[i, j] = tile[i, j] * tile[i, j]
                T.reduce_sum(tile, norms, dim=1)
                T.copy(norms, B)

        return squared_norms

    return make


norms_bf16 = TileLangKernel(build("bfloat16"))
norms_f32 = TileLangKernel(build("float32"))
