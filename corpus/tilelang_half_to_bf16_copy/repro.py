"""tilelang_half_to_bf16_copy: a vectorized `T.copy` from float16 into bfloat16
(tile-ai/tilelang#2385).

Activations kept in float16 are handed to a bfloat16 consumer: a tile goes through shared memory
and out converted. Vectorized, the conversion had no fp16 → bf16 branch and fell back to casting
each `__half` lane straight to cutlass's `bfloat16_t`, which nvcc rejects as ambiguous ("more than
one user-defined conversion"). The same copy into float32 (`to_f32`) compiles in every release.
"""

from __future__ import annotations

import tilelang.language as T

from kregress.case import TileLangKernel

ROWS, COLS = 64, 128


def into_bf16():
    @T.prim_func
    def convert_tile(
        A: T.Tensor((ROWS, COLS), "float16"),  # type: ignore[valid-type]
        B: T.Tensor((ROWS, COLS), "bfloat16"),  # type: ignore[valid-type]
    ):
        with T.Kernel(1, threads=128) as _:
            staged = T.alloc_shared((ROWS, COLS), "float16")
            T.copy(A, staged)
            T.copy(staged, B)

    return convert_tile


def into_f32():
    """The same tile into float32 (TileLang reads a buffer's dtype from its annotation, as text)."""

    @T.prim_func
    def convert_tile(
        A: T.Tensor((ROWS, COLS), "float16"),  # type: ignore[valid-type]
        B: T.Tensor((ROWS, COLS), "float32"),  # type: ignore[valid-type]
    ):
        with T.Kernel(1, threads=128) as _:
            staged = T.alloc_shared((ROWS, COLS), "float16")
            T.copy(A, staged)
            T.copy(staged, B)

    return convert_tile


to_bf16 = TileLangKernel(into_bf16)
to_f32 = TileLangKernel(into_f32)
