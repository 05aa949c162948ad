"""gather_small_tile_warps: `tl.gather` along the rows of a tile too small to give every warp its
own rows trips an assertion in the layout pass (triton-lang/triton#11600).

Each of 8 rows of a 2-entry table is expanded to 8 entries (a codebook lookup per row). Triton keeps
a gather inside one warp by placing the warps on the other dimensions; with 2 warps and this little
data there are not enough rows to place them on, so `setOptimizedGatherLayout` overflowed the warps
onto the gather axis and then asserted that the gather was warp-local
(`GatherLoweringHelper(op).isWarpLocal()`): a build with assertions aborts there, the release
wheels' pass pipeline fails ("PassManager::run failed"), from 3.3.0 (the first with `tl.gather`) to
3.8.0. One warp (`expand_one_warp`) compiles in every release that has `tl.gather`.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

ROWS, TABLE, OUT = 8, 2, 8


@triton.jit
def expand_rows_kernel(out_ptr, table_ptr, ROWS: tl.constexpr, TABLE: tl.constexpr, OUT: tl.constexpr):
    table = tl.load(table_ptr + tl.reshape(tl.arange(0, ROWS * TABLE), (ROWS, TABLE)))
    index = tl.reshape(tl.arange(0, ROWS * OUT), (ROWS, OUT)) % TABLE
    tl.store(out_ptr + tl.reshape(tl.arange(0, ROWS * OUT), (ROWS, OUT)), tl.gather(table, index, 1))


def operands(device: str = "cpu") -> dict:
    return {
        "out_ptr": torch.zeros(ROWS * OUT, dtype=torch.int32, device=device),
        "table_ptr": torch.arange(ROWS * TABLE, dtype=torch.int32, device=device) * 3,
        "ROWS": ROWS,
        "TABLE": TABLE,
        "OUT": OUT,
    }


expand_two_warps = TritonKernel(expand_rows_kernel, args=operands, configs=[{"num_warps": 2}])
expand_one_warp = TritonKernel(expand_rows_kernel, args=operands, configs=[{"num_warps": 1}])


def check_expand_two_warps(device: str):
    args = operands(device)
    expand_rows_kernel[(1,)](**args, num_warps=2)
    table = np.arange(ROWS * TABLE, dtype=np.float64).reshape(ROWS, TABLE) * 3
    expected = np.take_along_axis(table, np.arange(ROWS * OUT).reshape(ROWS, OUT) % TABLE, axis=1)
    return args["out_ptr"].cpu().double().numpy(), expected.reshape(-1)
