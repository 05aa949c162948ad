"""tilelang_reduce_sm120_barrier: on sm_120 a cross-warp T.reduce_max run by half of the block
synchronizes with `__syncthreads()`, which the other half never reaches, and the kernel hangs
(tile-ai/tilelang#1534, fixed by tile-ai/tilelang#1540).

A block of 256 threads where only threads 128..255 take a row maximum over 512 columns, 4 a
thread (the report's fp8 indexer reduces in 128 of its block's 512 threads). The 128 reducing
threads span four warps, so the reduction goes through shared memory between two
barriers. The lowering picked the variant that bounds those barriers to the reducing threads
(`run_hopper`, later `tl::NamedBarrier<128>`: `bar.sync id, 128`) for sm_90 and sm_100 only;
sm_120 got plain `AllReduce<..., 128>::run`, whose `__syncthreads()` waits for all 256 threads.
The same kernel for sm_90 and sm_100 gets the bounded barrier in every release (0.1.6.post2 to
0.1.15).
"""

import tilelang.language as T

from kregress.case import TileLangKernel

COLS = 512
THREADS = 256
FIRST_REDUCING_THREAD = 128


def build():
    @T.prim_func
    def upper_half_row_max(A: T.Tensor((1, COLS), "float32"), M: T.Tensor((1,), "float32")):  # type: ignore[valid-type]
        with T.Kernel(1, threads=THREADS) as _:
            tx = T.get_thread_binding()
            row = T.alloc_fragment((1, COLS), "float32")
            row_max = T.alloc_fragment((1,), "float32")
            if tx >= FIRST_REDUCING_THREAD:
                T.copy(A, row)
                T.reduce_max(row, row_max, dim=1)
                T.copy(row_max, M)

    return upper_half_row_max


upper_half_row_max = TileLangKernel(build)
