"""tilelang_round_away_bf16: `T.round(x, "ties-away-from-zero")` on bfloat16 and float8 emits a bare
`roundf`, whose float result nvcc will not assign back (tile-ai/tilelang#2635, fixed by #2873).

Snapping quantization scales to whole numbers, half-way cases away from zero, kept in the input's
dtype. The intrinsic lowering picked `round` for 64-bit floats and `roundf` for everything else, so
a bfloat16 or float8 element became `B[i] = roundf(A[i]);`: `roundf` returns a float, and the
16- and 8-bit wrapper types have no assignment from float, so nvcc stopped at `no operator "="
matches these operands`. float16 gets through (its wrapper takes a float), and so does float32;
those twins (`snap_f16`, `snap_f32`) compile in every release. The fix routes every float dtype
through a `tl::RoundTiesAwayFromZero` overload that converts back.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 128


def build(dtype: str):
    def make():
        @T.prim_func
        def snap(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):  # type: ignore[valid-type]
            with T.Kernel(1, threads=128) as _:
                for i in T.Parallel(N):
                    B[i] = T.round(A[i], "ties-away-from-zero")

        return snap

    return make


snap_bf16 = TileLangKernel(build("bfloat16"))
snap_e4m3 = TileLangKernel(build("float8_e4m3"))
snap_f16 = TileLangKernel(build("float16"))
snap_f32 = TileLangKernel(build("float32"))
