"""gather_wide_index_shared: tl.gather with int64 indices converts the whole index tile through
shared memory, past what consumer GPUs have (triton-lang/triton#11491).

A row lookup: 256x64 int64 indices into a 128x64 table along axis 0. To make the gather
warp-local, OptimizeThreadLocality converts the index tile to a new layout through shared memory
at its full width, 256 x 64 x 8 bytes = 131072, though the lowering then narrows every index to
i32: past the 101376 bytes of an RTX 5090 or L4. Triton 3.3 and 3.4 needed 66048; int32 indices
of the same shape need half of it.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

ROWS, COLS, LOOKUPS = 128, 64, 256


@triton.jit
def row_lookup_kernel(
    table_ptr, index_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr, LOOKUPS: tl.constexpr
):
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    lookups = tl.arange(0, LOOKUPS)
    table = tl.load(table_ptr + rows[:, None] * COLS + cols[None, :])
    index = tl.load(index_ptr + lookups[:, None] * COLS + cols[None, :])
    tl.store(out_ptr + lookups[:, None] * COLS + cols[None, :], tl.gather(table, index, axis=0))


def operands(index_dtype: torch.dtype, device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    tensors = {
        "table_ptr": torch.randn(ROWS, COLS, generator=gen),
        "index_ptr": torch.randint(0, ROWS, (LOOKUPS, COLS), generator=gen).to(index_dtype),
        "out_ptr": torch.zeros(LOOKUPS, COLS),
    }
    return {k: v.to(device) for k, v in tensors.items()}


SIZES = {"ROWS": ROWS, "COLS": COLS, "LOOKUPS": LOOKUPS}
lookup_i64 = TritonKernel(
    row_lookup_kernel, args=lambda: {**operands(torch.int64), **SIZES}, configs=[{"num_warps": 4}]
)
lookup_i32 = TritonKernel(
    row_lookup_kernel, args=lambda: {**operands(torch.int32), **SIZES}, configs=[{"num_warps": 4}]
)


def check_lookup(device: str):
    """Exact: a gather moves values, it computes none."""
    args = operands(torch.int64, device)
    row_lookup_kernel[(1,)](**args, **SIZES)
    table, index = args["table_ptr"].cpu(), args["index_ptr"].cpu()
    return args["out_ptr"].cpu().numpy(), torch.gather(table, 0, index).numpy()
