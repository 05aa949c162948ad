"""tilelang_int4_copy_pairs: an element-wise int4 copy, two elements a thread, is vectorized to a
type the CUDA codegen cannot name (tile-ai/tilelang#2995).

Packed 4-bit weights are copied from one buffer to another, as a dequantizing kernel stages them.
With 128 elements on 64 threads each thread moves two, and the loop was vectorized to `int4x2`,
one byte: the codegen had no CUDA spelling for it and stopped with `InternalError: Cannot convert
type int4x2 to CUDA type!`. 0.1.14 names it. The same copy of int8 (`copy_int8_pairs`, `char2`)
compiles in every release.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 128  # 64 threads: two elements a thread


def build(dtype: str):
    def make():
        @T.prim_func
        def copy(src: T.Tensor((N,), dtype), dst: T.Tensor((N,), dtype)):  # type: ignore[valid-type]
            with T.Kernel(1, threads=64) as _:
                for i in T.Parallel(N):
                    dst[i] = src[i]

        return copy

    return make


copy_int4_pairs = TileLangKernel(build("int4"))
copy_int8_pairs = TileLangKernel(build("int8"))
