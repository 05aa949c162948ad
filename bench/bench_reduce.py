"""`kregress reduce` on the reducer's fixture and on real corpus cases: lines and tokens before and
after, candidates judged and wall time, from each run's REDUCED.md, on this machine's cores.

    .venv/bin/python bench/bench_reduce.py [-j 2] [--case CASE:EXPECTATION:TARGET[:TOOLCHAIN] ...]

Default: the fixture (tests/corpora/reduce_dot_k8) only; each --case adds a corpus case, e.g.
atomic_add_bf16:compiles:cuda:sm_90:triton==3.0.0 (the failing config of its bad release).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def reduce_one(source: Path, expectation: str, target: str, toolchain: str | None, jobs: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        shutil.copytree(source, corpus / source.name)
        command = [sys.executable, "-m", "kregress.cli", "reduce", source.name, "-e", expectation,
                   "-t", target, "-j", str(jobs), "--corpus", str(corpus)]  # fmt: skip
        command += ["--toolchain", toolchain] if toolchain else []
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        report = corpus / f"{source.name}_reduced" / "REDUCED.md"
        if done.returncode != 0 or not report.exists():
            return f"{source.name}: not reduced (exit {done.returncode}): {done.stderr.strip()[-300:]}"
        text = report.read_text()
    rows = dict(re.findall(r"^\| (lines|tokens|configs) \| (\d+ \| \d+) \|$", text, re.M))
    judged = re.search(r"Judged (\d+) candidates", text)
    where = f"{target}, {toolchain}" if toolchain else target
    return (f"{source.name} [{where}]: lines {rows.get('lines')}, tokens {rows.get('tokens')}, "
            f"configs {rows.get('configs')}; {judged.group(1) if judged else '?'} candidates, "
            f"{seconds:.0f} s wall with -j {jobs}")  # fmt: skip


def main() -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--case", action="append", default=[], help="CASE:EXPECTATION:TARGET[:TOOLCHAIN]")
    args = parser.parse_args()
    print(reduce_one(ROOT / "tests" / "corpora" / "reduce_dot_k8", "compiles", "cuda:sm_80", None, args.jobs))
    for spec in args.case:
        case, expectation, backend, arch, *rest = spec.split(":")
        print(reduce_one(ROOT / "corpus" / case, expectation, f"{backend}:{arch}", rest[0] if rest else None,
                         args.jobs))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
