"""tilelang_int_index_into_fp8: a `T.Parallel` loop index stored straight into a float8 tensor
fails CUDA code generation (tile-ai/tilelang#1964, fixed in 0.1.9).

Each block fills its rows of an e4m3 tensor with the column index. The loop is vectorized 16 wide,
so the stored value is the ramp `j .. j+15`, an int32x16, and TileLang 0.1.7.post2 and 0.1.8 have
no CUDA type for it on the way to float8: `InternalError: Cannot convert type int32x16 to CUDA
type`. The same store into a float16 tensor (`index_into_fp16`), or into float8 after an explicit
cast of the index to float32 (`cast_into_fp8`), compiles under every release judged.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

ROWS, COLS, BLOCK_ROWS = 256, 2048, 4


def build(dtype: str, cast_first: bool):
    def make():
        @T.prim_func
        def column_index(A: T.Tensor((ROWS, COLS), dtype)):  # type: ignore[valid-type]
            with T.Kernel(T.ceildiv(ROWS, BLOCK_ROWS), threads=256) as bx:
                for i, j in T.Parallel(BLOCK_ROWS, COLS):
                    if cast_first:
                        A[bx * BLOCK_ROWS + i, j] = T.cast(j, "float32")
                    else:
                        A[bx * BLOCK_ROWS + i, j] = j

        return column_index

    return make


index_into_fp8 = TileLangKernel(build("float8_e4m3fn", cast_first=False))
index_into_fp16 = TileLangKernel(build("float16", cast_first=False))
cast_into_fp8 = TileLangKernel(build("float8_e4m3fn", cast_first=True))
