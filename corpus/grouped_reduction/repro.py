"""grouped_reduction: layer-norm backward with grouped persistent reductions (NVIDIA/Fuser PR #4663).

Layer-norm backward reduces twice per row (c1 = mean(xhat * w * dy), c2 = mean(w * dy)) and,
in the same loop, across rows (dweight = sum(dy * xhat), dbias = sum(dy)): a grouped reduction.
c1 and c2 are then broadcast back over the row to form dx, so xhat and w * dy must still be there
after the row reductions: they belong to the persistent set. nvFuser's
`getGroupedReductionPersistentTvs` missed tensors broadcast after the grouped reduction.

`layer_norm_bwd` is written the way a persistent scheduler lays the fusion out: each program owns
rows pid, pid + G, ...; a row that fits one block stays in registers between the reductions and
the broadcast, and dweight/dbias accumulate in registers across the program's rows; a longer row
is walked in chunks twice. `KEEP_BROADCAST=False` is the bug's shape: the tensors used after the
broadcast are not kept per chunk, so the second walk reuses the last chunk's (negative control).
"""

import functools

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import Benchmark, TritonKernel, Unsupported

HIDDEN_SIZES = (1024, 8192, 24576, 32768)  # across the scheduler's boundaries (upstream: 24K)
MAX_BLOCK_N = 4096  # a row longer than this is walked in chunks
EPS = 1e-5
PROGRAMS_ON_DEVICE = 128  # persistent programs on a GPU, about one per SM (132 on an H100)


