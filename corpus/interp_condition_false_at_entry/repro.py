"""interp_condition_false_at_entry: under the interpreter, a `while tl.condition(...)` loop whose
condition is false when it is first reached never ends (triton-lang/triton#11402).

`tl.condition` wraps a while loop's condition so the compiler may take hints about it; compiled
code tests the wrapped value like any other. The interpreter took the wrapper object itself as the
loop's test, and an object is always true: the body ran on and on, whatever the condition said.
A loop that should run zero times therefore hangs (the case's timeout ends it). 3.9.0 tests the
value inside. The same count written as a plain `while` (`plain_count`) ends in every release.
"""

import numpy as np
import torch
import triton
import triton.language as tl

# Several trip counts: zero (where the interpreter hangs) and a few the loop must stop after.
TRIPS = (0, 1, 5)


@triton.jit
def wrapped_count_kernel(trips_ptr, out_ptr):
    pid = tl.program_id(0)
    trips = tl.load(trips_ptr + pid)
    done = 0
    while tl.condition(done < trips):
        done += 1
    tl.store(out_ptr + pid, done)


@triton.jit
def plain_count_kernel(trips_ptr, out_ptr):
    pid = tl.program_id(0)
    trips = tl.load(trips_ptr + pid)
    done = 0
    while done < trips:
        done += 1
    tl.store(out_ptr + pid, done)


def check(kernel, device: str):
    trips = torch.tensor(TRIPS, dtype=torch.int32, device=device)
    out = torch.full((len(TRIPS),), -1, dtype=torch.int32, device=device)
    kernel[(len(TRIPS),)](trips, out)
    return out.cpu().double().numpy(), np.array(TRIPS, dtype=np.float64)


def check_wrapped_count(device: str):
    return check(wrapped_count_kernel, device)


def check_plain_count(device: str):
    return check(plain_count_kernel, device)
