"""atomic_add_shared_convert: an fp32 atomic_add whose result is unused gets its values converted
through shared memory on sm_80 (triton-lang/triton#3491).

An embedding backward: each program scatters a tile of gradient rows into the rows of the weight
gradient its token ids name, with `tl.atomic_add` (ids repeat, so the adds must be atomic). The
tile is loaded four floats per thread; an sm_80 atomic takes one float, so the atomic is a layout
anchor of its own, and RemoveLayoutConversions may put a convert_layout through shared memory in
front of it (#3491; PR#3940 tried to drop atomics from the anchors). Up to 3.7.1 the tile went to
the atomics straight from the registers it was loaded into; from 3.8.0 the conversion is there:
shared memory for a kernel that shares nothing, and with 8 warps on the wide tile, spills. sm_90
has vector atomics and never converts.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

VOCAB = 1024


@triton.jit
def embedding_grad_kernel(
    ids_ptr, grad_out_ptr, grad_weight_ptr, tokens, DIM: tl.constexpr, ROWS: tl.constexpr
):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, DIM)
    present = rows < tokens
    ids = tl.load(ids_ptr + rows, mask=present, other=0)
    grad = tl.load(grad_out_ptr + rows[:, None] * DIM + cols[None, :], mask=present[:, None], other=0.0)
    tl.atomic_add(grad_weight_ptr + ids[:, None] * DIM + cols[None, :], grad, mask=present[:, None])


def operands(tokens: int, dim: int, device: str = "cpu") -> dict:
    """Token ids drawn from a small vocabulary, so most rows of the weight gradient get several adds."""
    gen = torch.Generator().manual_seed(0)
    tensors = {
        "ids_ptr": torch.randint(0, 64, (tokens,), generator=gen),
        "grad_out_ptr": torch.randn(tokens, dim, generator=gen),
        "grad_weight_ptr": torch.zeros(VOCAB, dim),
    }
    return {k: v.to(device) for k, v in tensors.items()}


def launch_args(tokens: int, dim: int, rows: int) -> dict:
    return {**operands(tokens, dim), "tokens": tokens, "DIM": dim, "ROWS": rows}


# A 16x128 tile: no spills in any release; the figure is the shared memory (1 and 4 warps).
tile = TritonKernel(
    embedding_grad_kernel,
    args=lambda: launch_args(512, 128, 16),
    configs=[{"num_warps": 1}, {"num_warps": 4}],
)
# A 64x512 tile on 8 warps: no spills up to 3.7.1.
wide_tile = TritonKernel(
    embedding_grad_kernel, args=lambda: launch_args(512, 512, 64), configs=[{"num_warps": 8}]
)


def check_scatter(device: str):
    """Against index_add_ in float64: the order of the atomic adds may differ from it, so the sums
    are compared with a tolerance of a few ulps of float32."""
    tokens, dim, rows = 300, 128, 16
    args = operands(tokens, dim, device)
    embedding_grad_kernel[(triton.cdiv(tokens, rows),)](**args, tokens=tokens, DIM=dim, ROWS=rows)
    ids, grad = args["ids_ptr"].cpu(), args["grad_out_ptr"].cpu().double()
    expected = torch.zeros(VOCAB, dim, dtype=torch.float64).index_add_(0, ids, grad)
    return args["grad_weight_ptr"].cpu().numpy(), expected.numpy()
