"""The pytest plugin: collect corpus/<case>/case.toml as items, one per (case, expectation, target).

Measuring happens in `setup` (a child process per job), judging in `call`; outcomes map onto
pytest's own (pass, fail, xfail, xpass, skip, error), so -k, -x, --lf, --junitxml and -n auto
work as usual.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kregress import xpu_native
from kregress.backends import BACKENDS
from kregress.devices import (
    DEVICE_LISTED,
    auto_workers,
    describe,
    device_lock,
    device_variable,
    pinned_environment,
    probe_count,
    visible,
)
from kregress.errors import KregressError
from kregress.frameworks import FRAMEWORKS
from kregress.item import judge_item, toolchain_interpreter, with_native_compiler
from kregress.job_durations import last_durations, watchdog_timeout
from kregress.jobs import DEFAULT_TIMEOUT, Interpreter, Job, JobOutcome, close_fork_servers, run_job
from kregress.judge import Outcome, Verdict
from kregress.kinds import KINDS, Expectation, Plan
from kregress.manifest import Case, load_case
from kregress.matrix import Matrix, SchemaError, Target, load_matrix
from kregress.package_index import CandidateError, newest_release
from kregress.record import ItemRecord
from kregress.report import RECORD, ResultsCollector
from kregress.toolchains import Toolchain, ToolchainError


@dataclass
class RunState:
    """What one kregress pytest session knows, in one place: the matrix and targets it judges, where
    jobs write, the toolchain interpreters it built, the devices, and what it left out."""

    matrix: Matrix
    targets: list[Target]
    workdir: Path
    explicit: Interpreter | None  # --toolchain's environment
    device: dict[str, str]  # the GPU this process is pinned to, as nvidia-smi names it
    jobs: dict[tuple[str, ...], JobOutcome] = field(default_factory=dict)  # one outcome per job
    device_waits: dict[tuple[str, ...], float] = field(default_factory=dict)  # job -> s to get the device
    job_starts: dict[tuple[str, ...], float] = field(default_factory=dict)  # job -> when asked for (epoch s)
    matrix_toolchains: dict[str, Interpreter | str] = field(default_factory=dict)  # or why not
    native_xpu: dict[str, str] | None = None  # the variables for Intel's ocloc, asked once
    # case::expectation[target] -> why that pair is not collected; a worker sends its own to the controller
    not_applicable: dict[str, str] = field(default_factory=dict)
    run_devices: list[dict[str, str]] | None = None  # every device the run may use


STATE = pytest.StashKey[RunState]()


def state(config: pytest.Config) -> RunState:
    return config.stash[STATE]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kregress", "kregress: judge the GPU-compiler regression corpus")
    group.addoption(
        "--backend",
        choices=list(BACKENDS),
        default="cpu",
        help="hardware to judge on: cpu (Triton interpreter + every compile-only target this "
        "machine can build), or a real cuda / hip / xpu device. Default: cpu.",
    )
    group.addoption(
        "--target",
        action="append",
        default=[],
        metavar="NAME",
        help="judge only these targets (repeatable), e.g. cuda:sm_90, hip:gfx942, xpu:pvc, "
        "cpu:interpreter. Default: the backend's targets in the matrix file.",
    )
    group.addoption(
        "--matrix",
        type=Path,
        default=None,
        metavar="PATH",
        help="matrix file with targets, limits and runners (default: the packaged matrix.toml)",
    )
    group.addoption(
        "--case-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"kill a case's child process after this long and report TIMEOUT (default: the "
        f"case's `timeout`, else {DEFAULT_TIMEOUT:g})",
    )
    group.addoption(
        "--perf-rounds",
        type=int,
        default=None,
        metavar="N",
        help="time each perf item over N alternating rounds of subject and baseline, overriding the "
        "manifest's `rounds` (default 10); 1 turns the noise model off: one timing each, no UNSTABLE",
    )
    group.addoption(
        "--kregress-json",
        type=Path,
        default=None,
        metavar="PATH",
        help="write every item's outcome, measured values, limits and toolchain versions here",
    )
    group.addoption(
        "--kregress-md",
        type=Path,
        default=None,
        metavar="PATH",
        help="write a markdown summary here (also appended to $GITHUB_STEP_SUMMARY when set)",
    )
    group.addoption(
        "--history",
        nargs="?",
        const="default",
        default=None,
        metavar="PATH",
        help="also store this run in a SQLite history (default path: the user cache dir, "
        "~/.cache/kregress/history.sqlite); read it with `kregress report`",
    )
    group.addoption(
        "--devices",
        type=int,
        default=None,
        metavar="N",
        help="devices to spread xdist workers over (default: probed, or the visible-devices variable)",
    )
    group.addoption(
        "--compile-first",
        default=None,
        metavar="TARGET",
        help="run no device check: compile the Triton launches each numerics check of a device target "
        "would make for TARGET (a compile target of the matrix, the device's architecture, e.g. "
        "cuda:sm_90) on the CPU and record their code; the items SKIP saying so. A bisect does this "
        "before it runs a point on the device, to reuse the verdict of a point with the same code",
    )
    group.addoption(
        "--workers-per-device",
        type=int,
        default=None,
        metavar="N",
        help="with -n auto on a GPU backend, N xdist workers per device (default: the cores per "
        "device, at most 16); a perf job still has its device alone while it is timed",
    )
    group.addoption(
        "--toolchain",
        default=None,
        metavar="SPEC",
        help="judge under another compiler: requirements such as 'triton==3.2.0' or "
        "'tilelang==0.1.6.post2', or a path to a built wheel or checkout. Built once into a cached "
        "environment (see `kregress envs`), then reused.",
    )
    group.addoption(
        "--trace-passes",
        action="store_true",
        help="for ir expectations on Triton's ttir, ttgir and llir: compile once more with "
        "MLIR_ENABLE_DUMP=1 and report the count after every MLIR pass, and the pass after which it "
        "crossed the bound (stored with the measured values)",
    )
    group.addoption(
        "--trace-passes-on-fail",
        action="store_true",
        help="like --trace-passes, but only for an item that FAILs: compiled once more with the dumps, "
        "so a run pays for the trace only where it is read (a case asks the same with "
        'trace_passes = "on-fail" on its expectation)',
    )
    group.addoption(
        "--shard",
        default=None,
        metavar="I/N",
        help="judge only the I-th of N parts of the corpus (1-based), split by case name, the same "
        "split on every machine: N runners each given one shard judge the whole corpus once",
    )
    group.addoption(
        "--no-fork-server",
        action="store_true",
        help="start a fresh interpreter for every job instead of forking one that has the compilers "
        "imported already (slower; for debugging the harness)",
    )
    group.addoption(
        "--keep-jobs",
        action="store_true",
        help="keep each job's folder (job.json, child.log, IR files) after the run",
    )


def selected_targets(matrix: Matrix, backend: str, requested: list[str]) -> list[Target]:
    if not requested:
        return matrix.targets_for(backend)  # type: ignore[arg-type]
    chosen = []
    for name in requested:
        if name not in matrix.targets:
            valid = ", ".join(sorted(matrix.targets))
            raise pytest.UsageError(f"--target {name!r} is not in the matrix file; valid targets: {valid}")
        target = matrix.target(name)
        if target.runs_kernels and target.backend != backend:
            raise pytest.UsageError(
                f"--target {name} runs kernels on {target.backend}, but --backend is {backend}; "
                f"use --backend {target.backend} or a compile-only target"
            )
        chosen.append(target)
    return chosen


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    found = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not found or not 1 <= int(found.group(1)) <= int(found.group(2)):
        raise pytest.UsageError(f"--shard {text!r}: give I/N with 1 <= I <= N, e.g. --shard 2/4")
    return int(found.group(1)), int(found.group(2))


def shard_of(case_id: str, count: int) -> int:
    """The 1-based shard a case belongs to: by a hash of its name, so a case added or removed moves
    no other case, and every machine splits alike."""
    return int(hashlib.sha256(case_id.encode()).hexdigest()[:8], 16) % count + 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if device_variable(config.getoption("backend")):
        known = durations_for_order(config)
        items.sort(key=lambda item: handing_order(item, known))  # stable: collection order for ties
    shard = parse_shard(config.getoption("shard"))
    if shard is None:
        return
    index, count = shard
    kept = [i for i in items if not isinstance(i, CaseItem) or shard_of(i.case.id, count) == index]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept


def compile_first_target(matrix: Matrix, name: str | None) -> Target | None:
    if name is None:
        return None
    try:
        return matrix.compile_target(name)
    except ValueError as exc:
        raise pytest.UsageError(f"--compile-first {exc}") from None


def handing_order(item: pytest.Item, known: dict[str, float]) -> tuple[int, float]:
    """On a GPU backend the order jobs are handed out in. Perf jobs first, all at once: each waits
    for the device to be its own while it times, and a device job holding the device shared (a 20 s
    torch.compile check) keeps every waiting perf job, and through the turnstile every other device
    job, idle. Then the jobs that need no device (compiles for sm_80/sm_90), which keep the cores
    busy while the perf jobs prepare and time; the other device jobs last, when no perf job waits.
    Within each group, longest first as this machine last ran them (kregress.job_durations), and
    items never run yet after those, in collection order."""
    if not isinstance(item, CaseItem):
        return 3, 0.0
    if item.target.kind != "device":
        return 1, -known.get(item.nodeid, 0.0)
    return (0 if item.expectation.kind == "perf" else 2), -known.get(item.nodeid, 0.0)


def durations_for_order(config: pytest.Config) -> dict[str, float]:
    """The controller's copy of this machine's last durations (each worker must order its items
    alike, or xdist refuses the run: read once, sent to the workers)."""
    if hasattr(config, "workerinput"):
        return json.loads(config.workerinput.get("kregress_durations", "{}"))
    return last_durations(config.getoption("backend"))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    if device_variable(node.config.getoption("backend")):
        node.workerinput["kregress_durations"] = json.dumps(durations_for_order(node.config))


def pytest_configure(config: pytest.Config) -> None:
    try:
        matrix = load_matrix(config.getoption("matrix"))
    except SchemaError as exc:
        raise pytest.UsageError(str(exc)) from None
    parse_shard(config.getoption("shard"))  # a bad --shard is a usage error before anything runs
    rounds = config.getoption("perf_rounds")
    if rounds is not None and rounds < 1:
        raise pytest.UsageError(f"--perf-rounds must be at least 1 (got {rounds})")
    for kind in KINDS:
        config.addinivalue_line("markers", f"{kind}: kregress items judging a {kind} expectation")
    backend = config.getoption("backend")
    targets = selected_targets(matrix, backend, config.getoption("target"))
    config.option.compile_first_target = compile_first_target(matrix, config.getoption("compile_first"))
    workdir = Path(tempfile.mkdtemp(prefix="kregress-jobs-"))
    # xdist's own word, not PYTEST_XDIST_WORKER: that variable leaks into any pytest started
    # inside a worker (a bisect step, a test of kregress), which would then pin itself.
    worker = config.workerinput["workerid"] if hasattr(config, "workerinput") else None
    if device_variable(backend) and worker:
        count = config.getoption("devices") or probe_count(backend)
        os.environ.update(pinned_environment(backend, worker, os.environ, count))
    device = describe(backend, os.environ) if device_variable(backend) else {}
    if device:  # the jobs need not ask their runtime whether there is one (kregress.worker)
        os.environ[DEVICE_LISTED] = device["name"]
    config.stash[STATE] = RunState(matrix, targets, workdir, explicit_interpreter(config), device)
    if device_variable(backend) and getattr(config.option, "maxschedchunk", 0) is None:
        # after the first deal (DealtScheduling), one item at a time keeps the order of handing_order
        config.option.maxschedchunk = 1
    if not hasattr(config, "workerinput"):  # the controller (or a serial run) writes the reports
        config.pluginmanager.register(ResultsCollector(config), "kregress-results")


def progress(message: str) -> None:
    print(f"kregress: {message}", file=sys.stderr, flush=True)


def explicit_interpreter(config: pytest.Config) -> Interpreter | None:
    """The --toolchain environment, built before any item runs; a failure stops the run (exit 3)."""
    spec = config.getoption("toolchain")
    if not spec:
        return None
    try:
        Toolchain.parse(spec)  # a head (triton@main) is named as such, before the index is asked
        if len(spec.split()) == 1:
            pinned = newest_release(spec)
            if pinned != spec:
                progress(f"--toolchain {spec}: its newest release is {pinned}")
            spec = pinned
        return toolchain_interpreter(spec, progress)
    except (ToolchainError, CandidateError, OSError) as exc:
        pytest.exit(f"kregress: {exc}", returncode=pytest.ExitCode.INTERNAL_ERROR)


def interpreter_for(config: pytest.Config, target: Target) -> Interpreter | str:
    """What runs this target's jobs: --toolchain if given, else the toolchain the matrix names for
    the target (built on first use), else kregress's own environment. A str is why it cannot."""
    explicit = state(config).explicit
    if explicit is not None:
        return explicit
    if not target.toolchain:
        return Interpreter()
    known = state(config).matrix_toolchains
    if target.toolchain not in known:
        try:
            known[target.toolchain] = toolchain_interpreter(target.toolchain, progress)
        except ToolchainError as exc:
            known[target.toolchain] = (
                f"{target.name} is built with its matrix toolchain, which could not be installed: {exc}"
            )
    return known[target.toolchain]


