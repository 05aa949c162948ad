"""tilelang_int4_fill: `T.fill` of an int4 shared buffer fails the int4 broadcast codegen
(tile-ai/tilelang#2997).

Initializing a tile of 4-bit weights to a fill code before a partial load overwrites part of it.
`HoistBroadcastValues` binds the fill value to a variable, and the int4 branch of the CUDA
Broadcast codegen then insisted on a constant: `Check failed: (p) is false: ... broadcast_var is
not a constant`. The same fill of an int8 buffer (`fill_int8`) compiles in every release.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 128


def build(dtype: str):
    def make():
        @T.prim_func
        def fill_tile(out: T.Tensor((N,), dtype)):  # type: ignore[valid-type]
            with T.Kernel(1, threads=32) as _:
                tile = T.alloc_shared((N,), dtype)
                T.fill(tile, 1)
                T.copy(tile, out)

        return fill_tile

    return make


fill_int4 = TileLangKernel(build("int4"))
fill_int8 = TileLangKernel(build("int8"))
