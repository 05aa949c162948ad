"""tilelang_sync_in_ragged_loop: ThreadSync put a `__syncthreads()` inside a loop whose trip count
depends on the thread index, so threads with fewer trips leave the loop while the others wait at
the barrier, and the block hangs (tile-ai/tilelang#1106, fixed by tile-ai/tilelang#1631).

64 threads each sum their own pairs of a 400-element input into their own shared slot: thread `tx`
takes pairs tx, tx + 64, ... below 200, so threads 0-7 make four trips and the rest three. Each
thread touches only its own slot, yet up to 0.1.7.post2 the pass syncs the block inside the
serial loop (the vectorized pair load is what brings it). `serial_trips` is the same sum with a
trip count every thread shares: it is the control, no barrier inside its loop in any release.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

THREADS = 64
PAIRS = 200


def build_ragged():
    @T.prim_func
    def ragged_pair_sum(A: T.Tensor((2 * PAIRS,), "int32"), B: T.Tensor((THREADS,), "int32")):  # type: ignore[valid-type]
        with T.Kernel(1, threads=THREADS) as _:
            partial = T.alloc_shared((THREADS,), "int32")
            tx = T.get_thread_binding()
            partial[tx] = 0
            for i in T.serial((PAIRS - 1 - tx) // THREADS + 1):
                for j in T.vectorized(2):
                    partial[tx] += A[(i * THREADS + tx) * 2 + j]
            B[tx] = partial[tx]

    return ragged_pair_sum


def build_shared_trips():
    @T.prim_func
    def shared_trip_sum(A: T.Tensor((2 * PAIRS,), "int32"), B: T.Tensor((THREADS,), "int32")):  # type: ignore[valid-type]
        with T.Kernel(1, threads=THREADS) as _:
            partial = T.alloc_shared((THREADS,), "int32")
            tx = T.get_thread_binding()
            partial[tx] = 0
            for i in T.serial(PAIRS // THREADS):
                for j in T.vectorized(2):
                    partial[tx] += A[(i * THREADS + tx) * 2 + j]
            B[tx] = partial[tx]

    return shared_trip_sum


ragged_pair_sum = TileLangKernel(build_ragged)
shared_trip_sum = TileLangKernel(build_shared_trips)
