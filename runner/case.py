"""What a corpus repro.py declares. Repros import only this module from kregress.

A manifest names attributes of repro.py: a `kernel` is its framework's wrapper (TritonKernel,
TileLangKernel, ...: each declared by its framework in kregress.frameworks, found here by name), a `check`
is a function `(device) -> (actual, expected)`, a perf `subject`/`baseline` is a Benchmark.
A check or benchmark that cannot run here raises `Unsupported(reason)`: a SKIP saying why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kregress.errors import KregressError


class Unsupported(KregressError):
    """This environment cannot build or run this: the item is SKIPPED with this reason, never FAILED."""


@dataclass(frozen=True)
class Benchmark:
    """`setup(device)` returns a zero-argument callable to time; `flops` gives TFLOPS in reports."""

    setup: Callable[[str], Callable[[], Any]]
    flops: float | None = None


def __getattr__(name: str) -> type:
    """A framework's kernel wrapper (`from kregress.case import TritonKernel`), declared in its module."""
    from kregress.frameworks import wrapper_named

    found = wrapper_named(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return found
