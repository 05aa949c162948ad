"""Build-ahead: the wall time of a cold release bisect with and without building the environments
of both possible next points while one is judged, as a ratio measured in one run.

Cold: each bisect starts with an empty kregress cache (no environments, no memo) and, unless
--warm-downloads, an empty uv cache (every wheel is downloaded, as on a fresh runner). The two
modes alternate (with, without, with, ...) so a slower network or disk hits both alike.

    .venv/bin/python bench/bench_build_ahead.py [--runs 1] [--case interp_sum_int32_wrap]
        [--good triton==3.0.0] [--bad triton==3.5.0] [--target cpu:interpreter] [--regress fail]

The default judges on the interpreter (about 2 s a point), where little judging time is left to
hide builds behind; a compile target judges longer, e.g. the fix of atomic_add_bf16 on sm_90:
    --case atomic_add_bf16 --target cuda:sm_90 --good triton==3.0.0 --bad triton==3.9.0 --regress pass
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def bisect(args: argparse.Namespace, ahead: bool, scratch: Path) -> tuple[float, int, str]:
    """One cold bisect: seconds, exit status, the line naming the culprit."""
    env = {**os.environ, "KREGRESS_CACHE_DIR": str(scratch / "kregress")}
    if not args.warm_downloads:
        env["UV_CACHE_DIR"] = str(scratch / "uv")
    command = [sys.executable, "-m", "kregress.cli", "bisect", args.case, "--corpus", str(REPO / "corpus"),
               "--target", args.target, "--good", args.good, "--bad", args.bad]  # fmt: skip
    command += ["--regress", args.regress]
    if not ahead:
        command.append("--no-build-ahead")
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - started
    found = re.search(r"First (?:bad|fixed)[^\n]*", done.stdout)
    if done.returncode != 0:
        print(done.stderr[-3000:], file=sys.stderr)
    return seconds, done.returncode, found.group(0) if found else "(no culprit)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="bisects per mode (default 1)")
    parser.add_argument("--case", default="interp_sum_int32_wrap")
    parser.add_argument("--target", default="cpu:interpreter")
    parser.add_argument("--good", default="triton==3.0.0")
    parser.add_argument("--bad", default="triton==3.5.0")
    parser.add_argument("--regress", default="fail", help="as kregress bisect --regress")
    parser.add_argument("--warm-downloads", action="store_true", help="keep uv's cache (no downloads)")
    args = parser.parse_args()
    times: dict[bool, list[float]] = {True: [], False: []}
    for run in range(args.runs):
        for ahead in (True, False) if run % 2 == 0 else (False, True):
            with tempfile.TemporaryDirectory(prefix="kregress-bench-ahead-") as folder:
                seconds, status, culprit = bisect(args, ahead, Path(folder))
                shutil.rmtree(folder, ignore_errors=True)
            label = "with build-ahead   " if ahead else "without build-ahead"
            print(f"run {run + 1} {label}: {seconds:7.1f} s  exit {status}  {culprit}", flush=True)
            if status != 0:
                sys.exit(f"the bisect did not find its culprit (exit {status}): no figure from this run")
            times[ahead].append(seconds)
    with_ahead, without = statistics.median(times[True]), statistics.median(times[False])
    print(f"median over {args.runs} run(s): with {with_ahead:.1f} s, without {without:.1f} s; "
          f"without / with = {without / with_ahead:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
