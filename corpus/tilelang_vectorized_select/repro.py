"""tilelang_vectorized_select: `T.Select` inside a `T.vectorized` loop (tile-ai/tilelang#2682).

A leaky clamp written four lanes at a time: each lane keeps its value above a floor, and below it
keeps a tenth of the distance. Vectorized, the condition is four booleans, and releases up to
0.1.13 emitted it as one scalar C++ conditional over the float4 (`*(float4*)(B + i * 4) =
(cond ? v : w)`), which nvcc refuses ("expression must have bool type"). From 0.1.14 the select is
done per lane.
"""

from __future__ import annotations

import numpy as np
import tilelang.language as T
import torch

from kregress.case import TileLangKernel, Unsupported

N, LANES, FLOOR = 256, 4, -0.5


def build():
    @T.prim_func
    def leaky_clamp(
        A: T.Tensor((N,), "float32"),  # type: ignore[valid-type]
        B: T.Tensor((N,), "float32"),  # type: ignore[valid-type]
    ):
        with T.Kernel(1, threads=32) as _:
            for i in T.serial(N // LANES):
                for j in T.vectorized(LANES):
                    x = A[i * LANES + j]
                    B[i * LANES + j] = T.Select(x > FLOOR, x, FLOOR + (x - FLOOR) * 0.1)

    return leaky_clamp


leaky_clamp = TileLangKernel(build)


def check_leaky_clamp(device: str):
    if device == "cpu":
        raise Unsupported("TileLang has no CPU interpreter: the clamp runs on a CUDA device")
    import tilelang

    kernel = tilelang.compile(build(), out_idx=[1])
    x = torch.randn(N, generator=torch.Generator().manual_seed(0)).to(device)
    xs = x.cpu().double().numpy()
    return kernel(x).cpu().double().numpy(), np.where(xs > FLOOR, xs, FLOOR + (xs - FLOOR) * 0.1)
