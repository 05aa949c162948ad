"""The smallest kernel there is: if a toolchain cannot compile this for a target, it cannot build
that target at all here (a missing vendor linker, say), and the items SKIP instead of FAIL."""

import triton
import triton.language as tl


@triton.jit
def probe_kernel(out_ptr):
    tl.store(out_ptr + tl.arange(0, 16), tl.zeros((16,), dtype=tl.float32))
