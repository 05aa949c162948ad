"""tilelang_atomic_load_dynamic_index: `T.atomic_load` at an index that changes in a loop stops
the access-pointer lowering (tile-ai/tilelang#2123).

A decoupled look-back, as a single-pass scan does it: each block walks back over the blocks before
it and reads their published status with acquire loads, at `status[look]` where `look` starts at the
block's index minus one and is decremented in a `while` loop. Lowering the atomic to an access
pointer expected its argument to still be a `BufferLoad` and found a call, so the compile stopped
with `TypeError: Downcast from tirx.Call to tirx.BufferLoad failed.` (0.1.9 and 0.1.10). 0.1.11
lowers dynamic indices (tile-ai/tilelang#2157). The same walk with plain loads (`lookback_plain`)
compiles in every release.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

TILES = 64


def build(acquire: bool):
    def make():
        @T.prim_func
        def lookback(status: T.Tensor((TILES,), "int32"), prefix: T.Tensor((TILES,), "int32")):  # type: ignore[valid-type]
            with T.Kernel(TILES, threads=32) as bx:
                look = T.alloc_var("int32")
                total = T.alloc_var("int32")
                look = bx - 1
                total = 0
                while look >= 0:
                    if acquire:
                        total += T.atomic_load(status[look], memory_order="acquire")
                    else:
                        total += status[look]
                    look -= 1
                prefix[bx] = total

        return lookback

    return make


lookback_acquire = TileLangKernel(build(acquire=True))
lookback_plain = TileLangKernel(build(acquire=False))
