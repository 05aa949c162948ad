"""Which releases of each framework load and judge on this machine, measured (the README's table).

For every release on the index from the oldest kregress judges, one fixture case is judged under it
(`pytest --toolchain PACKAGE==VERSION --kregress-json`) on the targets that framework builds here;
a release "judges" a target when its items end PASS, FAIL, XFAIL or XPASS there, and otherwise the
table gives the first reason its items SKIP or ERROR (a release that cannot load, a target it
predates). Nothing is read from a list: each cell is a run.

    .venv/bin/python bench/bench_release_load.py [--only triton] [--markdown table.md]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from packaging.version import Version

from kregress.package_index import PYPI, index_files

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "tests" / "corpora"
# package -> (fixture case, expectation filter, targets, oldest release judged)
TRITON_TARGETS = ["cpu:interpreter", "cuda:sm_90", "cuda:sm_100", "hip:gfx942", "hip:gfx950"]
SUBJECTS = {
    "triton": ("kinds/vector_add", "compiles or numerics", TRITON_TARGETS, "3.0.0"),
    "triton-xpu": ("kinds/vector_add", "compiles", ["xpu:pvc", "xpu:bmg"], "3.0.0b1"),
    "tilelang": ("tilelang/atomic_accumulate", "uses", ["cuda:sm_90", "cuda:sm_100"], "0.1.6.post2"),
}
JUDGED = {"PASS", "FAIL", "XFAIL", "XPASS"}


def releases(package: str, oldest: str) -> list[str]:
    files = [f for f in index_files(package, PYPI) if not f.yanked and f.version >= Version(oldest)]
    return [str(v) for v in sorted({f.version for f in files})]


def judge(package: str, version: str, work: Path) -> dict[str, str]:
    """target -> "judges" or why not, for one release."""
    case, only, targets, _ = SUBJECTS[package]
    folder = work / f"{package}-{version}"
    shutil.copytree(CORPORA / case, folder / "corpus" / Path(case).name)
    report = folder / "results.json"
    command = [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "-q", "-k", only,
               "--toolchain", f"{package}=={version}", "--kregress-json", str(report),
               *(a for t in targets for a in ("--target", t))]  # fmt: skip
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=1800, check=False)
    if not report.exists():
        last = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["no output"]
        return dict.fromkeys(targets, f"no run: {last[0][:120]}")
    document = json.loads(report.read_text())
    items = document["items"]
    reasons = list((document.get("not_applicable") or {}).get("by_reason", {}))
    cells = {}
    for target in targets:
        here = [i for i in items if i["target"] == target]
        if not here:
            said = next((r for r in reasons if target in r), reasons[0] if reasons else "")
            cells[target] = f"not collected: {said[:120]}"
        elif all(i["outcome"] in JUDGED for i in here):
            cells[target] = "judges"
        else:
            other = next(i for i in here if i["outcome"] not in JUDGED)
            said = (other.get("message") or "").splitlines()[:1] or [""]
            cells[target] = f"{other['outcome']}: {said[0][:120]}"
    return cells


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="*", choices=list(SUBJECTS), help="these packages only")
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    args = parser.parse_args()
    lines = []
    with tempfile.TemporaryDirectory(prefix="kregress-release-load-") as scratch:
        for package in args.only or list(SUBJECTS):
            *_, targets, oldest = SUBJECTS[package]
            lines += [f"| {package} | {' | '.join(targets)} |", "|---|" + "---|" * len(targets)]
            for version in releases(package, oldest):
                started = time.monotonic()
                cells = judge(package, version, Path(scratch))
                row = f"| {version} | " + " | ".join(cells[t] for t in targets) + " |"
                lines.append(row)
                print(row, f"({time.monotonic() - started:.0f} s)", flush=True)
            lines.append("")
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
