"""amd_buffer_atomic_xchg_f64: `tl.atomic_xchg` of float64 values aborts the AMD backend in
instruction selection (triton-lang/triton#11904, open).

Swapping in the newest float64 estimate per slot and keeping the one it replaces. The AMD backend
turns the exchange into a buffer atomic on the value's own type, and LLVM's AMDGPU backend has no
f64 buffer swap: `LLVM ERROR: Cannot select: ... AMDGPUISD::BUFFER_ATOMIC_SWAP`, and the process
aborts. Releases up to 3.5.1 used a global atomicrmw and compile it; 3.6.0 to 3.8.0 stop earlier,
at the intrinsic's name (triton-lang/triton#11019, the case amd_buffer_atomic_xchg). The int64
twin (`swap_i64`, the same width) compiles wherever the name is right.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

SLOTS = 256


@triton.jit
def swap_kernel(estimate_ptr, newest_ptr, previous_ptr, SLOTS: tl.constexpr):
    offsets = tl.arange(0, SLOTS)
    previous = tl.atomic_xchg(estimate_ptr + offsets, tl.load(newest_ptr + offsets))
    tl.store(previous_ptr + offsets, previous)


def operands(dtype: torch.dtype, device: str = "cpu") -> dict:
    index = torch.arange(SLOTS, dtype=torch.float64)
    tensors = {"estimate_ptr": index / 3, "newest_ptr": index / 7, "previous_ptr": torch.zeros(SLOTS)}
    return {k: v.to(dtype=dtype, device=device) for k, v in tensors.items()}


swap_f64 = TritonKernel(swap_kernel, args=lambda: {**operands(torch.float64), "SLOTS": SLOTS})
swap_i64 = TritonKernel(swap_kernel, args=lambda: {**operands(torch.int64), "SLOTS": SLOTS})


def check_swap(device: str):
    args = operands(torch.float64, device)
    before = args["estimate_ptr"].cpu().numpy().copy()
    swap_kernel[(1,)](**args, SLOTS=SLOTS)
    estimate, previous, newest = (
        args[k].cpu().numpy() for k in ("estimate_ptr", "previous_ptr", "newest_ptr")
    )
    return {"estimate": estimate, "previous": previous}, {"estimate": newest, "previous": before}
