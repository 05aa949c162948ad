"""Run one job of a case in a child process, with a timeout, and classify how it ended.

A job is the unit of measurement: compiling one kernel for one target (all its configs), or one
numerics check, or one perf comparison on one target. Several expectations share a job, so each
job runs once per pytest process and is memoized.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kregress.backends import BACKENDS
from kregress.child_results import STACKS_AFTER, TOOLCHAIN_FILE, ConfigResult, JobStatus
from kregress.errors import KregressError
from kregress.matrix import Target
from kregress.paths import cache_root

DEFAULT_TIMEOUT = 600.0
LOG_TAIL_LINES = 40


@dataclass(frozen=True)
class Interpreter:
    """The Python a job runs with, the variables its toolchain needs, and the toolchain's name."""

    python: str = sys.executable
    env: dict[str, str] = field(default_factory=dict)
    toolchain: str | None = None
    commits: tuple[tuple[str, str], ...] = ()  # (package, commit) of what was built from a commit

    @property
    def key(self) -> str:
        return json.dumps([self.python, sorted(self.env.items())])


def device_name(target: Target) -> str:
    """The torch device string a check runs on."""
    return BACKENDS[target.backend].torch_device


@dataclass(frozen=True)
class Job:
    """One measurement: made by the expectation kind that owns it (`ExpectationBase.make_job`),
    whose `measure()` the child calls (`measure`, as module:Class); expectations whose jobs are equal
    share one run."""

    kind: str  # the measurement: compile, numerics, perf, or a kind's own
    case_id: str
    repro: Path
    framework: str
    target: Target
    attr: str
    baseline: str | None = None
    rounds: int = 1  # perf: alternating timing rounds of subject and baseline
    trace_passes: bool = False  # compile: dump the IR before every MLIR pass (a compile of its own)
    measure: str = "kregress.kinds.base:CompiledExpectation"  # whose measure() the child calls
    exclusive: bool = False  # takes its device alone itself, while it times (kinds.perf)
    extra: tuple[tuple[str, Any], ...] = ()  # a kind's own fields, passed to its measure()

    @property
    def key(self) -> tuple[str, ...]:
        return (
            self.kind,
            str(self.repro),
            self.target.name,
            self.attr,
            self.baseline or "",
            str(self.rounds),
            str(self.trace_passes),
            self.measure,
            json.dumps(self.extra, default=str),
        )

    def spec(self) -> dict[str, Any]:
        return {
            **dict(self.extra),
            "measure": self.measure,
            "kind": self.kind,
            "case": self.case_id,
            "repro": str(self.repro),
            "framework": self.framework,
            "target": self.target.model_dump(),
            "device": device_name(self.target),
            "attr": self.attr,
            "subject": self.attr,
            "baseline": self.baseline,
            "rounds": self.rounds,
            "trace_passes": self.trace_passes,
        }

    def environment(self, interpreter: Interpreter) -> dict[str, str]:
        env = child_environment(interpreter)
        if self.target.kind == "interpreter":
            env["TRITON_INTERPRET"] = "1"
        # One Triton cache per target, shared by all workers: Triton writes entries atomically,
        # and a warm re-run finds every kernel already compiled.
        env.setdefault("TRITON_CACHE_DIR", str(cache_root() / "triton" / self.target.name.replace(":", "-")))
        env["PYTHONUNBUFFERED"] = "1"
        return env


def kregress_path_shim() -> Path:
    """A folder holding only `kregress` (a symlink to this package), for PYTHONPATH.

    A toolchain environment has its own compiler but not kregress; putting kregress's whole
    site-packages on its path would leak this environment's compilers into it.
    """
    import kregress

    package = Path(kregress.__file__).resolve().parent
    digest = hashlib.sha256(str(package).encode()).hexdigest()[:12]
    shim = cache_root() / "pythonpath" / digest
    if not (shim / "kregress").exists():
        shim.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            (shim / "kregress").symlink_to(package, target_is_directory=True)
    return shim


