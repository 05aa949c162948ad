"""Cold vs warm `pytest <corpus> --backend cpu -n auto`, with and without the fork server, in one run.

Cold: an empty kregress cache, so Triton compiles every kernel. Warm: the same cache again, so every
kernel is a Triton cache hit and what remains is start-up, measuring and judging. "fresh" starts a
new interpreter per job (--no-fork-server); "fork" forks it from a process that imported the
compilers once. Ratios are what to compare; absolute seconds depend on the machine.

    .venv/bin/python bench/bench_corpus.py [CORPUS] [--workers auto] [-- EXTRA PYTEST ARGS]

With --warm BUDGET it measures only the run people wait for every day: the warm run with the fork
server, in the machine's own kregress cache (warmed first), against a budget in seconds; it exits 1
when over it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(corpus: Path, cache: Path, workers: str, extra: list[str]) -> tuple[float, int]:
    """Seconds for one corpus run, and how many items it judged."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "results.json"
        command = [sys.executable, "-m", "pytest", str(corpus), "--backend", "cpu", "-n", workers, "-q",
                   "-p", "no:cacheprovider", "--kregress-json", str(report), *extra]  # fmt: skip
        started = time.perf_counter()
        subprocess.run(command, env={**os.environ, "KREGRESS_CACHE_DIR": str(cache)}, capture_output=True,
                       check=False)  # fmt: skip
        seconds = time.perf_counter() - started
        items = len(json.loads(report.read_text())["items"]) if report.exists() else 0
    return seconds, items


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", nargs="?", type=Path, default=Path("corpus"))
    parser.add_argument("--workers", default="auto", help="pytest-xdist -n value (default: auto)")
    parser.add_argument("--warm", type=float, metavar="BUDGET", help="only the warm run, against BUDGET s")
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="after --: more pytest arguments")
    args = parser.parse_args()
    extra = [a for a in args.extra if a != "--"]
    if args.warm is not None:
        return warm_against_budget(args.corpus, args.workers, extra, args.warm)
    times: dict[tuple[str, str], float] = {}
    for mode, flags in (("fresh", ["--no-fork-server"]), ("fork", [])):
        with tempfile.TemporaryDirectory() as cache:
            for state in ("cold", "warm"):
                times[mode, state], items = run(args.corpus, Path(cache), args.workers, extra + flags)
                print(f"{mode:5} {state}: {times[mode, state]:7.2f} s  ({items} items)", flush=True)
    for mode in ("fresh", "fork"):
        print(f"{mode:5} warm/cold: {times[mode, 'warm'] / times[mode, 'cold']:.2f}")
    for state in ("cold", "warm"):
        print(f"{state} fork/fresh: {times['fork', state] / times['fresh', state]:.2f}")
    return 0


def warm_against_budget(corpus: Path, workers: str, extra: list[str], budget: float) -> int:
    from kregress.paths import cache_root

    cache = cache_root()
    first, _ = run(corpus, cache, workers, extra)
    warm, items = run(corpus, cache, workers, extra)
    print(f"warming run: {first:7.2f} s")
    print(f"warm run:    {warm:7.2f} s  ({items} items), {warm / budget:.2f} of the {budget:.0f} s budget")
    return 0 if warm <= budget else 1


if __name__ == "__main__":
    sys.exit(main())
