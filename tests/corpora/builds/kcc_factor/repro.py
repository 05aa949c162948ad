"""kcc's scale by its compiled factor (2 at the first commit, 3 after 'Factor 3')."""

import numpy as np


def check(device):
    import kcc

    return np.array([kcc.scale(2.0)]), np.array([4.0])