def child_environment(interpreter: Interpreter) -> dict[str, str]:
    """The environment of a child: ours, the toolchain's variables, and kregress on its path."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(interpreter.env)
    if interpreter.python != sys.executable:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(kregress_path_shim()), env.get("PYTHONPATH")) if p
        )
    return env


@dataclass
class JobOutcome:
    """How the child ended and what it measured, read once from its result.json."""

    status: JobStatus
    reason: str = ""
    measured: dict[str, Any] = field(default_factory=dict)  # what the kind's measure() returned
    configs: list[ConfigResult] = field(default_factory=list)  # a compile's, one per config
    error_type: str | None = None
    traceback: str = ""
    toolchain: dict[str, str] = field(default_factory=dict)  # the versions the child ran with
    folder: Path | None = None
    log_tail: str = ""
    returncode: int | None = None
    seconds: float = 0.0
    diagnostics: str = ""  # the compiler's diagnostic lines among all the child printed

    @classmethod
    def from_result(
        cls, result: dict[str, Any], folder: Path, log_tail: str, returncode: int | None, seconds: float,
        diagnostics: str = "",
    ) -> JobOutcome:  # fmt: skip
        measured = dict(result.get("measured") or {})
        return cls(
            JobStatus(result["status"]),
            str(result.get("reason", "")),
            measured,
            [ConfigResult.from_json(c) for c in measured.get("configs", [])],
            result.get("error_type"),
            str(result.get("traceback", "")),
            {str(k): str(v) for k, v in (result.get("toolchain") or {}).items()},
            folder,
            log_tail,
            returncode,
            seconds,
            diagnostics,
        )


def versions_left(folder: Path) -> dict[str, str]:
    """The versions a child wrote before its job (none when it died before that)."""
    try:
        versions = json.loads((folder / TOOLCHAIN_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in versions.items()} if isinstance(versions, dict) else {}


# A compiler's own diagnostics among what its child printed: MLIR's "error:", an LLVM ERROR, a failed
# assertion, TVM's "Check failed". Printed, not raised (the exception says "PassManager::run failed"),
# and what a reporter quotes. The first are the cause, the last what stopped the child.
DIAGNOSTIC = re.compile(r"error|assert|check failed|abort|fatal|failed|exception|what\(\)", re.I)
DIAGNOSTIC_LINES, DIAGNOSTIC_CHARS = 6, 300


def diagnostics(text: str) -> str:
    found = [line.strip()[:DIAGNOSTIC_CHARS] for line in text.splitlines() if DIAGNOSTIC.search(line)]
    kept = (
        found if len(found) <= 2 * DIAGNOSTIC_LINES else found[:DIAGNOSTIC_LINES] + found[-DIAGNOSTIC_LINES:]
    )
    return "\n".join(kept)


def tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with status {returncode}"


class ForkServerGone(KregressError):
    """The fork server died or never started: jobs fall back to a fresh interpreter each."""


class ForkServer:
    """Client of `python -m kregress.zygote` (see there): one per interpreter per process."""

    def __init__(self, interpreter: Interpreter, interpret: bool, startup_timeout: float = 300.0) -> None:
        python = interpreter.python
        env = child_environment(interpreter)
        if interpret:  # triton.language's own @jit helpers (tl.cdiv, ...) are made at import
            env["TRITON_INTERPRET"] = "1"
        self.process = subprocess.Popen(
            [python, "-m", "kregress.zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        self.buffer = b""
        self.startup_timeout = startup_timeout
        self.forked_at = 0.0
        if "ready" not in self.reply(startup_timeout):
            raise ForkServerGone("fork server did not start")

    def reply(self, timeout: float | None) -> dict[str, Any]:
        """The next reply line, or TimeoutError if none arrives within `timeout` seconds."""
        assert self.process.stdout is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            readable, _, _ = select.select([self.process.stdout], [], [], remaining)
            if not readable:
                raise TimeoutError
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                raise ForkServerGone("fork server exited")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def run(self, job_file: Path, env: dict[str, str], log: Path, timeout: float) -> int | None:
        """Run one job in a forked child; its exit code, negative for a signal, or None on timeout."""
        assert self.process.stdin is not None
        request = {"job_file": str(job_file), "env": env, "cwd": str(job_file.parent), "log": str(log)}
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
        except BrokenPipeError:
            raise ForkServerGone("fork server exited") from None
        try:  # before forking, the server imports what the job needs and it has not (kregress.zygote)
            pid = self.reply(self.startup_timeout)["pid"]
        except TimeoutError:
            self.close()
            raise ForkServerGone(f"fork server did not fork within {self.startup_timeout:g} s") from None
        self.forked_at = time.perf_counter()
        try:
            return self.reply(timeout)["status"]
        except TimeoutError:
            stop(pid)
            self.reply(60)
            return None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()
            self.process.wait(timeout=10)


FORK_SERVERS: dict[str, ForkServer | None] = {}


def fork_server_key(interpreter: Interpreter, interpret: bool) -> str:
    """One server per interpreter and mode: Triton decides at import whether its helpers are interpreted."""
    return f"{interpreter.key}|interpret={interpret}"


def fork_server(interpreter: Interpreter, interpret: bool) -> ForkServer | None:
    key = fork_server_key(interpreter, interpret)
    if key not in FORK_SERVERS:
        try:
            FORK_SERVERS[key] = ForkServer(interpreter, interpret)
        except (ForkServerGone, TimeoutError, OSError):
            FORK_SERVERS[key] = None
    return FORK_SERVERS[key]


@atexit.register
def close_fork_servers() -> None:
    for server in FORK_SERVERS.values():
        if server is not None:
            server.close()
    FORK_SERVERS.clear()


STACKS_LEAD = 1.5  # seconds before its timeout a child writes its stacks


def stacks_after(timeout: float) -> float:
    """When a child with `timeout` seconds writes its stacks: just before it is stopped."""
    return max(timeout - STACKS_LEAD, timeout * 0.8)


def stop(pid: int) -> None:
    """Kill the child's whole session (the compilers it spawned, ptxas and nvcc, too)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


