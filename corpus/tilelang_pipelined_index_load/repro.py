"""tilelang_pipelined_index_load: a row number loaded from a tensor inside a `T.Pipelined` loop and
used to slice a copy leaves the loop variable free after pipelining, and MakePackedAPI refuses the
kernel: "variables [step] are used, but are not passed in as API arguments" (tile-ai/tilelang#1210,
fixed by tile-ai/tilelang#1212, first in 0.1.7).

Each of 4 steps reads a row number from `Rows`, copies that bfloat16 row of `Table` into shared
memory and clears a second shared buffer (one thread a block). `serial_gather` is the same loop
under `T.serial`, the control: it compiles from 0.1.7 on; under 0.1.6.post2 this machine's nvcc
fails in its own bfloat16 headers on it (a SKIP, said so), after the compiler passed MakePackedAPI.
On sm_90 both kernels fail otherwise in 0.1.7 (a check in its TMA lowering), so the case judges sm_80.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

STEPS = 4
WIDTH = 4
TABLE_ROWS = 4


def build_pipelined():
    @T.prim_func
    def pipelined_gather(
        Table: T.Tensor((TABLE_ROWS, WIDTH), "bfloat16"),  # type: ignore[valid-type]
        Rows: T.Tensor((STEPS,), "int32"),  # type: ignore[valid-type]
    ):
        with T.Kernel(STEPS, threads=1):
            row = T.alloc_shared((WIDTH,), "bfloat16")
            staged = T.alloc_shared((WIDTH,), "bfloat16")
            for step in T.Pipelined(STEPS, num_stages=1):
                picked = Rows[step]
                T.copy(Table[picked, :], row)
                T.clear(staged)

    return pipelined_gather


def build_serial():
    @T.prim_func
    def serial_gather(
        Table: T.Tensor((TABLE_ROWS, WIDTH), "bfloat16"),  # type: ignore[valid-type]
        Rows: T.Tensor((STEPS,), "int32"),  # type: ignore[valid-type]
    ):
        with T.Kernel(STEPS, threads=1):
            row = T.alloc_shared((WIDTH,), "bfloat16")
            staged = T.alloc_shared((WIDTH,), "bfloat16")
            for step in T.serial(STEPS):
                picked = Rows[step]
                T.copy(Table[picked, :], row)
                T.clear(staged)

    return serial_gather


pipelined_gather = TileLangKernel(build_pipelined)
serial_gather = TileLangKernel(build_serial)
