"""grouped_reduction_nvfuser: layer-norm backward as nvFuser schedules it (NVIDIA/Fuser PR #4663).

Layer-norm backward reduces each row twice (c1 = mean(xhat * w * dy), c2 = mean(w * dy)) and, in the
same fusion, across rows (dweight = sum(dy * xhat), dbias = sum(dy)): a grouped reduction. xhat and
w * dy are used again after c1 and c2 are broadcast back over the row, so a persistent schedule
must keep them; `getGroupedReductionPersistentTvs` missed tensors broadcast after the grouped
reduction. The fusion is defined here through nvFuser's frontend, and judged against float64.
"""

import torch
from nvfuser_direct import DataType, FusionDefinition

from kregress.case import NvFuserFusion

HIDDEN_SIZES = (1024, 8192, 24576, 32768)
ROWS = 512
EPS = 1e-5


def define(fd: FusionDefinition) -> None:
    rows_by_hidden = {"shape": [-1, -1], "contiguity": [True, True]}
    vector = {"shape": [-1], "contiguity": [True]}
    x, dy = (fd.define_tensor(**rows_by_hidden, dtype=DataType.Float) for _ in range(2))
    w, mean, rstd = (fd.define_tensor(**vector, dtype=DataType.Float) for _ in range(3))
    n = fd.define_scalar(dtype=DataType.Double)
    per_row = [False, True]  # mean and rstd: one value per row, broadcast over the hidden size
    xhat = fd.ops.mul(fd.ops.sub(x, fd.ops.broadcast(mean, per_row)), fd.ops.broadcast(rstd, per_row))
    wdy = fd.ops.mul(fd.ops.broadcast(w, [True, False]), dy)
    c1 = fd.ops.div(fd.ops.sum(fd.ops.mul(xhat, wdy), [1], keepdim=True), n)
    c2 = fd.ops.div(fd.ops.sum(wdy, [1], keepdim=True), n)
    dx = fd.ops.mul(fd.ops.sub(wdy, fd.ops.add(fd.ops.mul(xhat, c1), c2)), fd.ops.broadcast(rstd, per_row))
    fd.add_output(dx)
    fd.add_output(fd.ops.sum(fd.ops.mul(dy, xhat), [0]))
    fd.add_output(fd.ops.sum(dy, [0]))


def operands(hidden: int, device: str, seed: int = 0) -> list:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(ROWS, hidden, generator=gen) * 2 + 0.5
    w = torch.rand(hidden, generator=gen) + 0.5
    dy = torch.randn(ROWS, hidden, generator=gen)
    mean = x.mean(dim=1)
    rstd = torch.rsqrt(x.var(dim=1, unbiased=False) + EPS)
    return [t.to(device) for t in (x, dy, w, mean, rstd)] + [float(hidden)]


def reference(x, dy, w, mean, rstd, n) -> dict:
    """float64 layer-norm backward, on the CPU."""
    x, dy, w, mean, rstd = (t.cpu().double() for t in (x, dy, w, mean, rstd))
    xhat = (x - mean[:, None]) * rstd[:, None]
    wdy = w * dy
    c1 = (xhat * wdy).sum(dim=1, keepdim=True) / n
    c2 = wdy.sum(dim=1, keepdim=True) / n
    return {"dx": (wdy - (xhat * c1 + c2)) * rstd[:, None], "dweight": (dy * xhat).sum(0), "dbias": dy.sum(0)}


layer_norm_bwd_24k = NvFuserFusion(define, lambda device: operands(24576, device))


def check_fp32(device: str):
    """(actual, float64 expected) for each output at each hidden size, named `dx@24576`."""
    actual, expected = {}, {}
    for hidden in HIDDEN_SIZES:
        inputs = operands(hidden, device)
        with FusionDefinition() as fd:
            define(fd)
        outputs = dict(zip(("dx", "dweight", "dbias"), fd.execute(inputs), strict=True))
        for name, value in reference(*inputs).items():
            actual[f"{name}@{hidden}"] = outputs[name].cpu().double().numpy()
            expected[f"{name}@{hidden}"] = value.numpy()
    return actual, expected
