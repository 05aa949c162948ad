"""tilelang_eager_reduce: an eager `@tilelang.jit` kernel (shapes from `T.const`) cannot use
`T.reduce_max`; the frontend fails while building the kernel (tile-ai/tilelang#1690).

Eager kernels are written as plain Python run once under a builder, instead of a `T.prim_func`
parsed from its source. The reduction's macro built its buffer regions the `T.prim_func` way, which
the eager builder could not take: `ValueError: Cannot convert to BufferLoad: frag[0:rows]`, raised
before anything is compiled. 0.1.8 evaluates an eager kernel's body lazily and builds it. The same
row maximum written as a `T.prim_func` (`row_max_prim`) builds in every release.
"""

import tilelang
import tilelang.language as T

from kregress.case import TileLangKernel

M = 64


@tilelang.jit
def row_max_eager(X, Y):
    rows = T.const("rows")
    X: T.Tensor[[rows], T.float32]
    Y: T.Tensor[[1], T.float32]
    with T.Kernel(1, threads=128):
        frag = T.alloc_fragment((rows,), T.float32)
        best = T.alloc_fragment((1,), T.float32)
        T.copy(X, frag)
        T.reduce_max(frag, best, dim=0)
        T.copy(best, Y)


def prim_func():
    @T.prim_func
    def row_max(X: T.Tensor((M,), "float32"), Y: T.Tensor((1,), "float32")):  # type: ignore[valid-type]
        with T.Kernel(1, threads=128) as _:
            frag = T.alloc_fragment((M,), "float32")
            best = T.alloc_fragment((1,), "float32")
            T.copy(X, frag)
            T.reduce_max(frag, best, dim=0)
            T.copy(best, Y)

    return row_max


row_max = TileLangKernel(lambda: row_max_eager.get_tir(rows=M))
row_max_prim = TileLangKernel(prim_func)
