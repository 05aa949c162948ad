"""tilelang_cumsum_threads_96: `T.cumsum` over a shared buffer in a block of 96 threads stops nvcc
at a `static_assert` in the scan template (tile-ai/tilelang#2576, open).

Running totals of a row of 256 values in a block sized to the rest of the kernel (three warps).
The scan's device template accepts only 32, 64, 128, 256, 512 or 1024 threads and says so with a
`static_assert` inside the generated source, so instead of compiling (or refusing the block size
up front) nvcc aborts. The same scan with 128 threads (`threads_128`) compiles.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 256


def build(threads: int):
    def make():
        @T.prim_func
        def running_totals(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):  # type: ignore[valid-type]
            with T.Kernel(1, threads=threads) as _:
                row = T.alloc_shared((N,), "float32")
                T.copy(A, row)
                T.cumsum(row)
                T.copy(row, B)

        return running_totals

    return make


threads_96 = TileLangKernel(build(96))
threads_128 = TileLangKernel(build(128))
