"""tilelang_store_256_sm90: a 256-bit vectorized global store emits `tl::store_global_256`, which
TileLang defines only for sm_100 (tile-ai/tilelang#2629).

Broadcasting one float32 value into 8 outputs (a row initialized to a scale). Eight floats make a
256-bit store, and the codegen picked `tl::store_global_256`, present in TileLang's templates for
Blackwell only: on sm_90 nvcc stopped at `namespace "tl" has no member "store_global_256"`. Four
floats (128 bits, `fill_4`) compile in every release; 0.1.15 compiles the 256-bit store too.
"""

import tilelang.language as T

from kregress.case import TileLangKernel


def build(lanes: int):
    def make():
        @T.prim_func
        def fill_row(A: T.Tensor((1,), "float32"), out: T.Tensor((lanes,), "float32")):  # type: ignore[valid-type]
            with T.Kernel(1, threads=1) as _:
                out[0:lanes] = T.Broadcast(A[0], lanes)

        return fill_row

    return make


fill_8 = TileLangKernel(build(8))
fill_4 = TileLangKernel(build(4))
