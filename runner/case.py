"""What a corpus repro.py declares. Repros import only this module from kregress.

A manifest names attributes of repro.py: a `kernel` is a TritonKernel or TileLangKernel, a `check`
is a function `(device) -> (actual, expected)`, a perf `subject`/`baseline` is a Benchmark.
A check or benchmark that cannot run here raises `Unsupported(reason)`: a SKIP saying why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kregress.errors import KregressError


class Unsupported(KregressError):
    """This environment cannot build or run this: the item is SKIPPED with this reason, never FAILED."""


@dataclass(frozen=True)
class TritonKernel:
    """A @triton.jit (or @triton.autotune) kernel plus example launch arguments.

    `args()` returns the arguments of a real launch (tensors may be small CPU tensors: only their
    dtype and alignment matter), so ahead-of-time compiles get the same specialization
    (divisibility by 16, constants) as the JIT would. Every config is judged: `configs` if given,
    otherwise the autotuner's, otherwise one default config. Configs may be scoped per backend,
    `{"xpu": [...], "cuda": [...]}`, when one backend's config cannot exist on another (32 warps
    of 32 threads leave a CUDA thread 64 registers); a backend without any is a SKIP.

    `cold_cache` compiles each config into an empty cache, so every tool the compiler runs (ptxas,
    ocloc) really runs and is seen, then compiles it again to report whether that was a cache hit.
    """

    fn: Any
    args: Callable[[], Mapping[str, Any]]
    configs: Sequence[Mapping[str, Any]] | Mapping[str, Sequence[Mapping[str, Any]]] | None = None
    specialize: bool = True
    cold_cache: bool = False


@dataclass(frozen=True)
class TileLangKernel:
    """A function building a TileLang prim_func; compiled to CUDA source and a cubin by nvcc."""

    build: Callable[[], Any]
    pass_configs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Benchmark:
    """`setup(device)` returns a zero-argument callable to time; `flops` gives TFLOPS in reports."""

    setup: Callable[[str], Callable[[], Any]]
    flops: float | None = None