def native_variables(config: pytest.Config) -> dict[str, str]:
    """Intel's native compiler for XPU compile targets, provisioned once per process."""
    run = state(config)
    if run.native_xpu is None:
        run.native_xpu = xpu_native.child_variables(log=progress)
    return run.native_xpu


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workeroutput"):  # an xdist worker: the controller reports
        session.config.workeroutput["kregress_not_applicable"] = json.dumps(
            state(session.config).not_applicable
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    close_fork_servers()
    if STATE in config.stash and not config.getoption("keep_jobs"):
        shutil.rmtree(state(config).workdir, ignore_errors=True)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name == "case.toml":
        return CaseFile.from_parent(parent, path=file_path)
    return None


def pytest_report_header(config: pytest.Config) -> list[str]:
    names = ", ".join(t.name for t in state(config).targets)
    toolchain = config.getoption("toolchain")
    under = f", toolchain {toolchain} ({state(config).explicit.python})" if toolchain else ""
    lines = [f"kregress: backend {config.getoption('backend')}, targets {names}{under}"]
    for found in run_devices(config):
        lines.append(f"kregress: device {found['index']}: {found['name']}, driver {found['driver']}")
    return lines


def run_devices(config: pytest.Config) -> list[dict[str, str]]:
    """The devices this run may use, as nvidia-smi names them (empty on cpu, or where it cannot);
    asked once, for the header and the results alike."""
    run = state(config)
    if run.run_devices is None:
        run.run_devices = describe_devices(config)
    return run.run_devices


def describe_devices(config: pytest.Config) -> list[dict[str, str]]:
    backend = config.getoption("backend")
    variable = device_variable(backend)
    if not variable:
        return []
    count = config.getoption("devices") or probe_count(backend)
    found = (describe(backend, {variable: index}) for index in visible(backend, os.environ, count))
    return [device for device in found if device]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """On a GPU backend, xdist's load scheduling dealt one item at a time (DealtScheduling)."""
    if not device_variable(config.getoption("backend")) or config.getoption("dist") != "load":
        return None
    from kregress.dealt_scheduling import DealtScheduling

    return DealtScheduling(config, log)


# tryfirst: xdist's own implementation answers one worker per core, and whichever of the two is
# registered last would otherwise be asked first (kregress on PYTHONPATH registers before xdist).
@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` on a GPU backend: several workers per visible device (each pinned to one)."""
    backend = config.getoption("backend")
    count = config.getoption("devices") or probe_count(backend)
    return auto_workers(backend, os.environ, count, config.getoption("workers_per_device"))


class ManifestError(KregressError):
    """A case.toml that cannot be used: shown as a one-paragraph collection error."""


class CaseFile(pytest.File):
    def collect(self) -> list[pytest.Item]:
        matrix = state(self.config).matrix
        try:
            case = load_case(self.path, set(matrix.targets))
        except SchemaError as exc:
            raise ManifestError(str(exc)) from None
        items, not_applicable = [], {}
        for name, expectation in case.expectations():
            for target in state(self.config).targets:
                planned = plan(case, expectation, target)
                if planned.not_applicable:
                    not_applicable[f"{case.id}::{name}[{target.name}]"] = planned.not_applicable
                if not planned.collect:
                    continue
                item = CaseItem.from_parent(
                    self,
                    name=f"{name}[{target.name}]",
                    case=case,
                    expectation=expectation,
                    expectation_name=name,
                    target=target,
                )
                if planned.skip:
                    item.planned_skip = planned.skip
                    item.add_marker(pytest.mark.skip(reason=planned.skip))
                items.append(item)
        state(self.config).not_applicable.update(not_applicable)
        return items

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ManifestError):
            return f"invalid case manifest: {excinfo.value}"
        return super().repr_failure(excinfo)


def plan(case: Case, expectation: Expectation, target: Target) -> Plan:
    """Pure: the expectation's kind decides first, then the case's targets, then the framework."""
    framework = case.manifest.framework
    own = expectation.plan(target, framework)
    if own is not None:
        return own
    if not expectation.applies_to(target.name):
        return Plan(False, not_applicable="the case limits the expectation to other targets")
    declared = FRAMEWORKS[framework]
    why_not = declared.not_applicable(target.kind)
    if why_not:
        return Plan(False, not_applicable=why_not)
    return Plan(True, declared.cannot_build(target.kind, target.backend, target.name))


class ItemError(KregressError):
    """The harness or the case broke (not the compiler under test): pytest reports an ERROR."""


class ItemFailure(KregressError):
    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.message)
        self.verdict = verdict


class CaseItem(pytest.Item):
    def __init__(
        self, *, case: Case, expectation: Expectation, expectation_name: str, target: Target, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.expectation = expectation
        self.expectation_name = expectation_name
        self.target = target
        self.verdict: Verdict | None = None
        self.xpass_reason: str | None = None
        self.planned_skip: str | None = None  # a SKIP decided at collection, before any job
        self.outcome_record: dict[str, Any] | None = None  # the one record of this item's outcome
        self.device_wait_s: float | None = None  # how long its job waited for the device's lock
        self.job_started_at: float | None = None  # when its job was asked for (epoch s)
        self.add_marker(getattr(pytest.mark, expectation.kind))

    def record(self, **extra: Any) -> dict[str, Any]:
        """The item's record (kregress.record.ItemRecord) as JSON, the one object the results file,
        the summary, the history and the page read; a value JSON lacks (a numpy scalar) as text."""
        upstream = self.case.manifest.upstream
        fields = {
            "case": self.case.id,
            "expectation": self.expectation_name,
            "kind": self.expectation.kind,
            "target": self.target.name,
            "framework": self.case.manifest.framework,
            "upstream": upstream.issue,
            "fix": upstream.fix,
            "reproduce": "+".join(self.case.manifest.reproduce.levels)
            if self.case.manifest.reproduce
            else None,
            **extra,
        }
        return ItemRecord.model_validate(json.loads(json.dumps(fields, default=str))).as_json()

    def timeout(self) -> float:
        given = self.config.getoption("case_timeout")
        return given if given is not None else float(self.case.manifest.timeout or DEFAULT_TIMEOUT)

    def job_timeout(self) -> tuple[float, str]:
        """The case's timeout, or for a device job the watchdog's bound when that comes first."""
        known = durations_for_order(self.config) if self.target.kind == "device" else {}
        return watchdog_timeout(self.timeout(), known, self.nodeid)

    def setup(self) -> None:
        interpreter = interpreter_for(self.config, self.target)
        if isinstance(interpreter, str):
            self.verdict = Verdict.skip(interpreter)
            self.outcome_record = self.record(outcome=Outcome.SKIP.value, message=interpreter)
            return
        interpreter = with_native_compiler(self.target, interpreter, lambda: native_variables(self.config))
        judged = judge_item(
            self.case,
            self.expectation_name,
            self.expectation,
            self.target,
            lambda job: self.outcome_of(job, interpreter),
            self.config.getoption,
        )
        verdict, outcome = judged.verdict, judged.outcome
        verdict = self.beside_earlier_nights(verdict)
        self.verdict = verdict
        self.outcome_record = self.record(
            outcome=verdict.outcome.value,
            failure_kind=verdict.failure_kind,
            message=verdict.message,
            measured=verdict.measured,
            limit=verdict.limit,
            toolchain={**outcome.toolchain, **{f"{p} commit": c for p, c in interpreter.commits}},
            toolchain_spec=interpreter.toolchain,
            job_seconds=round(outcome.seconds, 3),
            device_wait_s=self.device_wait_s,
            job_started_at=self.job_started_at,
            known_bad=judged.known_bad.link if judged.known_bad else None,
            device=state(self.config).device if self.target.kind == "device" else None,
            code={c.label: c.code for c in outcome.configs if c.code} or None,
        )
        self.user_properties.append(("kregress", json.dumps(self.outcome_record)))  # for JUnit XML
        if verdict.outcome == Outcome.ERROR:
            raise ItemError(verdict)

    def beside_earlier_nights(self, verdict: Verdict) -> Verdict:
        """A perf verdict on a device, with --history, also against the item's earlier nights on
        this GPU model (kregress.night_window)."""
        option = self.config.getoption("history")
        model = (state(self.config).device or {}).get("name")
        if self.expectation.kind != "perf" or self.target.kind != "device" or not option or not model:
            return verdict
        from kregress.history import default_path
        from kregress.night_window import earlier_nights, judged_against

        history = default_path() if option == "default" else Path(option)
        window = earlier_nights(history, self.case.id, self.expectation_name, self.target.name, model)
        return judged_against(verdict, window, self.expectation.min_ratio)

    def outcome_of(self, job: Job, interpreter: Interpreter) -> JobOutcome:
        """The job's outcome, run once per session (items that share a job share its outcome); on a
        device, under its shared lock. A job that needs the device alone (timing) takes the lock
        itself, shared while it prepares and exclusive only while it times: held here as well, the
        two could never be had at once."""
        memo = state(self.config).jobs
        if job.key not in memo:
            on_device = self.target.kind == "device" and not job.exclusive
            asked = time.perf_counter()
            state(self.config).job_starts[job.key] = round(time.time(), 3)
            with (
                device_lock(self.target.backend, os.environ, exclusive=False)
                if on_device
                else (contextlib.nullcontext())
            ):
                if on_device:
                    state(self.config).device_waits[job.key] = round(time.perf_counter() - asked, 3)
                timeout, why = self.job_timeout()
                memo[job.key] = run_job(
                    job,
                    timeout,
                    state(self.config).workdir,
                    interpreter=interpreter,
                    use_fork_server=not self.config.getoption("no_fork_server"),
                    why_timeout=why,
                )
        self.device_wait_s = state(self.config).device_waits.get(job.key, self.device_wait_s)
        self.job_started_at = state(self.config).job_starts.get(job.key, self.job_started_at)
        return memo[job.key]

    def runtest(self) -> None:
        verdict = self.verdict
        assert verdict is not None
        if verdict.outcome in (Outcome.SKIP, Outcome.UNSTABLE):  # UNSTABLE: see pytest_report_teststatus
            pytest.skip(verdict.message)
        if verdict.outcome == Outcome.XFAIL:
            pytest.xfail(verdict.message)
        if verdict.outcome == Outcome.XPASS:
            self.xpass_reason = verdict.message
        if verdict.outcome == Outcome.FAIL:
            raise ItemFailure(verdict)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        value = excinfo.value
        if isinstance(value, (ItemFailure, ItemError)):
            verdict: Verdict = value.args[0] if isinstance(value, ItemError) else value.verdict
            lines = [f"{self.case.id} / {self.expectation_name} on {self.target.name}: {verdict.message}"]
            if verdict.detail:
                lines += ["", verdict.detail]
            lines += ["", f"case: {self.case.folder}", f"upstream: {self.case.manifest.upstream.issue}"]
            return "\n".join(lines)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.case.id}::{self.name}"


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    """UNSTABLE reaches pytest as a skip (it neither passes nor fails the run); show it as itself."""
    record = getattr(report, RECORD, None) or {}
    if report.when == "call" and report.skipped and record.get("outcome") == Outcome.UNSTABLE:
        return "unstable", "U", (Outcome.UNSTABLE.value, {"yellow": True})
    return None


def final_record(item: CaseItem, call: pytest.CallInfo[None]) -> dict[str, Any] | None:
    """The item's outcome record once a phase has decided it: the judge's, a SKIP planned at
    collection, or an ERROR for a harness that raised before judging."""
    if item.outcome_record is not None:
        return item.outcome_record
    if call.when == "setup" and item.planned_skip is not None:
        return item.record(outcome=Outcome.SKIP.value, message=item.planned_skip)
    if call.excinfo is not None and not isinstance(call.excinfo.value, pytest.skip.Exception):
        error = call.excinfo.value
        return item.record(outcome=Outcome.ERROR.value, message=f"{type(error).__name__}: {error}")
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report = outcome.get_result()
    # A setup error would show the plugin's own traceback: show the case's error instead.
    if (
        isinstance(item, CaseItem)
        and call.when == "setup"
        and call.excinfo is not None
        and isinstance(call.excinfo.value, ItemError)
    ):
        report.longrepr = item.repr_failure(call.excinfo)
    if isinstance(item, CaseItem) and call.when == "call" and report.passed and item.xpass_reason:
        if item.config.getini("xfail_strict"):
            report.outcome = "failed"
            report.longrepr = f"[XPASS(strict)] {item.xpass_reason}"
        else:
            report.wasxfail = item.xpass_reason
    # The record rides on the report itself: xdist serializes a report's attributes, so the
    # controller's collector reads the object the worker's judge made, never the report's text.
    if isinstance(item, CaseItem) and call.when in ("setup", "call"):
        record = final_record(item, call)
        if record is not None:
            setattr(report, RECORD, record)
