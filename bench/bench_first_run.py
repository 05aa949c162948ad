"""README command 1 on a fresh machine: a fresh clone of each commit given, every cache empty
(HOME, UV_CACHE_DIR, XDG_CACHE_HOME, PIP_CACHE_DIR, KREGRESS_CACHE_DIR), then

    bash .ci/setup && .venv/bin/pytest corpus/ --backend cpu -n auto

timed from start to end, with the targets the run judged and its items; the commits one after the
other in one run, so their ratio is what to read (absolute seconds depend on the machine and on
what the package index serves). Intel's native compiler comes from KREGRESS_XPU_NATIVE_DEBS when
that is set (as .ci/run sets it), else kregress fetches it from Debian, as on any new machine.

    .venv/bin/python bench/bench_first_run.py BEFORE AFTER [--repo .] [--workers auto]
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
                        help="where each run's output is kept (first-run-COMMIT.log)")  # fmt: skip
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
    return 0 if all(row["exit"] in (0, 1) for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
