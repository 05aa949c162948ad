"""What --trace-passes costs per compile: the ir and resource items of a corpus on one target,
judged with and without the trace, alternated in one run, each with an empty kregress cache (a
traced compile is always cold, so the untraced one is made cold too).

Per case: the compile job's seconds without and with the trace, their ratio, and the bytes of
dumps a traced compile keeps. Ratios are what to compare; seconds depend on the machine.

    .venv/bin/python bench/bench_pass_trace.py [CORPUS] [--target cuda:sm_90] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path


def judged(corpus: Path, target: str, traced: bool, select: str) -> list[dict]:
    """The result records of one run on an empty cache."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "results.json"
        command = [sys.executable, "-m", "pytest", str(corpus), "--target", target, "-m", "ir or resource",
                   "-q", "-p", "no:cacheprovider", "--kregress-json", str(report),
                   *(["-k", select] if select else []), *(["--trace-passes"] if traced else [])]  # fmt: skip
        env = {**os.environ, "KREGRESS_CACHE_DIR": str(Path(tmp) / "cache")}
        subprocess.run(command, env=env, capture_output=True, check=False)
        return json.loads(report.read_text())["items"] if report.exists() else []


def per_case(items: list[dict]) -> dict[str, tuple[float, int]]:
    """Per case: the slowest compile job of its items (items of one kernel share a job), and the
    most bytes of dumps one of its configs kept."""
    found: dict[str, tuple[float, int]] = {}
    for item in items:
        if item["outcome"] in ("SKIP", "ERROR") or item.get("job_seconds") is None:
            continue
        passes = (item.get("measured") or {}).get("passes") or {}
        dumped = max((t.get("dump_bytes", 0) for t in passes.values() if isinstance(t, dict)), default=0)
        seconds, kept = found.get(item["case"], (0.0, 0))
        found[item["case"]] = (max(seconds, item["job_seconds"]), max(kept, dumped))
    return found


def main() -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("corpus", nargs="?", type=Path, default=Path("corpus"))
    parser.add_argument("--target", default="cuda:sm_90")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each mode, alternated (default 2)")
    parser.add_argument("-k", dest="select", default="", help="pytest -k expression to pick cases")
    args = parser.parse_args()
    seconds: dict[tuple[str, bool], list[float]] = defaultdict(list)
    dumps: dict[str, int] = {}
    for round_number in range(args.rounds):
        for traced in (False, True):
            print(f"round {round_number + 1}: {'traced' if traced else 'untraced'}", file=sys.stderr)
            items = judged(args.corpus, args.target, traced, args.select)
            for case, (spent, kept) in per_case(items).items():
                seconds[(case, traced)].append(spent)
                if traced:
                    dumps[case] = max(dumps.get(case, 0), kept)
    print(f"{'case':34} {'untraced s':>10} {'traced s':>9} {'ratio':>6} {'dumps MB':>9}")
    for case in sorted({case for case, _ in seconds}):
        plain, traced = seconds.get((case, False)), seconds.get((case, True))
        if not plain or not traced:
            print(f"{case:34} not judged in both modes")
            continue
        before, after = statistics.median(plain), statistics.median(traced)
        print(f"{case:34} {before:10.2f} {after:9.2f} {after / before:6.2f} {dumps.get(case, 0) / 1e6:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
