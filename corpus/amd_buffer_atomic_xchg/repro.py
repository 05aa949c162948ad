"""amd_buffer_atomic_xchg: `tl.atomic_xchg` through AMD buffer atomics names an LLVM intrinsic
that does not exist (triton-lang/triton#11019).

Publishing a new generation of per-slot state while reading back the one it replaces, as a
lock-free double buffer does. Once the AMD backend turned global atomics into buffer atomics, an
exchange was emitted as `llvm.amdgcn.raw.ptr.buffer.atomic.exch`, the name of Triton's RMW kind,
where LLVM's intrinsic is `...atomic.swap`: translation to LLVM IR failed on gfx942 ("failed to
translate module to LLVM IR"). An atomic add through the same path (`accumulate`) compiled.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

SLOTS = 256


@triton.jit
def publish_kernel(state_ptr, new_ptr, old_ptr, SLOTS: tl.constexpr, ADD: tl.constexpr):
    offsets = tl.arange(0, SLOTS)
    new = tl.load(new_ptr + offsets)
    if ADD:  # noqa: SIM108 (a compile-time branch: one kernel or the other)
        old = tl.atomic_add(state_ptr + offsets, new)
    else:
        old = tl.atomic_xchg(state_ptr + offsets, new)
    tl.store(old_ptr + offsets, old)


def operands(device: str = "cpu") -> dict:
    index = torch.arange(SLOTS, dtype=torch.int32)
    tensors = {"state_ptr": index * 3, "new_ptr": index + 7, "old_ptr": torch.zeros(SLOTS, dtype=torch.int32)}
    return {k: v.to(device) for k, v in tensors.items()}


def kernel(add: bool) -> TritonKernel:
    return TritonKernel(publish_kernel, configs=[{"num_warps": 4}],
                        args=lambda: {**operands(), "SLOTS": SLOTS, "ADD": add})  # fmt: skip


publish = kernel(False)
accumulate = kernel(True)


def check_publish(device: str):
    args = operands(device)
    before = args["state_ptr"].cpu().double().numpy().copy()
    publish_kernel[(1,)](**args, SLOTS=SLOTS, ADD=False)
    state, old, new = (args[k].cpu().double().numpy() for k in ("state_ptr", "old_ptr", "new_ptr"))
    return {"state": state, "old": old}, {"state": new, "old": before}
