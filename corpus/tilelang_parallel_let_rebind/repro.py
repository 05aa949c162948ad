"""tilelang_parallel_let_rebind: a value named inside a `T.Parallel` loop stops layout inference
with "Trying to update var ... with a different value" (tile-ai/tilelang#1442).

A sort network's stage decides per element whether it sorts ascending from a bit of its index and
keeps that flag in shared memory. Naming the flag (`ascending = (i & 2) != 0`) makes it a let
binding in the loop body; layout inference bound it in its arithmetic analyzer once for the loop
variable and again after partitioning the loop over threads, a value the analyzer refuses as
different: `InternalError: Check failed: ... Trying to update var 'ascending' with a different
value: original=0 < T.bitwise_and(i, 2), new=0 < T.bitwise_and(tx, 2)` in 0.1.7. 0.1.7.post1 binds
it without the conflict. The same flag written without a name (`flags_inline`) compiles in 0.1.7.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 128


def build(named: bool):
    def make():
        @T.prim_func
        def stage_flags(out: T.Tensor((N,), "int8")):  # type: ignore[valid-type]
            with T.Kernel(1, threads=128) as _:
                flags = T.alloc_shared((N,), "bool")
                for i in T.Parallel(N):
                    if named:
                        ascending = (i & 2) != 0
                        flags[i] = ascending
                    else:
                        flags[i] = (i & 2) != 0
                for i in T.Parallel(N):
                    out[i] = T.Cast("int8", flags[i])

        return stage_flags

    return make


flags_named = TileLangKernel(build(named=True))
flags_inline = TileLangKernel(build(named=False))
