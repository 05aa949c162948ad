"""Children that abort, segfault, hang or run out of resources: each is classified, the run goes on."""

import ctypes
import os
import time

import numpy as np
from triton.runtime.errors import OutOfResources


def check_abort(device):
    os.abort()


def check_segfault(device):
    ctypes.string_at(0)


def check_hang(device):
    time.sleep(600)


def check_out_of_resources(device):
    raise OutOfResources(required=300000, limit=232448, name="shared memory")


def check_fine(device):
    return np.ones(4), np.ones(4)
