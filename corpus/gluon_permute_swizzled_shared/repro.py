"""gluon_permute_swizzled_shared: `permute` of a swizzled shared-memory buffer crashes the Gluon
frontend (triton-lang/triton#8003).

A tile transpose through shared memory: a [64, 64] float16 tile is stored into a buffer with a
`SwizzledSharedLayout`, and read back through `smem.permute((1, 0))`. Permuting a shared-memory
descriptor asks the C++ side for the transposed view's layout and translates it back into a Gluon
layout object (`layoutToGluon`). That translation had no branch for `#ttg.swizzled_shared`, so from
3.4.0 (the first release with Gluon) to 3.5.1 the compiling process died with a segmentation
fault while the kernel was being traced. 3.6.0 translates the swizzled layout.
`direct_read` reads the same buffer without the permute and compiles in every release, so a
crash of `permuted_read` is the permute's layout translation.
"""

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from kregress.case import GluonKernel

N, WARPS = 64, 4


@gluon.jit
def transpose_tile_kernel(src_ptr, dst_ptr, N: gl.constexpr, PERMUTE: gl.constexpr):
    # 32 lanes a warp: a CUDA kernel.
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    rows = gl.arange(0, N, layout=gl.SliceLayout(1, blocked))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, blocked))
    offsets = rows[:, None] * N + cols[None, :]
    tile = gl.load(src_ptr + offsets)
    swizzled: gl.constexpr = gl.SwizzledSharedLayout(8, 1, 8, [1, 0])
    smem = gl.allocate_shared_memory(gl.float16, [N, N], swizzled, tile)
    if PERMUTE:  # noqa: SIM108 (a compile-time branch: one kernel or the other)
        out = smem.permute((1, 0)).load(blocked)
    else:
        out = smem.load(blocked)
    gl.store(dst_ptr + offsets, out)


def kernel(permute: bool) -> GluonKernel:
    def args() -> dict:
        return {
            "src_ptr": torch.empty(N * N, dtype=torch.float16),
            "dst_ptr": torch.empty(N * N, dtype=torch.float16),
            "N": N,
            "PERMUTE": permute,
        }

    return GluonKernel(transpose_tile_kernel, args=args, configs=[{"num_warps": WARPS}])


permuted_read = kernel(True)
direct_read = kernel(False)
