"""gluon_tma_gather_subslice: a TMA gather into a row slice of a shared buffer is refused
(triton-lang/triton#11064).

A Blackwell kernel gathers 32 rows of 64 float16 from a tensor descriptor with
`blackwell.tma.async_gather` into rows [32, 64) of a [64, 64] NVMMA-swizzled shared buffer
(`smem.slice(32, 32)`), waits on the mbarrier, and reads the rows back. The slice keeps the
buffer's layout and starts on a whole swizzle pattern, so it is a valid TMA destination, as it is
for `async_copy_global_to_shared`. Up to 3.8.0 the gather's lowering (and, from 3.8.0, its
verifier) demanded that the destination's shape equal the allocation's and stopped with
"memdesc shape must match alloc shape"; 3.9.0 addresses the subview from its allocation and
compiles it. `gather_into_whole` gathers the same rows into a [32, 64] buffer of its own: it
compiles in every release that has Gluon.
"""

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import mbarrier, tma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from kregress.case import GluonKernel

ROWS, COLS, WARPS = 32, 64, 4


@gluon.jit
def gather_rows_kernel(desc, out_ptr, SLICED: gl.constexpr):
    # 32 lanes a warp: a CUDA kernel.
    BX: gl.constexpr = 32
    BY: gl.constexpr = 64
    index_layout: gl.constexpr = gl.SliceLayout(0, gl.BlockedLayout([1, 4], [32, 1], [1, 4], [1, 0]))
    rows = gl.arange(0, BX, layout=index_layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, BX * BY * 2)
    if SLICED:
        smem = gl.allocate_shared_memory(gl.float16, [2 * BX, BY], desc.layout)
        dst = smem.slice(BX, BX)  # rows [32, 64) of the buffer
    else:
        dst = gl.allocate_shared_memory(gl.float16, [BX, BY], desc.layout)
    tma.async_gather(desc, rows, 0, bar, dst)
    mbarrier.wait(bar, 0)
    mbarrier.invalidate(bar)
    out_layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [1, 4], [1, 0])
    r = gl.arange(0, BX, gl.SliceLayout(1, out_layout))[:, None]
    c = gl.arange(0, BY, gl.SliceLayout(0, out_layout))[None, :]
    gl.store(out_ptr + r * BY + c, dst.load(out_layout))


def kernel(sliced: bool) -> GluonKernel:
    def args() -> dict:
        layout = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
        table = torch.empty(256, COLS, dtype=torch.float16)
        return {
            "desc": TensorDescriptor(table, [256, COLS], [COLS, 1], [1, COLS], layout),
            "out_ptr": torch.empty(ROWS * COLS, dtype=torch.float16),
            "SLICED": sliced,
        }

    return GluonKernel(gather_rows_kernel, args=args, configs=[{"num_warps": WARPS}])


gather_into_slice = kernel(True)
gather_into_whole = kernel(False)
