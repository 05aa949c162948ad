"""tilelang_bf16_rsqrt: `T.rsqrt` on bfloat16 calls an `hrsqrt` that exists only for half
(tile-ai/tilelang#2384).

The scale step of an RMS norm kept in bfloat16: each row's inverse root. TileLang's CUDA codegen
routes 16-bit math to `h<name>` for float16 and bfloat16 alike, but its templates defined
`hrsqrt(half_t)` only, so nvcc found no overload for `bfloat16_t` and refused the kernel. The
float16 twin (`inverse_root_f16`) compiles in every release.
"""

from __future__ import annotations

import tilelang.language as T

from kregress.case import TileLangKernel

ROWS, COLS = 64, 64


def build(dtype: str):
    def make():
        @T.prim_func
        def inverse_root(
            A: T.Tensor((ROWS, COLS), dtype),  # type: ignore[valid-type]
            B: T.Tensor((ROWS, COLS), dtype),  # type: ignore[valid-type]
        ):
            with T.Kernel(1, threads=128) as _:
                tile = T.alloc_fragment((ROWS, COLS), dtype)
                T.copy(A, tile)
                for i, j in T.Parallel(ROWS, COLS):
                    tile[i, j] = T.rsqrt(tile[i, j])
                T.copy(tile, B)

        return inverse_root

    return make


inverse_root_bf16 = TileLangKernel(build("bfloat16"))
inverse_root_f16 = TileLangKernel(build("float16"))
