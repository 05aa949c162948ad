"""tilelang_lone_tma_load: a kernel whose one operation is a TMA load into shared memory fails to
compile on sm_90 (tile-ai/tilelang#1166, fixed in 0.1.7).

A whole bf16 row copied from global into shared memory with `T.copy` is lowered on sm_90 to one
TMA bulk load. TileLang 0.1.6.post2 then stops with `KeyError: 'key is not in Map'` when that load
is all the kernel does (a prefetch whose consumer lives elsewhere); the same load followed by a
store of the staged row (`load_then_store`) gets through lowering. From 0.1.7 on both compile.
Under 0.1.6.post2 this machine's nvcc stops on the generated host wrapper of any kernel that
reaches it (a SKIP that says so), so the control's PASS is shown from 0.1.7 on.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 4096


def build(store_back: bool):
    def make():
        if store_back:

            @T.prim_func
            def staged(A: T.Tensor((N,), "bfloat16"), B: T.Tensor((N,), "bfloat16")):  # type: ignore[valid-type]
                with T.Kernel(1, threads=32) as _:
                    row = T.alloc_shared((N,), "bfloat16")
                    T.copy(A, row)
                    T.copy(row, B)

        else:

            @T.prim_func
            def staged(A: T.Tensor((N,), "bfloat16")):  # type: ignore[valid-type]
                with T.Kernel(1, threads=32) as _:
                    row = T.alloc_shared((N,), "bfloat16")
                    T.copy(A, row)

        return staged

    return make


load_only = TileLangKernel(build(store_back=False))
load_then_store = TileLangKernel(build(store_back=True))
