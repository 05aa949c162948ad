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


def check_tickets(device: str):
    """Every program gets a distinct ticket: sorted, they are 0 .. PROGRAMS - 1."""
    args = operands(torch.int64, device)
    take_ticket_kernel[(PROGRAMS,)](**args)
    tickets = np.sort(args["ticket_ptr"].cpu().numpy()).astype(np.float64)
    counter = args["counter_ptr"].cpu().double().numpy()
    return {"tickets": tickets, "counter": counter}, {
        "tickets": np.arange(PROGRAMS, dtype=np.float64),
        "counter": np.array([PROGRAMS], dtype=np.float64),
    }
