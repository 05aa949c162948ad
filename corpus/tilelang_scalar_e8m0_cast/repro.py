"""tilelang_scalar_e8m0_cast: a scalar `T.cast` from float8_e8m0fnu to bfloat16 fails in nvcc
while the vectorized cast of the same pair compiles (tile-ai/tilelang#2610, open).

Decoding MX block scales (e8m0, a power of two per block) to bfloat16 one scale per thread. The
CUDA codegen declares the pair vectorizable and emits the vector conversion for 2, 4 or 8 lanes,
but a single lane (a serial loop, or one scale a thread) takes the scalar path, which has no
conversion for e8m0 and nvcc refuses the kernel. Four scales at a time (`decode_vector`) compile.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 128


def build(vector: bool):
    def make():
        @T.prim_func
        def decode(scales: T.Tensor((N,), "float8_e8m0fnu"), out: T.Tensor((N,), "bfloat16")):  # type: ignore[valid-type]
            with T.Kernel(1, threads=32 if vector else N) as _:
                for i in T.Parallel(N):
                    out[i] = T.cast(scales[i], "bfloat16")

        return decode

    return make


decode_scalar = TileLangKernel(build(False))
decode_vector = TileLangKernel(build(True))
