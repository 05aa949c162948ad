"""A child that dies before it writes a result, and one that never ends, both under a known_bad."""

import os
import time


def check_abort(device):
    os.abort()


def check_hang(device):
    time.sleep(600)
