"""tilelang_var_set_in_parallel: a `T.alloc_var` assigned inside a `T.Parallel` loop is lowered as
an array (tile-ai/tilelang#1608, 0.1.7 to 0.1.7.post2, fixed in 0.1.7.post3).

Each iteration of a parallel loop over one row stores its element's 1-based index in one int
`T.alloc_var`, which is then written out (a compile repro: which store lands last is the loop's
order). In TileLang 0.1.7 to 0.1.7.post2 the loop is vectorized with the variable indexed like a
buffer (`last[v.y] = ...`), and nvcc rejects the generated CUDA ("expression must have
pointer-to-object type"). The same stores into a one-element `T.alloc_local` buffer (`in_buffer`)
compile in those releases, so a FAIL of `in_var` is the variable.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 64


def build(into_var: bool):
    def make():
        @T.prim_func
        def last_index(Out: T.Tensor((1,), "int32")):  # type: ignore[valid-type]
            with T.Kernel(1, threads=32) as _:
                if into_var:
                    last = T.alloc_var("int32")
                    last = 0
                    for i, j in T.Parallel(1, N):
                        last = i * N + j + 1
                    Out[0] = last
                else:
                    held = T.alloc_local((1,), "int32")
                    held[0] = 0
                    for i, j in T.Parallel(1, N):
                        held[0] = i * N + j + 1
                    Out[0] = held[0]

        return last_index

    return make


in_var = TileLangKernel(build(into_var=True))
in_buffer = TileLangKernel(build(into_var=False))
