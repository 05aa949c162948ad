"""tilelang_atomic_add_f32_into_f16: `T.atomic_add` of float32 values into a float16 buffer, two
elements a thread, calls `AtomicAddx2` with mismatched operand types (tile-ai/tilelang#1885).

Partial sums kept in a float32 fragment are added atomically into a float16 output, as a split-K
(stream-K) GEMM's epilogue does. With two consecutive elements per thread the atomic is vectorized
into TileLang's `AtomicAddx2(half_t*, ...)` template, but the float32 operands were handed to it
uncast, so nvcc stopped at `no instance of overloaded function "AtomicAddx2" matches the argument
list`. A regression: 0.1.7.post1 compiles this kernel, 0.1.7.post3 and 0.1.8 do not, and 0.1.9
(the fix casts the value to the destination's type) compiles it again. The float32 twin
(`accumulate_f32`, nothing to cast) compiles in every release.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 256  # 128 threads: two consecutive elements a thread, the AtomicAddx2 path


def build(out_dtype: str):
    def make():
        @T.prim_func
        def accumulate(partial: T.Tensor((N,), "float32"), out: T.Tensor((N,), out_dtype)):  # type: ignore[valid-type]
            with T.Kernel(1, threads=128) as _:
                partial_local = T.alloc_fragment((N,), "float32")
                T.copy(partial, partial_local)
                for i in T.Parallel(N):
                    T.atomic_add(out[i], partial_local[i])

        return accumulate

    return make


accumulate_f16 = TileLangKernel(build("float16"))
accumulate_f32 = TileLangKernel(build("float32"))
