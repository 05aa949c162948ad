"""cas_loop_int64: a compare-and-swap retry loop on a 64-bit counter produces PTX that ptxas
rejects (triton-lang/triton#8100).

Each program takes a ticket from a shared counter: read it, try to swap in the next value, retry
if another program got there first. With an int32 counter the kernel compiles; with int64 the
scalar `atom.cas` result was stored through a 32-bit path and ptxas refused the PTX ("Arguments
mismatch for instruction 'st'") under every release up to 3.5.1 on sm_90.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

PROGRAMS = 64


@triton.jit
def take_ticket_kernel(counter_ptr, ticket_ptr):
    waiting = True
    while waiting:
        seen = tl.load(counter_ptr, volatile=True)
        if tl.atomic_cas(counter_ptr, seen, seen + 1) == seen:
            tl.store(ticket_ptr + tl.program_id(0), seen)
            waiting = False


def operands(dtype: torch.dtype, device: str = "cpu") -> dict:
    return {"counter_ptr": torch.zeros(1, dtype=dtype, device=device),
            "ticket_ptr": torch.full((PROGRAMS,), -1, dtype=dtype, device=device)}  # fmt: skip


tickets_i64 = TritonKernel(take_ticket_kernel, args=lambda: operands(torch.int64))
tickets_i32 = TritonKernel(take_ticket_kernel, args=lambda: operands(torch.int32))


@triton.jit
def claim_twice_kernel(slot_ptr, first_ptr, second_ptr):
    """One program a slot, two compare-and-swaps on it: the first finds it empty and claims it, the
    second finds it taken. The same scalar 64-bit `atom.cas` result as the loop's (ptxas refuses
    it under 3.5.1 alike), without a loop: a spin loop over one counter can wait forever on a GPU
    when the broadcast of the result races, which is not this bug."""
    pid = tl.program_id(0)
    empty = tl.load(slot_ptr + pid)  # 0, in the slot's own type
    tl.store(first_ptr + pid, tl.atomic_cas(slot_ptr + pid, empty, empty + pid + 1))
    tl.store(second_ptr + pid, tl.atomic_cas(slot_ptr + pid, empty, empty + pid + 100))


def check_claims(device: str):
    """Each first CAS sees the empty slot (0), each second one sees the first's claim (pid + 1), and
    the slots keep the first claims."""
    slots, first, second = (torch.zeros(PROGRAMS, dtype=torch.int64, device=device) for _ in range(3))
    claim_twice_kernel[(PROGRAMS,)](slots, first, second)
    claimed = np.arange(1, PROGRAMS + 1, dtype=np.float64)
    got = {"first": first, "second": second, "slots": slots}
    got = {name: t.cpu().double().numpy() for name, t in got.items()}
    return got, {"first": np.zeros(PROGRAMS), "second": claimed, "slots": claimed}
