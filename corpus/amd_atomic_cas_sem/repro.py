"""amd_atomic_cas_sem: `tl.atomic_cas` ignored `sem=` and `scope=` on AMD
(triton-lang/triton#9042).

Taking a block-local lock: a compare-and-swap with acquire semantics at workgroup scope, so that
what the lock protects is read after it is taken, and only the block's threads need to see it. The
AMD lowering emitted the same `cmpxchg` (acq_rel, agent scope) whatever the kernel asked for.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel


@triton.jit
def try_lock_kernel(lock_ptr, owner_ptr):
    pid = tl.program_id(0)
    previous = tl.atomic_cas(lock_ptr + pid, 0, 1, sem="acquire", scope="cta")
    tl.store(owner_ptr + pid, previous)


def operands(device: str = "cpu") -> dict:
    locks = torch.tensor([0, 1, 0, 1], dtype=torch.int32)
    return {"lock_ptr": locks.to(device), "owner_ptr": torch.full((4,), -1, dtype=torch.int32, device=device)}


try_lock = TritonKernel(try_lock_kernel, args=operands)


def check_try_lock(device: str):
    args = operands(device)
    before = args["lock_ptr"].cpu().double().numpy().copy()
    try_lock_kernel[(4,)](**args)
    actual = {
        "locks": args["lock_ptr"].cpu().double().numpy(),
        "previous": args["owner_ptr"].cpu().double().numpy(),
    }
    return actual, {"locks": np.ones(4), "previous": before}
