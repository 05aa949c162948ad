"""gluon_membar_reinterpret_subslice: no barrier between a shared-memory write and an overlapping
read through a reinterpreted view (triton-lang/triton#11325).

A float32 [32, 64] shared buffer (unswizzled, 256 bytes a row) is written through its column
slice [0, 32), bytes 0-127 of each row. The same bytes are then viewed as float16 [32, 128]
(same 256-byte rows) and its column slice [32, 64), bytes 64-127 of each row, is read back: half
of what was just written, by other threads, so a CTA barrier must separate the two. From 3.7.0
the barrier analysis compared two subslices of one allocation by their logical offsets whenever
their shapes and layouts matched, without asking whether the offsets were in the same view:
columns [0, 32) and [32, 64) looked disjoint and the `bar.sync` was dropped, a race on the
device. 3.4.0 to 3.6.0 kept it (no subslice comparison yet) and 3.9.0 keeps it (physical
footprints). `matching_offsets` reads the same view at column 0, where even the logical offsets
overlap: its barrier is there in every release.
The memdesc reinterpret method was `_reinterpret` until 3.8.0 and is `reinterpret` from 3.9.0;
`as_half` picks the one this release has.
"""

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from kregress.case import GluonKernel

ROWS, COLS, WARPS = 32, 32, 4

if hasattr(gl.shared_memory_descriptor, "reinterpret"):

    @gluon.jit
    def as_half(smem, layout: gl.constexpr):
        return smem.reinterpret(gl.float16, [32, 128], layout)

else:

    @gluon.jit
    def as_half(smem, layout: gl.constexpr):
        return smem._reinterpret(gl.float16, [32, 128], layout)


@gluon.jit
def reread_kernel(src_ptr, dst_ptr, READ_COL: gl.constexpr):
    # 32 lanes a warp: a CUDA kernel.
    blocked: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    rows = gl.arange(0, 32, layout=gl.SliceLayout(1, blocked))
    cols = gl.arange(0, 32, layout=gl.SliceLayout(0, blocked))
    offsets = rows[:, None] * 32 + cols[None, :]
    flat: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    smem = gl.allocate_shared_memory(gl.float32, [32, 64], flat)
    smem.slice(0, 32, 1).store(gl.load(src_ptr + offsets))  # bytes [0, 128) of each row
    half = as_half(smem, flat)  # the same 256-byte rows as float16 [32, 128]
    out = half.slice(READ_COL, 32, 1).load(blocked)  # bytes [2 * READ_COL, 2 * READ_COL + 64)
    gl.store(dst_ptr + offsets, out.to(gl.float32))


def kernel(read_col: int) -> GluonKernel:
    def args() -> dict:
        return {
            "src_ptr": torch.empty(ROWS * COLS),
            "dst_ptr": torch.empty(ROWS * COLS),
            "READ_COL": read_col,
        }

    return GluonKernel(reread_kernel, args=args, configs=[{"num_warps": WARPS}])


aliased_offsets = kernel(32)
matching_offsets = kernel(0)
