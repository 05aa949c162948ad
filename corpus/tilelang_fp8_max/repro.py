"""tilelang_fp8_max: `T.max` of two float8_e4m3 values emits a bare `max(...)` whose float result
nvcc will not store into fp8 (tile-ai/tilelang#2985).

An element-wise maximum of two fp8 activations (a ReLU-like merge of two branches). TileLang's
codegen printed `max(A[i], B[i])` for an fp8 MaxNode; the operands promote to float, and no
assignment from float to `fp8_e4_t` exists: `no operator "=" matches these operands`. The
bfloat16 twin compiles in every release.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 256


def build(dtype: str):
    def make():
        @T.prim_func
        def merge(
            A: T.Tensor((N,), dtype),  # type: ignore[valid-type]
            B: T.Tensor((N,), dtype),  # type: ignore[valid-type]
            C: T.Tensor((N,), dtype),  # type: ignore[valid-type]
        ):
            with T.Kernel(1, threads=128) as _:
                for i in T.Parallel(N):
                    C[i] = T.max(A[i], B[i])

        return merge

    return make


merge_fp8 = TileLangKernel(build("float8_e4m3"))
merge_bf16 = TileLangKernel(build("bfloat16"))
