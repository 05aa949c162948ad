"""Bisect: predicate calls against N (the worst case over every boundary must equal
ceil(log2(N+1))), rounds with -j K against ceil(log_{K+1}(N+1)), calls the cache-aware midpoint
spends when some points are already built, and the per-point overhead of judging a case through
the runner with a warm environment (a fresh pytest per point, as `kregress bisect` does), its one
job in a fresh interpreter and forked from a fork server (as bisect runs it), as a ratio (a Triton
case and a numpy-only one).

    .venv/bin/python bench/bench_bisect.py [--runs 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from kregress.bisect.search import PointVerdict, plain_bound, rounds_bound, search
from kregress.judging_service import CaseRun

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "corpora" / "kinds"


def monotone(points: list[int], boundary: int) -> dict[int, PointVerdict]:
    return {p: PointVerdict.BAD if p >= boundary else PointVerdict.GOOD for p in points}


def worst(n: int, **options) -> tuple[int, int]:
    """Most calls and rounds over every boundary position for n inner candidates."""
    most_calls = most_rounds = 0
    for boundary in range(1, n + 2):
        result = search(n + 2, lambda points, b=boundary: monotone(points, b), **options)
        most_calls, most_rounds = max(most_calls, result.calls), max(most_rounds, result.rounds)
    return most_calls, most_rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed points for the per-point overhead")
    args = parser.parse_args()
    print("N      calls  log2 bound   rounds j=2 (bound)  rounds j=4 (bound)")
    for n in (1, 2, 7, 8, 30, 100, 1000):
        calls, _ = worst(n)
        _, two = worst(n, jobs=2)
        _, four = worst(n, jobs=4)
        print(f"{n:<6} {calls:<6} {plain_bound(n):<12} {two} ({rounds_bound(n, 2)}){'':<12} "
              f"{four} ({rounds_bound(n, 4)})")  # fmt: skip
    rng = random.Random(0)
    n = 100
    for share in (0.1, 0.3):
        built = {i for i in range(1, n + 1) if rng.random() < share}
        extra = [
            search(n + 2, lambda points, b=b: monotone(points, b), cheap=built.__contains__).calls
            - plain_bound(n)
            for b in range(1, n + 2)
        ]  # fmt: skip
        print(f"cache-aware, {share:.0%} built, N={n}: calls over the plain bound: max {max(extra)}, "
              f"mean {statistics.mean(extra):+.2f}")  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        numpy_only = Path(folder) / "numpy_only"
        numpy_only.mkdir()
        (numpy_only / "case.toml").write_text(NUMPY_CASE)
        (numpy_only / "repro.py").write_text(NUMPY_REPRO)
        for name, corpus, case, expectation in (
            ("Triton kernel", FIXTURE, "vector_add", "numerics-check_add"),
            ("numpy only", Path(folder), "numpy_only", "numerics"),
        ):
            fresh = FreshInterpreter(corpus, case, expectation, "cpu:interpreter")
            served = CaseRun(corpus, case, expectation, "cpu:interpreter")
            times: dict[str, list[float]] = {"fresh": [], "served": []}
            for _ in range(args.runs):  # alternated, so a busy moment costs both alike
                for label, run in (("fresh", fresh), ("served", served)):
                    started = time.perf_counter()
                    run.observe(None)
                    times[label].append(time.perf_counter() - started)
            fresh_s, served_s = (statistics.median(times[label]) for label in ("fresh", "served"))
            print(f"one point of one item ({name}), warm environment: median {fresh_s:.2f} s in a "
                  f"fresh interpreter, {served_s:.2f} s through a fork server (as bisect runs it): "
                  f"ratio {fresh_s / served_s:.2f} over {args.runs} runs")  # fmt: skip


NUMPY_CASE = """title = "a case whose repro needs numpy only"
framework = "triton"
expect = [{ kind = "numerics", name = "numerics", check = "check", rtol = 0, atol = 0 }]
upstream = { repo = "example/kernels", issue = "https://github.com/example/kernels/issues/1" }
"""
NUMPY_REPRO = """import numpy as np


def check(device):
    return np.arange(4.0) * 2, np.arange(4.0) * 2
"""


class FreshInterpreter(CaseRun):
    """A point whose one job runs in a new interpreter (`--no-fork-server`)."""

    def command(self, toolchain: str | None, report: Path | None = None) -> list[str]:
        return [*super().command(toolchain, report), "--no-fork-server"]


if __name__ == "__main__":
    main()