@triton.jit
def layer_norm_bwd(
    X, DY, W, Mean, Rstd, DX, DW_partial, DB_partial, stride,
    N: tl.constexpr, BLOCK_N: tl.constexpr, ROWS_PER_PROGRAM: tl.constexpr, KEEP_BROADCAST: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    ONE_BLOCK: tl.constexpr = BLOCK_N >= N
    dw_acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    db_acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for i in range(ROWS_PER_PROGRAM):
        row = pid + i * programs
        mean = tl.load(Mean + row)
        rstd = tl.load(Rstd + row)
        xhat = tl.zeros([BLOCK_N], dtype=tl.float32)
        wdy = tl.zeros([BLOCK_N], dtype=tl.float32)
        dy = tl.zeros([BLOCK_N], dtype=tl.float32)
        sum_xhat_wdy = tl.zeros([BLOCK_N], dtype=tl.float32)
        sum_wdy = tl.zeros([BLOCK_N], dtype=tl.float32)
        for start in range(0, N, BLOCK_N):  # the grouped row reductions
            mask = start + cols < N
            x = tl.load(X + row * stride + start + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(DY + row * stride + start + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(W + start + cols, mask=mask, other=0.0).to(tl.float32)
            xhat = tl.where(mask, (x - mean) * rstd, 0.0)
            wdy = w * dy
            sum_xhat_wdy += xhat * wdy
            sum_wdy += wdy
        c1 = tl.sum(sum_xhat_wdy, axis=0) / N
        c2 = tl.sum(sum_wdy, axis=0) / N
        for start in range(0, N, BLOCK_N):  # c1 and c2 broadcast back over the row
            mask = start + cols < N
            if KEEP_BROADCAST and not ONE_BLOCK:
                x = tl.load(X + row * stride + start + cols, mask=mask, other=0.0).to(tl.float32)
                dy = tl.load(DY + row * stride + start + cols, mask=mask, other=0.0).to(tl.float32)
                w = tl.load(W + start + cols, mask=mask, other=0.0).to(tl.float32)
                xhat = tl.where(mask, (x - mean) * rstd, 0.0)
                wdy = w * dy
            dx = (wdy - (xhat * c1 + c2)) * rstd
            tl.store(DX + row * stride + start + cols, dx.to(DX.dtype.element_ty), mask=mask)
            if ONE_BLOCK:
                dw_acc += dy * xhat
                db_acc += dy
            else:
                dw_ptrs = DW_partial + pid * N + start + cols
                db_ptrs = DB_partial + pid * N + start + cols
                tl.store(dw_ptrs, tl.load(dw_ptrs, mask=mask, other=0.0) + dy * xhat, mask=mask)
                tl.store(db_ptrs, tl.load(db_ptrs, mask=mask, other=0.0) + dy, mask=mask)
    if ONE_BLOCK:
        tl.store(DW_partial + pid * N + cols, dw_acc, mask=cols < N)
        tl.store(DB_partial + pid * N + cols, db_acc, mask=cols < N)


@triton.jit
def reduce_partials(
    DW_partial, DB_partial, DW, DB, PROGRAMS: tl.constexpr, N: tl.constexpr, BLOCK: tl.constexpr
):
    """The cross-program half of the grouped reduction: one column block per program."""
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < N
    dw = tl.zeros([BLOCK], dtype=tl.float32)
    db = tl.zeros([BLOCK], dtype=tl.float32)
    for g in range(PROGRAMS):
        dw += tl.load(DW_partial + g * N + cols, mask=mask, other=0.0)
        db += tl.load(DB_partial + g * N + cols, mask=mask, other=0.0)
    tl.store(DW + cols, dw, mask=mask)
    tl.store(DB + cols, db, mask=mask)


def block_n(hidden: int) -> int:
    return min(triton.next_power_of_2(hidden), MAX_BLOCK_N)


def warps(hidden: int) -> int:
    return 4 if block_n(hidden) <= 1024 else 8


def inputs(
    rows: int, hidden: int, dtype: torch.dtype, device: str = "cpu", seed: int = 0, made_on: str = "cpu"
) -> dict:
    """x, w, dy in `dtype`; mean and rstd in fp32 from the forward, as the autograd graph saves them.
    Drawn on `made_on` (the same numbers on every machine when that is the CPU)."""
    gen = torch.Generator(device=made_on).manual_seed(seed)
    x = (torch.randn(rows, hidden, generator=gen, device=made_on) * 2 + 0.5).to(dtype)
    w = (torch.rand(hidden, generator=gen, device=made_on) + 0.5).to(dtype)
    dy = torch.randn(rows, hidden, generator=gen, device=made_on).to(dtype)
    x32 = x.float()
    mean = x32.mean(dim=1)
    rstd = torch.rsqrt(x32.var(dim=1, unbiased=False) + EPS)
    return {k: v.to(device) for k, v in {"x": x, "w": w, "dy": dy, "mean": mean, "rstd": rstd}.items()}


def triton_backward(t: dict, programs: int, keep_broadcast: bool = True) -> dict[str, torch.Tensor]:
    rows, hidden = t["x"].shape
    if rows % programs:
        raise ValueError(f"{rows} rows do not split over {programs} programs")
    device = t["x"].device
    dx = torch.empty_like(t["x"])
    dw_partial = torch.zeros(programs, hidden, device=device)
    db_partial = torch.zeros(programs, hidden, device=device)
    layer_norm_bwd[(programs,)](
        t["x"], t["dy"], t["w"], t["mean"], t["rstd"], dx, dw_partial, db_partial, hidden,
        N=hidden, BLOCK_N=block_n(hidden), ROWS_PER_PROGRAM=rows // programs,
        KEEP_BROADCAST=keep_broadcast, num_warps=warps(hidden),
    )  # fmt: skip
    dw = torch.empty(hidden, device=device)
    db = torch.empty(hidden, device=device)
    reduce_block = 1024
    reduce_partials[(triton.cdiv(hidden, reduce_block),)](
        dw_partial, db_partial, dw, db, PROGRAMS=programs, N=hidden, BLOCK=reduce_block
    )
    return {"dx": dx, "dweight": dw, "dbias": db}


def reference(t: dict) -> dict[str, np.ndarray]:
    """float64 from the same (rounded) inputs; mean and rstd recomputed in float64."""
    x, w, dy = (t[k].cpu().double().numpy() for k in ("x", "w", "dy"))
    mean = x.mean(axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(axis=1, keepdims=True) + EPS)
    xhat = (x - mean) * rstd
    wdy = w * dy
    c1 = (xhat * wdy).mean(axis=1, keepdims=True)
    c2 = wdy.mean(axis=1, keepdims=True)
    dx = (wdy - (xhat * c1 + c2)) * rstd
    return {"dx": dx, "dweight": (dy * xhat).sum(axis=0), "dbias": dy.sum(axis=0)}


def over_sizes(device: str, dtype: torch.dtype, backward) -> tuple[dict, dict]:
    """Each output at each hidden size, named `dx@24576`, so a FAIL says which size broke."""
    rows, programs = (16, 4) if device == "cpu" else (512, PROGRAMS_ON_DEVICE)
    actual, expected = {}, {}
    for hidden in HIDDEN_SIZES:
        t = inputs(rows, hidden, dtype, device)
        got, want = backward(t, programs), reference(t)
        actual |= {f"{name}@{hidden}": value for name, value in got.items()}
        expected |= {f"{name}@{hidden}": want[name] for name in got}
    return actual, expected


def check_triton_fp32(device: str):
    return over_sizes(device, torch.float32, triton_backward)


def check_triton_bf16(device: str):
    return over_sizes(device, torch.bfloat16, triton_backward)


def check_triton_dropped_broadcast(device: str):
    """The bug's shape (negative control, used by tests/): must FAIL at the chunked sizes."""
    return over_sizes(device, torch.float32, lambda t, g: triton_backward(t, g, keep_broadcast=False))


def eager_backward(t: dict) -> dict[str, torch.Tensor]:
    hidden = t["x"].shape[1]
    bias = torch.zeros_like(t["w"])
    dx, dw, db = torch.ops.aten.native_layer_norm_backward(
        t["dy"], t["x"], [hidden], t["mean"][:, None], t["rstd"][:, None], t["w"], bias, [True, True, True]
    )
    return {"dx": dx, "dweight": dw, "dbias": db}


@functools.cache
def inductor_backward():
    """Inductor's persistent reductions for the same backward: a compiler under test on a GPU."""
    return torch.compile(eager_backward, dynamic=False)


def compiled_backward(t: dict) -> dict[str, torch.Tensor]:
    return inductor_backward()(t)


def check_compiled_fp32(device: str):
    return over_sizes(device, torch.float32, lambda t, _: compiled_backward(t))


def check_compiled_bf16(device: str):
    return over_sizes(device, torch.bfloat16, lambda t, _: compiled_backward(t))


def launch_args(dtype: torch.dtype) -> dict:
    """A launch at the smallest size; the configs below set N, BLOCK_N and warps per hidden size."""
    t = inputs(8, 1024, dtype)
    partial = torch.zeros(8, 1024)
    return {"X": t["x"], "DY": t["dy"], "W": t["w"], "Mean": t["mean"], "Rstd": t["rstd"],
            "DX": torch.empty_like(t["x"]), "DW_partial": partial, "DB_partial": partial, "stride": 1024,
            "ROWS_PER_PROGRAM": 4, "KEEP_BROADCAST": True}  # fmt: skip


CONFIGS = [{"N": h, "BLOCK_N": block_n(h), "num_warps": warps(h)} for h in HIDDEN_SIZES]
layer_norm_bwd_fp32 = TritonKernel(layer_norm_bwd, args=lambda: launch_args(torch.float32), configs=CONFIGS)
layer_norm_bwd_bf16 = TritonKernel(layer_norm_bwd, args=lambda: launch_args(torch.bfloat16), configs=CONFIGS)


@functools.cache
def timed_inputs(hidden: int, device: str) -> dict:
    """The upstream batch (8192 rows) in bf16, drawn on the device and shared by both sides: drawn on
    the CPU, the 32K rows took seconds per side before anything was timed."""
    return inputs(8192, hidden, torch.bfloat16, device, made_on=device)


def benchmark(hidden: int, backward) -> Benchmark:
    """One backward at the upstream batch in bf16; `backward` is timed as it is called."""

    def setup(device: str):
        if device == "cpu":
            raise Unsupported("perf is judged on a GPU: the interpreter's timings say nothing of a compiler")
        t = timed_inputs(hidden, device)
        return lambda: backward(t)

    return Benchmark(setup)


def triton_timed(t: dict) -> dict:
    return triton_backward(t, PROGRAMS_ON_DEVICE)


bench_eager_1k, bench_eager_8k, bench_eager_24k, bench_eager_32k = (
    benchmark(h, eager_backward) for h in HIDDEN_SIZES
)
bench_triton_1k, bench_triton_8k, bench_triton_24k, bench_triton_32k = (
    benchmark(h, triton_timed) for h in HIDDEN_SIZES
)
bench_compiled_1k, bench_compiled_8k, bench_compiled_24k, bench_compiled_32k = (
    benchmark(h, compiled_backward) for h in HIDDEN_SIZES
)

if __name__ == "__main__":
    checks = {"fp32": check_triton_fp32, "bf16": check_triton_bf16, "dropped": check_triton_dropped_broadcast}
    for name, check in checks.items():
        got, want = check("cpu")
        worst = {k: float(np.abs(got[k].double().cpu().numpy() - want[k]).max()) for k in got}
        print(name, {k: f"{v:.2e}" for k, v in worst.items()})
