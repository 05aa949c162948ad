"""README command 1 on a fresh machine: a fresh clone of each commit given, every cache empty
(HOME, UV_CACHE_DIR, XDG_CACHE_HOME, PIP_CACHE_DIR, KREGRESS_CACHE_DIR), then

    bash .ci/setup && .venv/bin/pytest corpus/ --backend cpu -n auto

timed from start to end, with the targets the run judged and its items; the commits one after the
other in one run, so their ratio is what to read (absolute seconds depend on the machine and on
what the package index serves). Intel's native compiler comes from KREGRESS_XPU_NATIVE_DEBS when
that is set (as .ci/run sets it), else kregress fetches it from Debian, as on any new machine.

    .venv/bin/python bench/bench_first_run.py BEFORE AFTER [--repo .] [--workers auto] [--ship-durations]

--ship-durations writes the last commit's item durations to runner/durations/cpu.json, the order a
machine that never ran the corpus starts its items in (a cold run's: compiles included).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CACHES = ("HOME", "UV_CACHE_DIR", "XDG_CACHE_HOME", "PIP_CACHE_DIR", "KREGRESS_CACHE_DIR")


def first_run(repo: Path, commit: str, workers: str, log: Path) -> dict:
    """Seconds for setup and the corpus run of `commit` from a fresh clone with empty caches."""
    with tempfile.TemporaryDirectory(prefix="kregress-first-run-") as tmp:
        root = Path(tmp)
        clone = root / "clone"
        subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", commit], check=True)
        env = {**os.environ, **{name: str(root / name.lower()) for name in CACHES}}
        env.pop("VIRTUAL_ENV", None)
        report = root / "results.json"
        command = (f"bash .ci/setup && .venv/bin/pytest corpus/ --backend cpu -n {workers} "
                   f"-p no:cacheprovider --kregress-json {report}")  # fmt: skip
        started = time.perf_counter()
        with open(log, "w") as out:
            done = subprocess.run(["bash", "-c", command], cwd=clone, env=env, stdout=out,
                                  stderr=subprocess.STDOUT, check=False)  # fmt: skip
        seconds = time.perf_counter() - started
        text = log.read_text()
        header = re.search(r"kregress: backend cpu, targets (.+?)(?:, toolchain|$)", text, re.M)
        targets = [t.strip() for t in header.group(1).split(",")] if header else []
        items = json.loads(report.read_text())["items"] if report.exists() else []
        if report.exists():  # kept beside the log: its durations are what runner/durations ships
            shutil.copy(report, log.with_suffix(".json"))
    return {"commit": commit, "seconds": round(seconds, 1), "exit": done.returncode, "targets": targets,
            "items": len(items)}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("commits", nargs="+", help="commits (or branches) of --repo, measured in this order")
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--workers", default="auto", help="pytest-xdist -n value (default: auto)")
    parser.add_argument("--logs", type=Path, default=Path(tempfile.gettempdir()),
                        help="where each run keeps its log and results (first-run-C.log, .json)")  # fmt: skip
    parser.add_argument("--ship-durations", action="store_true",
                        help="write the last commit's item durations to runner/durations/")  # fmt: skip
    args = parser.parse_args()
    rows = []
    for commit in args.commits:
        row = first_run(args.repo, commit, args.workers, args.logs / f"first-run-{commit}.log")
        rows.append(row)
        print(f"{commit}: {row['seconds']:7.1f} s, exit {row['exit']}, {row['items']} items, "
              f"{len(row['targets'])} targets ({', '.join(row['targets'])})", flush=True)  # fmt: skip
    first = rows[0]
    for row in rows[1:]:
        print(f"{row['commit']} / {first['commit']}: {row['seconds'] / first['seconds']:.2f} of the time, "
              f"{row['items'] / max(first['items'], 1):.2f} of the items")  # fmt: skip
    if args.ship_durations:
        results = args.logs / f"first-run-{args.commits[-1]}.json"
        shipped = args.repo / "runner" / "durations" / "cpu.json"
        shipped.write_text(
            json.dumps(shipped_from(json.loads(results.read_text())), indent=0, sort_keys=True) + "\n"
        )
        print(f"wrote {shipped} from {results}")
    return 0 if all(row["exit"] in (0, 1) for row in rows) else 1


def shipped_from(document: dict) -> dict[str, float]:
    """case::item -> seconds, as kregress ships them (kregress.job_durations.item_key)."""
    return {f"{i['case']}::{i['nodeid'].split('::')[-1]}": round(i.get("duration") or 0.0, 1)
            for i in document["items"] if i.get("nodeid")}  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
