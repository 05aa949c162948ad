"""tilelang_cumsum_of_view: `T.cumsum` along dim 1 of a 2-D view of a 1-D shared buffer fails
layout inference (tile-ai/tilelang#1001, fixed in 0.1.7).

Running totals of each row, staged in a 1-D shared row that is scanned through `T.view` as a
(1, N) tile. TileLang 0.1.6.post2 checks the scan's dimension against the shape of the buffer
under the view (one dimension), not the view's (two), and stops with `InternalError: Check
failed: node->dim < ...src->shape.size()`. The same scan of the row itself, along its one
dimension (`no_view`), compiles from 0.1.7 on; under 0.1.6.post2 this machine's nvcc stops on
its generated host wrapper (a SKIP that says so), while `through_view` fails in layout inference
before any source is generated.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

ROWS, N = 4, 128


def build(through_view: bool):
    def make():
        @T.prim_func
        def running_totals(A: T.Tensor((ROWS, N), "float32"), B: T.Tensor((ROWS, N), "float32")):  # type: ignore[valid-type]
            with T.Kernel(ROWS, threads=128) as row:
                if through_view:
                    flat = T.alloc_shared((N,), "float32")
                    T.copy(A[row, :], flat)
                    T.cumsum(T.view(flat, (1, N)), dim=1)
                    T.copy(flat, B[row, :])
                else:
                    flat = T.alloc_shared((N,), "float32")
                    T.copy(A[row, :], flat)
                    T.cumsum(flat, dim=0)
                    T.copy(flat, B[row, :])

        return running_totals

    return make


through_view = TileLangKernel(build(through_view=True))
no_view = TileLangKernel(build(through_view=False))
