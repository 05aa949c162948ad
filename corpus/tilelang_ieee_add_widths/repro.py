"""tilelang_ieee_add_widths: `T.ieee_add` is spelled right only for float32 (tile-ai/tilelang#2510,
fixed by #2619).

Summing two vectors with an explicit IEEE rounding mode. The CUDA codegen named the intrinsic by
gluing a prefix onto the float32 name (`fadd`): for float64 that made `__dfadd_rn`, which CUDA does
not have (`__dadd_rn` is), so nvcc stopped at an undefined identifier; for float16 and bfloat16 it
returned no name at all, and the call was printed as a bare parenthesized argument list, a C comma
expression that compiles and yields the second operand instead of the sum. The float32 twin
(`__fadd_rn`) is right in every release.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 128


def build(dtype: str):
    def make():
        @T.prim_func
        def vadd(
            A: T.Tensor((N,), dtype),  # type: ignore[valid-type]
            C: T.Tensor((N,), dtype),  # type: ignore[valid-type]
            B: T.Tensor((N,), dtype),  # type: ignore[valid-type]
        ):
            with T.Kernel(1, threads=128) as _:
                for i in T.Parallel(N):
                    B[i] = T.ieee_add(A[i], C[i], "rn")

        return vadd

    return make


vadd_f64 = TileLangKernel(build("float64"))
vadd_f16 = TileLangKernel(build("float16"))
vadd_bf16 = TileLangKernel(build("bfloat16"))
vadd_f32 = TileLangKernel(build("float32"))
