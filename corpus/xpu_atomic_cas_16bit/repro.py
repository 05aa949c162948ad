"""xpu_atomic_cas_16bit: `tl.atomic_cas` on float16 memory does not compile for Intel GPUs
(intel/intel-xpu-backend-for-triton#5025, open).

A table of float16 slots claimed by compare-and-swap: a slot holding the sentinel -1 takes the
new value. Intel GPUs have no 16-bit compare-and-swap instruction, and the backend, which
emulates 16-bit atomic read-modify-writes with a 32-bit loop, had no such emulation for CAS: the
pass pipeline fails ("PassManager::run failed") for PVC and DG2. The float32 table (`claim_f32`)
compiles.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

SLOTS = 256


@triton.jit
def claim_kernel(slot_ptr, value_ptr, old_ptr, SLOTS: tl.constexpr):
    offsets = tl.arange(0, SLOTS)
    value = tl.load(value_ptr + offsets)
    sentinel = tl.full([SLOTS], -1.0, value.dtype)
    tl.store(old_ptr + offsets, tl.atomic_cas(slot_ptr + offsets, sentinel, value))


def operands(dtype: torch.dtype, device: str = "cpu") -> dict:
    index = torch.arange(SLOTS, dtype=torch.float32)
    slots = torch.where(index % 2 == 0, torch.full_like(index, -1.0), 100.0 + index % 50)
    tensors = {"slot_ptr": slots, "value_ptr": index % 64 / 4, "old_ptr": torch.zeros(SLOTS)}
    return {k: v.to(dtype=dtype, device=device) for k, v in tensors.items()}


claim_f16 = TritonKernel(claim_kernel, args=lambda: {**operands(torch.float16), "SLOTS": SLOTS})
claim_f32 = TritonKernel(claim_kernel, args=lambda: {**operands(torch.float32), "SLOTS": SLOTS})


def check_claim(device: str):
    args = operands(torch.float16, device)
    before = args["slot_ptr"].cpu().double().numpy().copy()
    claim_kernel[(1,)](**args, SLOTS=SLOTS)
    value = args["value_ptr"].cpu().double().numpy()
    slots, old = (args[k].cpu().double().numpy() for k in ("slot_ptr", "old_ptr"))
    return {"slots": slots, "old": old}, {"slots": np.where(before == -1.0, value, before), "old": before}
