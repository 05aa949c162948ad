"""A kernel waiting on a flag nobody sets: it holds its GPU until it is stopped (a test-only case
for the device watchdog; never in corpus/)."""

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def spin(flag_ptr):
    while tl.load(flag_ptr, volatile=True) == 0:
        pass


def check_spins(device):
    flag = torch.zeros(1, dtype=torch.int32, device=device)
    spin[(1,)](flag)
    torch.cuda.synchronize()
    return np.zeros(1), np.zeros(1)
