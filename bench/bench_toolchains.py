"""Toolchain environments: cold build vs warm reuse, and a job inside one vs in kregress's own.

Cold: a new environment in an empty kregress cache (uv's own package cache stays as it is, so this
measures creating and linking, not downloading; pass --no-uv-cache to include downloads). Warm:
asking again for the same toolchain. Then one compile job of a fixture case in the toolchain's
environment vs in kregress's own, through the fork server as in a corpus run.

    .venv/bin/python bench/bench_toolchains.py [--toolchain 'triton==3.2.0'] [--no-uv-cache]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from kregress.jobs import Interpreter, Job, close_fork_servers, run_job
from kregress.matrix import load_matrix
from kregress.toolchains import EnvironmentCache, Toolchain

CASE = Path(__file__).resolve().parent.parent / "tests" / "corpora" / "kinds" / "vector_add" / "repro.py"


def timed(action):
    started = time.perf_counter()
    value = action()
    return time.perf_counter() - started, value


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--toolchain", default="triton==3.2.0")
    parser.add_argument("--no-uv-cache", action="store_true", help="download every package (UV_NO_CACHE=1)")
    args = parser.parse_args()
    if args.no_uv_cache:
        os.environ["UV_NO_CACHE"] = "1"
    toolchain = Toolchain.parse(args.toolchain)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KREGRESS_CACHE_DIR"] = tmp
        cache = EnvironmentCache(Path(tmp) / "envs")
        cold, environment = timed(lambda: cache.get(toolchain))
        warm = min(timed(lambda: cache.get(toolchain))[0] for _ in range(5))
        print(f"{toolchain.name}: cold build {cold:.2f} s, warm reuse {warm * 1e3:.2f} ms "
              f"(cold/warm {cold / warm:,.0f}x)")  # fmt: skip
        target = load_matrix().target("cuda:sm_90")
        job = Job("compile", "vector_add", CASE, "triton", target, "add")
        workdir = Path(tmp) / "jobs"
        workdir.mkdir()
        for label, interpreter in (
            ("kregress's own", Interpreter()),
            (toolchain.name, environment.interpreter()),
        ):
            first, outcome = timed(lambda interpreter=interpreter: run_job(job, 600, workdir, interpreter))
            steady = min(timed(lambda i=interpreter: run_job(job, 600, workdir, i))[0] for _ in range(3))
            version = outcome.toolchain.get("triton")
            print(f"compile job in {label} (triton {version}): first {first:.2f} s (starts the fork server), "
                  f"then {steady:.2f} s per job")  # fmt: skip
        close_fork_servers()
    return 0


if __name__ == "__main__":
    sys.exit(main())
