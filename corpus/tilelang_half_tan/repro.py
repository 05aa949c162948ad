"""tilelang_half_tan: `T.tan` on float16 and bfloat16 calls `htan`, which CUDA does not have
(tile-ai/tilelang#2894).

Slopes from angles, kept in 16 bits. The CUDA codegen maps 16-bit math to `h<name>`; CUDA's half
headers provide hsin, hcos, hexp and others but no tangent, and TileLang's templates bridged the
missing ones except `htan`, so nvcc stopped at `identifier "htan" is undefined`. The float32 twin
(`slopes_f32`, `tanf`) compiles in every release.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 128  # one element a thread: a vectorized pair takes another path (htan(half2))


def build(dtype: str):
    def make():
        @T.prim_func
        def slopes(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):  # type: ignore[valid-type]
            with T.Kernel(1, threads=128) as _:
                for i in T.Parallel(N):
                    B[i] = T.tan(A[i])

        return slopes

    return make


slopes_f16 = TileLangKernel(build("float16"))
slopes_bf16 = TileLangKernel(build("bfloat16"))
slopes_f32 = TileLangKernel(build("float32"))
