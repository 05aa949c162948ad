"""Run one job of a case in a child process, with a timeout, and classify how it ended.

A job is the unit of measurement: compiling one kernel for one target (all its configs), or one
numerics check, or one perf comparison on one target. Several expectations share a job, so each
job runs once per pytest process and is memoized.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kregress.matrix import Target

DEFAULT_TIMEOUT = 600.0
LOG_TAIL_LINES = 40


def cache_root() -> Path:
    base = os.environ.get("KREGRESS_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kregress"
    )
    return Path(base)


def device_name(target: Target) -> str:
    """The torch device string a check runs on (ROCm builds of torch call their GPU `cuda`)."""
    return {"cpu": "cpu", "cuda": "cuda", "hip": "cuda", "xpu": "xpu"}[target.backend]


@dataclass(frozen=True)
class Job:
    kind: str  # compile | numerics | perf
    case_id: str
    repro: Path
    framework: str
    target: Target
    attr: str
    baseline: str | None = None

    @property
    def key(self) -> tuple[str, ...]:
        return (self.kind, str(self.repro), self.target.name, self.attr, self.baseline or "")

    def spec(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "case": self.case_id,
            "repro": str(self.repro),
            "framework": self.framework,
            "target": self.target.model_dump(),
            "device": device_name(self.target),
            "attr": self.attr,
            "subject": self.attr,
            "baseline": self.baseline,
        }

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("TRITON_INTERPRET", None)
        if self.target.kind == "interpreter":
            env["TRITON_INTERPRET"] = "1"
        # One Triton cache per target, shared by all workers: Triton writes entries atomically,
        # and a warm re-run finds every kernel already compiled.
        env.setdefault("TRITON_CACHE_DIR", str(cache_root() / "triton" / self.target.name.replace(":", "-")))
        env["PYTHONUNBUFFERED"] = "1"
        return env


@dataclass
class JobOutcome:
    """How the child ended. status: ok | unsupported | case_error | raised | crash | timeout."""

    status: str
    result: dict[str, Any] = field(default_factory=dict)
    folder: Path | None = None
    log_tail: str = ""
    returncode: int | None = None
    seconds: float = 0.0

    @property
    def reason(self) -> str:
        return str(self.result.get("reason", ""))

    @property
    def toolchain(self) -> dict[str, str]:
        return dict(self.result.get("toolchain", {}))


def tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with status {returncode}"


def run_job(job: Job, timeout: float, workdir: Path, python: str = sys.executable) -> JobOutcome:
    """Start the child, wait at most `timeout` seconds, and classify what happened."""
    import time

    folder = Path(tempfile.mkdtemp(prefix=f"{job.case_id}-{job.kind}-", dir=workdir))
    job_file = folder / "job.json"
    job_file.write_text(json.dumps(job.spec()))
    log_path = folder / "child.log"
    started = time.perf_counter()
    with log_path.open("w") as log:
        child = subprocess.Popen(
            [python, "-m", "kregress.worker", str(job_file)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=folder,
            env=job.environment(),
            start_new_session=True,
        )
        try:
            returncode = child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)  # the whole group: compilers spawn ptxas, nvcc, ...
            child.wait()
            returncode = None
    seconds = time.perf_counter() - started
    log_tail = tail(log_path.read_text(errors="replace"))
    result_path = folder / "result.json"
    if returncode is None:
        return JobOutcome(
            "timeout", {"reason": f"no result after {timeout:g} s; killed"}, folder, log_tail, None, seconds
        )
    if returncode != 0 or not result_path.exists():
        how = describe_exit(returncode) + ("" if returncode != 0 else " without writing a result")
        return JobOutcome("crash", {"reason": f"child process {how}"}, folder, log_tail, returncode, seconds)
    result = json.loads(result_path.read_text())
    return JobOutcome(result["status"], result, folder, log_tail, returncode, seconds)
