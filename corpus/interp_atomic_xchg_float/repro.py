"""interp_atomic_xchg_float: the interpreter refuses `tl.atomic_xchg` on float32 memory
(triton-lang/triton#11904, open).

Swapping in a new float32 value per slot and keeping the old one, the same kernel that compiles for
every GPU target. The interpreter's table of exchange types holds integers only, so under
TRITON_INTERPRET=1 the kernel stops with `ValueError: Unsupported data type` instead of running:
a float exchange cannot be debugged on the CPU at all.
"""

import torch
import triton
import triton.language as tl

SLOTS = 64


@triton.jit
def swap_kernel(slot_ptr, new_ptr, old_ptr, SLOTS: tl.constexpr):
    offsets = tl.arange(0, SLOTS)
    old = tl.atomic_xchg(slot_ptr + offsets, tl.load(new_ptr + offsets))
    tl.store(old_ptr + offsets, old)


def check_swap(device: str):
    slots = torch.arange(SLOTS, dtype=torch.float32).to(device) / 4
    new = torch.arange(SLOTS, dtype=torch.float32).to(device) * -1.5
    old = torch.zeros(SLOTS, device=device)
    before = slots.cpu().double().numpy().copy()
    swap_kernel[(1,)](slots, new, old, SLOTS=SLOTS)
    actual = {"slots": slots.cpu().double().numpy(), "old": old.cpu().double().numpy()}
    return actual, {"slots": new.cpu().double().numpy(), "old": before}
