"""tilelang_column_broadcast_width: layout inference divides by zero on a column broadcast whose
tile width is not a power of two (tile-ai/tilelang#2394).

Per-column scales (a bias row, say) broadcast over a 64 x 48 tile. For a width of 48, iterator
split normalization covered the column iterator with a span of 64; `get_unused_iters` counted only
an exact match as full coverage, synthesized a leftover split of extent zero and TVM's constant
folder stopped with `Check failed: pb->value != 0 : Divide by zero`. The same kernel 32 wide
(`scale_width_32`) compiles in every release.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

ROWS, TILES = 64, 4


def build(width: int):
    def make():
        cols = width * TILES

        @T.prim_func
        def column_scale(
            scales: T.Tensor((cols,), "bfloat16"),  # type: ignore[valid-type]
            out: T.Tensor((ROWS, cols), "bfloat16"),  # type: ignore[valid-type]
        ):
            with T.Kernel(TILES, threads=128) as bx:
                scale_shared = T.alloc_shared((width,), "bfloat16")
                scale = T.alloc_fragment((width,), "float32")
                tile = T.alloc_fragment((ROWS, width), "float32")
                tile_shared = T.alloc_shared((ROWS, width), "bfloat16")
                T.copy(scales[bx * width], scale_shared)
                T.copy(scale_shared, scale)
                for i, j in T.Parallel(ROWS, width):
                    tile[i, j] = scale[j] * 2.0
                T.copy(tile, tile_shared)
                T.copy(tile_shared, out[0, bx * width])

        return column_scale

    return make


scale_width_48 = TileLangKernel(build(48))
scale_width_32 = TileLangKernel(build(32))
