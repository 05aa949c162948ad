"""tilelang_two_alloc_vars: a second `T.alloc_var` in a kernel breaks the CUDA source of the first
(tile-ai/tilelang#1678, 0.1.7 to 0.1.7.post3, fixed in 0.1.8).

A running maximum of a few values staged in registers (`T.alloc_local`), kept in a float
`T.alloc_var`, beside an int `T.alloc_var` declared first and never read again. In TileLang 0.1.7
to 0.1.7.post3 the generated CUDA gives the float variable the first variable's declaration (the
int variable is read nowhere, and only a read keeps the two apart), so the max of it and a float
register reaches nvcc with mixed operand types ("more than one instance of
overloaded function "max""). The same kernel without the counter (`one_var`) compiles in those
releases, so a FAIL of `two_vars` is the second variable.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 4


def build(with_counter: bool):
    def make():
        @T.prim_func
        def running_max(A: T.Tensor((N,), "float32"), B: T.Tensor((1,), "float32")):  # type: ignore[valid-type]
            with T.Kernel(1, threads=1) as _:
                if with_counter:
                    seen = T.alloc_var("int32")
                    seen = 1  # noqa: F841 (never read: the bug needs it so)
                staged = T.alloc_local((N,), "float32")
                for k in T.serial(N):
                    staged[k] = A[k]
                best = T.alloc_var("float32")
                best = A[0]
                best = T.max(best, staged[1])
                B[0] = best

        return running_max

    return make


two_vars = TileLangKernel(build(with_counter=True))
one_var = TileLangKernel(build(with_counter=False))
