"""tilelang_partial_sync_in_branch: two shared tables written by the first warp under `if tx < 32`
and read by the whole block get a barrier inside the branch, `tl::__sync_thread_partial<3, 32>()`,
which only the 32 writing threads reach (tile-ai/tilelang#1604, fixed by tile-ai/tilelang#1631,
first in 0.1.7.post3).

256 threads; threads 0-31 fill two 32-entry shared tables, then every thread reads entry tx % 32
of the first. Up to 0.1.7.post2 ThreadSync plans a barrier of the writing threads inside the
branch; from 0.1.7.post3 there is none there. `one_table_fill` is the same with one table: measured
here, no barrier inside its branch in any release, so the control shows that the second buffer is
what brings the partial barrier.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

THREADS = 256
ENTRIES = 32


def build_two_tables():
    @T.prim_func
    def two_table_fill(Out: T.Tensor((THREADS,), "float32")):  # type: ignore[valid-type]
        with T.Kernel(1, threads=THREADS) as _:
            table = T.alloc_shared((ENTRIES,), "float32")
            squares = T.alloc_shared((ENTRIES,), "float32")
            tx = T.get_thread_binding()
            if tx < ENTRIES:
                table[tx] = tx * 2.0
                squares[tx] = tx * tx * 1.0
            Out[tx] = table[tx % ENTRIES]

    return two_table_fill


def build_one_table():
    @T.prim_func
    def one_table_fill(Out: T.Tensor((THREADS,), "float32")):  # type: ignore[valid-type]
        with T.Kernel(1, threads=THREADS) as _:
            table = T.alloc_shared((ENTRIES,), "float32")
            tx = T.get_thread_binding()
            if tx < ENTRIES:
                table[tx] = tx * 2.0
            Out[tx] = table[tx % ENTRIES]

    return one_table_fill


two_table_fill = TileLangKernel(build_two_tables)
one_table_fill = TileLangKernel(build_one_table)
