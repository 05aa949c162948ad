"""tilelang_int8_broadcast_32: `T.Broadcast` of an int8 value to 32 lanes emits `make_longlong4`
with 32 arguments (tile-ai/tilelang#2480).

Filling a 32-byte register tile with one int8 fill code (a padding value for a quantized row).
The CUDA codegen lowered the 256-bit broadcast to one `make_longlong4(...)` taking an argument per
int8 lane; no overload takes 32, so nvcc refused the kernel. Sixteen lanes (`fill_16`, 128 bits)
compile in every release.
"""

from __future__ import annotations

import tilelang.language as T

from kregress.case import TileLangKernel


def build(lanes: int):
    def make():
        @T.prim_func
        def fill(src: T.Tensor((1,), "int8"), out: T.Tensor((lanes,), "int8")):  # type: ignore[valid-type]
            with T.Kernel(1, threads=1) as _:
                packed = T.alloc_local((lanes,), "int8")
                packed[0:lanes] = T.Broadcast(src[0], lanes)
                for i in T.serial(lanes):
                    out[i] = packed[i]

        return fill

    return make


fill_32 = TileLangKernel(build(32))
fill_16 = TileLangKernel(build(16))
