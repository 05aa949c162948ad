"""gluon_amd_buffer_load_to_shared_other: a masked `buffer_load_to_shared` never writes its `other`
value (triton-lang/triton#11256).

A bounds-checked copy through LDS on CDNA4: 256 float32 offsets, the lanes past `n` masked off,
loaded straight into shared memory with `cdna4.async_copy.buffer_load_to_shared(..., mask=mask,
other=1.0)`, then read back and stored. Masked-off lanes must find `other` in shared memory. The
AMD lowering branched on `lane predicate and mask` around the direct-to-LDS load and emitted the
store of `other` inside that branch, the one block that masked-off lanes never enter, so the store
was dead: LLVM deleted it and those slots kept whatever LDS held before. From 3.8.0 the store sits
in the block the masked-off lanes take. `masked_load_then_store` fills the same buffer through
registers (`gl.load(..., other=1.0)` then `smem.store`): its shared-memory store is there in every
release, so the pattern below finds an LDS store whenever one is emitted.
"""

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.amd.cdna4 import async_copy

from kregress.case import GluonKernel

BLOCK, VALID, WARPS = 256, 200, 4


@gluon.jit
def bounded_copy_kernel(src_ptr, dst_ptr, n, BLOCK: gl.constexpr, DIRECT: gl.constexpr):
    # 64 lanes a warp: a CDNA kernel.
    layout: gl.constexpr = gl.BlockedLayout([1], [64], [4], [0])
    offsets = gl.arange(0, BLOCK, layout=layout)
    mask = offsets < n
    smem = gl.allocate_shared_memory(gl.float32, [BLOCK], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    if DIRECT:
        async_copy.buffer_load_to_shared(smem, src_ptr, offsets, mask=mask, other=1.0)
        async_copy.commit_group()
        async_copy.wait_group(0)
    else:
        smem.store(gl.load(src_ptr + offsets, mask=mask, other=1.0))
    gl.store(dst_ptr + offsets, smem.load(layout))


def kernel(direct: bool) -> GluonKernel:
    def args() -> dict:
        return {
            "src_ptr": torch.empty(BLOCK),
            "dst_ptr": torch.empty(BLOCK),
            "n": VALID,
            "BLOCK": BLOCK,
            "DIRECT": direct,
        }

    return GluonKernel(bounded_copy_kernel, args=args, configs=[{"num_warps": WARPS}])


direct_to_shared = kernel(True)
masked_load_then_store = kernel(False)
