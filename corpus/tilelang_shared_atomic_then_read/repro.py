"""tilelang_shared_atomic_then_read: a `T.atomic_add` into shared memory is followed by a read of
a slot another thread added to, with no barrier between them (tile-ai/tilelang#1257, fixed by
tile-ai/tilelang#1827, first in 0.1.8).

64 threads clear their own slot, then each atomically adds its index into its neighbour's slot
(`(tx + 1) % 64`) and reads its own slot back: what it reads was written by thread tx - 1, so the
block must sync between the adds and the read. Up to 0.1.7.post3 ThreadSync sees no write in the
atomic (an intrinsic call) and emits only the barrier after the clearing stores; from 0.1.8 the
second barrier is there. `neighbour_store` is the same exchange with a plain store: the pass syncs
its read in every release, the control.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

THREADS = 64


def build_atomic():
    @T.prim_func
    def neighbour_atomic(Out: T.Tensor((THREADS,), "int32")):  # type: ignore[valid-type]
        with T.Kernel(1, threads=THREADS) as _:
            slots = T.alloc_shared((THREADS,), "int32")
            tx = T.get_thread_binding()
            slots[tx] = 0
            T.atomic_add(slots[(tx + 1) % THREADS], tx)
            Out[tx] = slots[tx]

    return neighbour_atomic


def build_store():
    @T.prim_func
    def neighbour_store(Out: T.Tensor((THREADS,), "int32")):  # type: ignore[valid-type]
        with T.Kernel(1, threads=THREADS) as _:
            slots = T.alloc_shared((THREADS,), "int32")
            tx = T.get_thread_binding()
            slots[tx] = 0
            slots[(tx + 1) % THREADS] = tx
            Out[tx] = slots[tx]

    return neighbour_store


neighbour_atomic = TileLangKernel(build_atomic)
neighbour_store = TileLangKernel(build_store)
