"""tilelang_serial_dynamic_bounds: `T.serial(start, stop)` whose bounds come from a dynamic grid
size fails in lowering (tile-ai/tilelang#1728).

A persistent kernel's loop: program `sm_id` of a grid as large as the (dynamic) token count walks
the blocks `sm_id .. sm_id + 1`. With both bounds depending on the kernel's block index and the
grid extent symbolic, the simplifier raised an InternalError while lowering. The same loop with a
static token count (`static_grid`) compiles in every release.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

HIDDEN = 64


def build(dynamic: bool):
    def make():
        tokens = T.dynamic("num_tokens") if dynamic else 128

        @T.prim_func
        def walk(A: T.Tensor((tokens,), "float32")):  # type: ignore[valid-type]
            with T.Kernel(tokens, threads=32) as sm_id:
                stop = sm_id + 1
                for block in T.serial(sm_id, stop):
                    A[block] = A[block] + HIDDEN

        return walk

    return make


dynamic_grid = TileLangKernel(build(True))
static_grid = TileLangKernel(build(False))
