"""amd_atomic_cas_float: `tl.atomic_cas` on float32 memory crashes the AMD backend
(triton-lang/triton#9116).

A slot table claimed with compare-and-swap: a slot still holding the sentinel -1.0 takes the new
value, a claimed one keeps its own, and the kernel returns what each slot held. LLVM's `cmpxchg`
takes integer operands only; the AMD lowering passed the float32 values through unchanged, so the
pass pipeline failed (`PassManager::run failed`) for every release before 3.7.0, on gfx942 only:
the NVIDIA lowering bitcasts to i32 and compiles the same kernel.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

SLOTS = 256
SENTINEL = -1.0


@triton.jit
def claim_slots_kernel(slot_ptr, value_ptr, old_ptr, SENTINEL: tl.constexpr, SLOTS: tl.constexpr):
    offsets = tl.arange(0, SLOTS)
    value = tl.load(value_ptr + offsets)
    old = tl.atomic_cas(slot_ptr + offsets, tl.full([SLOTS], SENTINEL, tl.float32), value)
    tl.store(old_ptr + offsets, old)


def operands(device: str = "cpu") -> dict:
    """Even slots are free (the sentinel), odd ones already claimed."""
    index = torch.arange(SLOTS, dtype=torch.float32)
    slots = torch.where(index % 2 == 0, torch.full_like(index, SENTINEL), 1000.0 + index)
    tensors = {"slot_ptr": slots, "value_ptr": index * 0.5, "old_ptr": torch.zeros(SLOTS)}
    return {k: v.to(device) for k, v in tensors.items()}


claim = TritonKernel(claim_slots_kernel, configs=[{"num_warps": 4}],
                     args=lambda: {**operands(), "SENTINEL": SENTINEL, "SLOTS": SLOTS})  # fmt: skip


def check_claim(device: str):
    args = operands(device)
    before = args["slot_ptr"].cpu().double().numpy().copy()
    claim_slots_kernel[(1,)](**args, SENTINEL=SENTINEL, SLOTS=SLOTS)
    value = args["value_ptr"].cpu().double().numpy()
    expected_slots = np.where(before == SENTINEL, value, before)
    actual = {"slots": args["slot_ptr"].cpu().double().numpy(), "old": args["old_ptr"].cpu().double().numpy()}
    return actual, {"slots": expected_slots, "old": before}
