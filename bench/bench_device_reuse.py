"""Device runs a release bisect saves by compiling first (`kregress bisect --compile-first`).

For each numerics item of a device target, the code its check launches is compiled for the
device's architecture on this machine (no device needed) under every release given, as the
bisect does before each device run. Then, for every boundary a regression could have (between
two releases whose launched code differs: the same code cannot change a verdict on the same
device), a release bisect is run twice over those releases: plain, one device run a point, and
with reuse, where a point launching the code of a point already judged takes its verdict. Printed
per item: the releases whose code could be known, how many distinct codes they launch, and the
mean device runs of a bisect each way.

    python bench/bench_device_reuse.py [--case grouped_reduction ...] [--releases 3.0.0 3.1.0 ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from kregress.bisect.search import PointVerdict, search

RELEASES = [
    "3.0.0",
    "3.1.0",
    "3.2.0",
    "3.3.0",
    "3.3.1",
    "3.4.0",
    "3.5.0",
    "3.5.1",
    "3.6.0",
    "3.7.0",
    "3.7.1",
    "3.8.0",
    "3.9.0",
]


def launched(case: str, release: str, target: str, corpus: Path) -> dict[str, str | None]:
    """Item -> a digest of the code its check launches under `release` (None: not knowable)."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "results.json"
        subprocess.run(
            [sys.executable, "-m", "pytest", str(corpus / case), "--backend", target.split(":")[0], "-q",
             "-p", "no:cacheprovider", "-k", "numerics", "--compile-first", target,
             "--toolchain", f"triton=={release}", "--kregress-json", str(report)],
            capture_output=True, check=False,
        )  # fmt: skip
        items = json.loads(report.read_text())["items"] if report.exists() else []
    found = {}
    for item in items:
        code = (item.get("measured") or {}).get("launch_code")
        found[f"{case}::{item['expectation']}"] = json.dumps(code, sort_keys=True) if code else None
    return found


def device_runs(codes: list[str | None], boundary: int, reuse: bool) -> int:
    """Device runs of a bisect over `codes` (both ends judged, as a bisect verifies them) whose
    first bad point is `boundary`."""
    judged: dict[str, PointVerdict] = {}
    runs = 0

    def judge(i: int) -> PointVerdict:
        nonlocal runs
        verdict = PointVerdict.GOOD if i < boundary else PointVerdict.BAD
        code = codes[i]
        if reuse and code is not None and code in judged:
            return judged[code]
        runs += 1
        if code is not None:
            judged[code] = verdict
        return verdict

    judge(0), judge(len(codes) - 1)
    found = search(len(codes), lambda points: {i: judge(i) for i in points})
    assert found.first_bad == boundary
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--case", action="append", help="(repeatable) default: the GPU numerics cases below")
    parser.add_argument("--releases", nargs="+", default=RELEASES, help="triton releases, oldest first")
    parser.add_argument(
        "--target", default="cuda:sm_90", help="the device's architecture (default cuda:sm_90)"
    )
    parser.add_argument("--corpus", type=Path, default=Path("corpus"))
    args = parser.parse_args()
    cases = args.case or ["grouped_reduction", "layout_conversion_smem", "cas_loop_int64"]
    codes: dict[str, list[str | None]] = {}
    for release in args.releases:
        for case in cases:
            for item, code in launched(case, release, args.target, args.corpus).items():
                codes.setdefault(item, []).append(code)
        print(f"compiled first under triton=={release}", file=sys.stderr, flush=True)
    print(f"{'item':48} {'known':>7} {'codes':>6} {'plain':>6} {'reuse':>6} {'saved':>6}")
    totals = [0.0, 0.0]
    for item, found in codes.items():
        known = [c for c in found if c is not None]
        # a regression can only sit between two releases that launch different (or unknown) code
        boundaries = [b for b in range(1, len(found)) if found[b] is None or found[b] != found[b - 1]]
        if not known or not boundaries:
            print(f"{item:48} {len(known):>3}/{len(found):<3} {'-':>6}   code not known: nothing to reuse")
            continue
        plain = statistics.mean(device_runs(found, b, reuse=False) for b in boundaries)
        reuse = statistics.mean(device_runs(found, b, reuse=True) for b in boundaries)
        totals[0], totals[1] = totals[0] + plain, totals[1] + reuse
        print(f"{item:48} {len(known):>3}/{len(found):<3} {len(set(known)):>6} {plain:>6.2f} {reuse:>6.2f} "
              f"{1 - reuse / plain:>6.0%}")  # fmt: skip
    if totals[0]:
        print(f"{'all items with known code':48} {'':>7} {'':>6} {totals[0]:>6.2f} {totals[1]:>6.2f} "
              f"{1 - totals[1] / totals[0]:>6.0%}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