STACK = re.compile(r"^(Current thread|Thread) 0x[0-9a-f]+ [^\n]*:\n((?:[ \t]+File [^\n]*\n?)+)", re.M)
FRAME = re.compile(r'File "([^"]+)", line (\d+) in (\S+)')


def last_frame(log: str, case_folder: Path) -> str | None:
    """Where the child was, from the stacks faulthandler wrote: the innermost frame of the thread
    running the case's own code (a file of `case_folder`; else of the current thread),
    and the innermost one of the case's code when that is another (a kernel spinning under a torch
    synchronize is the repro's launch)."""
    stacks = [(m.group(1), FRAME.findall(m.group(2))) for m in STACK.finditer(log)]
    stacks = [(kind, frames) for kind, frames in stacks if frames]
    if not stacks:
        return None
    folder = str(case_folder)

    def own(frames: list[tuple[str, str, str]]) -> tuple[str, str, str] | None:
        return next((f for f in frames if f[0].startswith(folder)), None)

    frames = next((f for _, f in stacks if own(f)), None) or next(
        (f for kind, f in stacks if kind == "Current thread"), stacks[0][1]
    )
    shown = [f"{Path(path).name}:{line} in {name}" for path, line, name in frames]
    mine = own(frames)
    at = shown[frames.index(mine)] if mine else None
    return shown[0] if at in (None, shown[0]) else f"{at} (in {shown[0]})"


def run_in_fresh_interpreter(
    python: str, job_file: Path, env: dict[str, str], log_path: Path, timeout: float
) -> int | None:
    with log_path.open("w") as log:
        child = subprocess.Popen(
            [python, "-m", "kregress.worker", str(job_file)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=job_file.parent,
            env=env,
            start_new_session=True,
        )
        try:
            return child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop(child.pid)
            child.wait()
            return None


def run_job(
    job: Job,
    timeout: float,
    workdir: Path,
    interpreter: Interpreter | None = None,
    use_fork_server: bool = True,
    why_timeout: str = "",
) -> JobOutcome:
    """Run the job in a child process, wait at most `timeout` seconds (`why_timeout` says why that
    long, when it is not the case's timeout), and classify how it ended."""
    folder = Path(tempfile.mkdtemp(prefix=f"{job.case_id}-{job.kind}-", dir=workdir))
    job_file = folder / "job.json"
    job_file.write_text(json.dumps(job.spec()))
    log_path = folder / "child.log"
    started = time.perf_counter()
    interpreter = interpreter or Interpreter()
    env = {**job.environment(interpreter), STACKS_AFTER: f"{stacks_after(timeout):.3f}"}
    interpret = job.target.kind == "interpreter"
    server = fork_server(interpreter, interpret) if use_fork_server else None
    try:
        if server is None:
            raise ForkServerGone("not used")
        returncode = server.run(job_file, env, log_path, timeout)
        started = server.forked_at  # the job's time, not the server's imports before it
    except ForkServerGone:
        FORK_SERVERS.pop(fork_server_key(interpreter, interpret), None)
        (folder / "result.json").unlink(missing_ok=True)
        started = time.perf_counter()
        returncode = run_in_fresh_interpreter(interpreter.python, job_file, env, log_path, timeout)
    seconds = time.perf_counter() - started
    printed = log_path.read_text(errors="replace") if log_path.exists() else ""
    log_tail, said = tail(printed), diagnostics(printed)
    result_path = folder / "result.json"
    if returncode is None:
        reason = f"no result after {timeout:g} s{f' ({why_timeout})' if why_timeout else ''}; killed"
        where = last_frame(printed, job.repro.parent)
        reason += f"; it was at {where} (its stacks are in the log)" if where else ""
        return JobOutcome(JobStatus.TIMEOUT, reason, toolchain=versions_left(folder), folder=folder,
                          log_tail=log_tail, seconds=seconds, diagnostics=said)  # fmt: skip
    if returncode != 0 or not result_path.exists():
        how = describe_exit(returncode) + ("" if returncode != 0 else " without writing a result")
        return JobOutcome(JobStatus.CRASH, f"child process {how}", toolchain=versions_left(folder),
                          folder=folder, log_tail=log_tail, returncode=returncode,
                          seconds=seconds, diagnostics=said)  # fmt: skip
    result = json.loads(result_path.read_text())
    return JobOutcome.from_result(result, folder, log_tail, returncode, seconds, said)
