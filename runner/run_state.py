"""What one kregress pytest session knows and resolves once: the matrix and targets it judges,
where jobs write, the toolchain interpreters (--toolchain's, built before any item runs, and each
target's matrix toolchain on first use), Intel's native compiler, the devices, the durations that
order a GPU run, and what it left out. The hooks (kregress.plugin), the collection and the items
read it from the config's stash."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kregress import machine_tools
from kregress.builds import BuildFailed, HeadError, build_head
from kregress.devices import describe, device_variable, probe_count, visible
from kregress.item import toolchain_interpreter
from kregress.job_durations import ordering_durations
from kregress.jobs import Interpreter, JobOutcome
from kregress.matrix import Matrix, Target, head_of
from kregress.package_index import CandidateError, newest_release
from kregress.toolchains import Toolchain, ToolchainError, distribution_version


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
    machine_tools: dict[str, dict[str, str]] = field(default_factory=dict)  # by backend, asked once
    # case::expectation[target] -> why that pair is not collected; a worker sends its own to the controller
    not_applicable: dict[str, str] = field(default_factory=dict)
    run_devices: list[dict[str, str]] | None = None  # every device the run may use


STATE = pytest.StashKey[RunState]()


def state(config: pytest.Config) -> RunState:
    return config.stash[STATE]


def progress(message: str) -> None:
    print(f"kregress: {message}", file=sys.stderr, flush=True)


# The toolchain a head (--toolchain triton@main) was built as, sent by the controller: the workers
# judge the build the controller made, never a later commit of the same ref.
BUILT_TOOLCHAIN = "kregress_toolchain"


def explicit_interpreter(config: pytest.Config) -> Interpreter | None:
    """The --toolchain environment, built before any item runs; a failure stops the run (exit 3).
    A head (triton@main) is pinned to its commit and built through the build cache first."""
    spec = config.getoption("toolchain")
    if not spec:
        return None
    try:
        if hasattr(config, "workerinput") and BUILT_TOOLCHAIN in config.workerinput:
            return toolchain_interpreter(config.workerinput[BUILT_TOOLCHAIN], progress)
        if head_of(spec.strip()):
            built = build_head(spec.strip(), config.getoption("matrix"), log=progress)
            progress(f"--toolchain {spec}: {built.commit} ({built.made}), judged as {built.spec}")
            return toolchain_interpreter(built.spec, progress)
        Toolchain.parse(spec)  # refuses what is neither a requirement, a path nor a head alone
        if len(spec.split()) == 1:
            pinned = newest_release(spec)
            if pinned != spec:
                progress(f"--toolchain {spec}: its newest release is {pinned}")
            spec = pinned
        return toolchain_interpreter(spec, progress)
    except (ToolchainError, CandidateError, OSError, BuildFailed) as exc:
        pytest.exit(f"kregress: {exc}", returncode=pytest.ExitCode.INTERNAL_ERROR)
    except HeadError as exc:
        raise pytest.UsageError(f"--toolchain {spec}: {exc}") from None


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


def judged_release(config: pytest.Config, target: Target, package: str) -> str | None:
    """The release of `package` that judges `target` in this run, known without building anything:
    --toolchain's pin, else the pin of the target's matrix toolchain, else kregress's own install."""
    explicit = state(config).explicit
    spec = explicit.toolchain if explicit is not None else target.toolchain
    if spec:
        return Toolchain.parse(spec).pinned().get(package)
    return distribution_version(package)


def machine_tool_variables(config: pytest.Config, backend: str) -> dict[str, str]:
    """The tools `backend`'s compile targets take from the machine (kregress.machine_tools),
    provisioned once per process."""
    run = state(config)
    if backend not in run.machine_tools:
        run.machine_tools[backend] = machine_tools.child_variables(backend, log=progress)
    return run.machine_tools[backend]


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


def durations_for_order(config: pytest.Config) -> dict[str, float]:
    """The controller's copy of the durations that order the run, this machine's last over the
    shipped ones (each worker must order its items alike, or xdist refuses the run: read once, sent
    to the workers)."""
    if hasattr(config, "workerinput"):
        return json.loads(config.workerinput.get("kregress_durations", "{}"))
    return ordering_durations(config.getoption("backend"))
