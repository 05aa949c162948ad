"""Cold vs warm `pytest <corpus> --backend cpu -n auto`, timed in one run.

Cold: an empty kregress cache (so Triton compiles every kernel). Warm: the same cache again (every
kernel is a Triton cache hit; what remains is process start-up, imports and judging).

    .venv/bin/python bench/bench_corpus.py [CORPUS] [--workers auto] [--repeats 1]
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


def run(corpus: Path, cache: Path, workers: str, report: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(corpus),
            "--backend",
            "cpu",
            "-n",
            workers,
            "-q",
            "-p",
            "no:cacheprovider",
            "--kregress-json",
            str(report),
        ],
        env={**os.environ, "KREGRESS_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        check=False,
    )
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", nargs="?", type=Path, default=Path("corpus"))
    parser.add_argument("--workers", default="auto", help="pytest-xdist -n value (default: auto)")
    parser.add_argument("--repeats", type=int, default=1, help="cold/warm pairs to run (default: 1)")
    args = parser.parse_args()
    rows = []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            cache, report = Path(tmp) / "cache", Path(tmp) / "results.json"
            cold = run(args.corpus, cache, args.workers, report)
            warm = run(args.corpus, cache, args.workers, report)
            items = len(json.loads(report.read_text())["items"]) if report.exists() else 0
        rows.append((cold, warm, items))
        print(f"items {items:4d}  cold {cold:7.2f} s  warm {warm:7.2f} s  warm/cold {warm / cold:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
