"""The pytest plugin's hooks: collect corpus/<case>/case.toml as items, one per (case, expectation,
target).

Measuring happens in `setup` (a child process per job), judging in `call`; outcomes map onto
pytest's own (pass, fail, xfail, xpass, skip, error), so -k, -x, --lf, --junitxml and -n auto
work as usual. The hooks only: the run's state is kregress.run_state, the collection
kregress.collection, the item kregress.case_item, the order of a GPU run kregress.ordering, the
results kregress.report.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from kregress.backends import BACKENDS
from kregress.case_item import CaseItem, ItemError, final_record
from kregress.collection import CaseFile, compile_first_target, parse_shard, selected_targets, shard_of
from kregress.devices import (
    DEVICE_LISTED,
    auto_workers,
    describe,
    device_compile_arch,
    device_variable,
    pinned_environment,
    probe_count,
)
from kregress.jobs import DEFAULT_TIMEOUT, close_fork_servers
from kregress.judge import Outcome
from kregress.kinds import KINDS
from kregress.matrix import SchemaError, load_matrix
from kregress.ordering import handing_order, longest_first
from kregress.record import ItemRecord
from kregress.report import RECORD, ResultsCollector
from kregress.run_state import (
    BUILT_TOOLCHAIN,
    STATE,
    RunState,
    durations_for_order,
    explicit_interpreter,
    run_devices,
    state,
)


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
        "'tilelang==0.1.6.post2', a path to a built wheel or checkout, or a head NAME@REF "
        "('triton@main', '<package>@<sha>': pinned to its commit, built through the build cache from "
        "the matrix's [repositories.NAME]). Built once into a cached environment (see `kregress envs`), "
        "then reused.",
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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    known = durations_for_order(config)
    if device_variable(config.getoption("backend")):
        items.sort(key=lambda item: handing_order(item, known))  # stable: collection order for ties
    else:
        items[:] = longest_first(items, known)
    shard = parse_shard(config.getoption("shard"))
    if shard is None:
        return
    index, count = shard
    kept = [i for i in items if not isinstance(i, CaseItem) or shard_of(i.case.id, count) == index]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    node.workerinput["kregress_durations"] = json.dumps(durations_for_order(node.config))
    explicit = state(node.config).explicit
    if explicit is not None and explicit.toolchain:  # a head is judged as the controller built it
        node.workerinput[BUILT_TOOLCHAIN] = explicit.toolchain


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
        arch = device_compile_arch(backend, os.environ)
        targets = [matrix.as_device(target, arch) for target in targets]
    config.stash[STATE] = RunState(matrix, targets, workdir, explicit_interpreter(config), device)
    if getattr(config.option, "maxschedchunk", 0) is None:
        # after the first deal (DealtScheduling), one item at a time keeps the order of handing_order
        # (GPU) or longest_first (cpu): xdist's chunks would hand one worker every long item at once
        config.option.maxschedchunk = 1
    if not hasattr(config, "workerinput"):  # the controller (or a serial run) writes the reports
        config.pluginmanager.register(ResultsCollector(config), "kregress-results")


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
    # a device target as the GPU it runs on: its arch names the compile target whose limits it takes
    names = ", ".join(
        t.name + (f" ({t.arch})" if t.runs_kernels and t.arch else "") for t in state(config).targets
    )
    toolchain = config.getoption("toolchain")
    under = f", toolchain {toolchain} ({state(config).explicit.python})" if toolchain else ""
    lines = [f"kregress: backend {config.getoption('backend')}, targets {names}{under}"]
    for found in run_devices(config):
        lines.append(f"kregress: device {found['index']}: {found['name']}, driver {found['driver']}")
    return lines


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's load scheduling dealt one item at a time (DealtScheduling): the longest items, first
    in the order, go one to each worker."""
    if config.getoption("dist") != "load":
        return None
    from kregress.dealt_scheduling import DealtScheduling

    return DealtScheduling(config, log, together=not device_variable(config.getoption("backend")))


# tryfirst: xdist's own implementation answers one worker per core, and whichever of the two is
# registered last would otherwise be asked first (kregress on PYTHONPATH registers before xdist).
@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` on a GPU backend: several workers per visible device (each pinned to one)."""
    backend = config.getoption("backend")
    count = config.getoption("devices") or probe_count(backend)
    return auto_workers(backend, os.environ, count, config.getoption("workers_per_device"))


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    """UNSTABLE reaches pytest as a skip (it neither passes nor fails the run); show it as itself."""
    record = getattr(report, RECORD, None)
    if (
        report.when == "call"
        and report.skipped
        and record
        and ItemRecord.model_validate(record).outcome == Outcome.UNSTABLE
    ):
        return "unstable", "U", (Outcome.UNSTABLE.value, {"yellow": True})
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
