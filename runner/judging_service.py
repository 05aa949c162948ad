"""The judging service: the one public interface through which bisect, verify, import and reduce
judge a case. A case's items are run under a candidate's toolchain with the real runner (`pytest
... --toolchain SPEC --kregress-json`), or one item of a copy in process (reduce); outcomes become
good/bad/skip under the one verdict rule (`item_verdict`, for the outcome `RegressOn` calls bad);
observations are remembered per judgement key (`judgement_key`: the case's files, the target, the
toolchain, what its environment holds, the machine's tools and the code that judges)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock

from kregress import machine_tools
from kregress.errors import KregressError
from kregress.judge import Outcome
from kregress.judging_code import judging_code_digest
from kregress.matrix import load_matrix
from kregress.paths import cache_root, write_atomically
from kregress.record import ItemRecord
from kregress.results import ResultsError, load_results
from kregress.toolchains import (
    HANDED_ENVIRONMENT,
    Environment,
    EnvironmentCache,
    Toolchain,
    ToolchainError,
    environment_identity,
)

if TYPE_CHECKING:
    from kregress.item import ItemJudgement
    from kregress.jobs import Interpreter
    from kregress.matrix import Target

RUN_TIMEOUT = 3600


class PointVerdict(str, Enum):
    GOOD = "good"
    BAD = "bad"
    SKIP = "skip"  # could not be judged (failed to build): like `git bisect run` exit 125


class InfrastructureError(KregressError):
    """The runner itself could not judge (not the compiler under test): stop, exit 3."""


@dataclass
class Observation:
    """What the runner reported for the case's items under one candidate: each item's record, by
    its name in the case (`expectation[target]`), as the plugin wrote and `load_results` read it."""

    records: dict[str, ItemRecord] = field(default_factory=dict)
    # every distribution the toolchain's environment held when it judged (None: not known, as in
    # an older memo, or judged in kregress's own environment, whose versions are in the key)
    installed: dict[str, str] | None = None

    @classmethod
    def from_parts(
        cls,
        outcomes: dict[str, str],
        failure_kinds: dict[str, str | None] | None = None,
        messages: dict[str, str] | None = None,
        measured: dict[str, Any] | None = None,
        code: dict[str, dict[str, dict[str, str]]] | None = None,
        versions: dict[str, str] | None = None,
        diagnostics: dict[str, str] | None = None,
        case: str = "",
        installed: dict[str, str] | None = None,
    ) -> Observation:
        """The records of items known only by name and a few fields (a ledger entry keeps these)."""
        records = {}
        for name, outcome in outcomes.items():
            expectation, _, target = name.removesuffix("]").rpartition("[")
            fields: dict[str, Any] = {"outcome": outcome, "toolchain": versions or None}
            given_fields = (("failure_kind", failure_kinds), ("message", messages), ("measured", measured),
                            ("code", code), ("diagnostics", diagnostics))  # fmt: skip
            for field_name, values in given_fields:
                if values and values.get(name) is not None:
                    fields[field_name] = values[name]
            given = {k: v for k, v in fields.items() if v is not None}
            records[name] = ItemRecord(case=case, expectation=expectation, target=target, **given)
        return cls(records, installed)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Observation:
        records = {name: ItemRecord.model_validate(r) for name, r in data["records"].items()}
        return cls(records, data.get("installed"))

    def as_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"records": {name: r.as_json() for name, r in self.records.items()}}
        if self.installed is not None:
            found["installed"] = self.installed
        return found

    def judged_with(self, installed: dict[str, str] | None) -> bool:
        """Whether this judgement was made with what the environment holds now (`installed`, None
        where it is not built here: nothing to hold it to). A release's dependency upgraded under
        the same requirement, or an observation that never said, is judged again."""
        return made_with(self.installed, installed)

    def installed_change(self, installed: dict[str, str] | None) -> str:
        """What differs between then and now, as a log line can say it."""
        before, now = self.installed or {}, installed or {}
        if self.installed is None:
            return "the judgement does not say what its environment held"
        names = sorted(name for name in set(before) | set(now) if before.get(name) != now.get(name))
        said = (f"{name} {before.get(name, 'absent')} -> {now.get(name, 'absent')}" for name in names)
        return ", ".join(said)

    def outcome(self, item: str) -> str | None:
        """The item's outcome by name (PASS, FAIL, ...); None where it was not judged."""
        record = self.records.get(item)
        return record.outcome.value if record else None

    @property
    def versions(self) -> dict[str, str]:
        """What the child reported it judged with, over every item."""
        found: dict[str, str] = {}
        for record in self.records.values():
            found.update(record.toolchain or {})
        return found

    def launch_code(self) -> dict[str, Any] | None:
        """Per item, the code of every launch its check makes, from a compile-first run; None when
        some item's code is unknown (or it ran no check), so nothing can be inherited from it."""
        found = {item: (r.measured or {}).get("launch_code") for item, r in self.records.items()}
        return found if found and all(found.values()) else None

    def summary(self) -> str:
        parts = []
        for item, record in sorted(self.records.items()):
            outcome, kind = record.outcome.value, record.failure_kind
            parts.append(f"{item}: {outcome}{f' ({kind})' if kind and kind not in outcome else ''}")
        return "; ".join(parts) or "no items"


class RegressOn(str, Enum):
    """Which outcome of an item a search calls bad (`--regress`): the one place it is decided.

    The rule, for every kind of search and for verify and import alike: FAIL and XFAIL are a
    failure, PASS and XPASS a pass; SKIP, UNSTABLE and ERROR cannot tell, for ERROR is kregress's or
    the repro's own code failing (a repro that does not import, a pasted draft cut short), never the
    compiler's, except where ERROR is itself what is searched for (`error`)."""

    FAIL = "fail"  # a regression: good passes, bad fails
    PASS = "pass"  # a fix: bad passes (looking for where the case first holds)
    CRASH = "crash"  # bad crashes or hangs the compiler; any other judged outcome is good
    ERROR = "error"  # bad is an ERROR (kregress's own harness), to bisect a harness break

    def __str__(self) -> str:  # as the command line spells it, in reports and logs
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


REGRESSIONS = tuple(r.value for r in RegressOn)


def item_verdict(outcome: str, failure_kind: str | None, regress: str) -> PointVerdict:
    """Which outcomes count as bad for `regress` (a RegressOn), which as good, and which cannot tell."""
    failed = outcome in (Outcome.FAIL, Outcome.XFAIL)
    passed = outcome in (Outcome.PASS, Outcome.XPASS)
    if regress == RegressOn.FAIL:
        return PointVerdict.BAD if failed else PointVerdict.GOOD if passed else PointVerdict.SKIP
    if regress == RegressOn.PASS:
        return PointVerdict.BAD if passed else PointVerdict.GOOD if failed else PointVerdict.SKIP
    if regress == RegressOn.CRASH:
        crashed = failed and failure_kind in ("CRASH", "TIMEOUT")
        return PointVerdict.BAD if crashed else PointVerdict.GOOD if failed or passed else PointVerdict.SKIP
    if regress == RegressOn.ERROR:
        errored = outcome == Outcome.ERROR
        return PointVerdict.BAD if errored else PointVerdict.GOOD if failed or passed else PointVerdict.SKIP
    raise ValueError(f"--regress must be one of {', '.join(REGRESSIONS)}")


def holds(outcome: str) -> bool:
    """Whether an item held (its expectation was met) under the one rule: what a flake rate counts
    as a vote for good code (kregress.bisect.noise)."""
    return item_verdict(outcome, None, RegressOn.FAIL) == PointVerdict.GOOD


def record_verdict(record: ItemRecord, regress: str) -> PointVerdict:
    return item_verdict(record.outcome, record.failure_kind, regress)


def items_verdict(records: dict[str, ItemRecord], regress: str) -> dict[str, PointVerdict]:
    """Each item's verdict under the one rule (verify asks every item of the bug to be bad)."""
    return {item: record_verdict(record, regress) for item, record in records.items()}


def observation_verdict(observation: Observation, regress: str, whole_case: bool = False) -> PointVerdict:
    """Bad if any item is bad; good if some item is good and none bad; else a skip.

    A fix search over a whole case (`--regress pass` with no `-e`) asks when the case first holds:
    a point is fixed ("bad" for the search) only when every item that ran PASSes, so a release that
    merely broke another expectation of the case (say, stopped vectorizing every atomic, where the
    case's positive control then FAILs) is never named as the fix."""
    if regress == RegressOn.PASS and whole_case:  # under the rule of a regression, item by item
        ran = {n: r for n, r in observation.records.items() if r.outcome != Outcome.SKIP}
        verdicts = list(items_verdict(ran, RegressOn.FAIL).values())
        if PointVerdict.BAD in verdicts:
            return PointVerdict.GOOD  # still broken somewhere
        # fixed only where every item that ran held (an ERROR or UNSTABLE cannot tell)
        fixed = verdicts and all(v == PointVerdict.GOOD for v in verdicts)
        return PointVerdict.BAD if fixed else PointVerdict.SKIP
    verdicts = set(items_verdict(observation.records, regress).values())
    if PointVerdict.BAD in verdicts:
        return PointVerdict.BAD
    return PointVerdict.GOOD if PointVerdict.GOOD in verdicts else PointVerdict.SKIP


def majority(verdicts: list[PointVerdict]) -> PointVerdict:
    """The verdict most reruns agree on; a tie between good and bad cannot decide: skip."""
    counts = Counter(verdicts)
    top = counts.most_common()
    if len(top) > 1 and top[0][1] == top[1][1]:
        return PointVerdict.SKIP
    return top[0][0]


@dataclass
class CaseRun:
    """How to judge the case: which items, on which target, from which corpus and matrix."""

    corpus: Path
    case: str
    expectation: str | None
    target: str | None
    matrix: Path | None = None
    timeout: float | None = None
    trace_passes: bool = False  # never memoized: only asked at the culprit, for the report
    compile_first: str | None = None  # a compile target: the launches' code only, nothing run

    def selection(self) -> list[str]:
        manifest = self.corpus / self.case / "case.toml"
        if self.expectation and self.target:
            return [f"{manifest}::{self.expectation}[{self.target}]"]
        chosen = [str(manifest)]
        if self.expectation:
            chosen += ["-k", self.expectation]
        return chosen

    def fingerprint(self) -> str:
        """The case's files: an edited manifest or repro is judged afresh, never read from memo."""
        digest = hashlib.sha256()
        folder = self.corpus / self.case
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
        return digest.hexdigest()[:16]

    def target_entry(self) -> dict[str, Any]:
        """The matrix's entry for the target (its limits and toolchain); the whole matrix's targets
        when the run judges every target of the cpu backend."""
        matrix = load_matrix(self.matrix)
        if self.target:  # one the matrix lacks is the run's usage error, said when it runs
            known = matrix.named.get(self.target)
            return known.model_dump(mode="json") if known else {"unknown": self.target}
        return {name: target.model_dump(mode="json") for name, target in matrix.targets.items()}

    def command(self, toolchain: str | None, report: Path | None = None) -> list[str]:
        command = [sys.executable, "-m", "pytest", *self.selection(), "-p", "no:cacheprovider", "-q"]
        command += ["--target", self.target] if self.target else ["--backend", "cpu"]
        if toolchain:
            command += ["--toolchain", toolchain]
        if self.matrix:
            command += ["--matrix", str(self.matrix)]
        if self.timeout:
            command += ["--case-timeout", str(self.timeout)]
        if report:
            command += ["--kregress-json", str(report)]
        if self.trace_passes:
            command.append("--trace-passes")
        if self.compile_first:
            command += ["--compile-first", self.compile_first]
        return command

    def observe(self, toolchain: str | None, environment: Environment | None = None) -> Observation:
        """Judged by a pytest of its own; `environment`, the toolchain's as the caller resolved it,
        is handed to it rather than resolved there again."""
        handed = {**os.environ, HANDED_ENVIRONMENT: str(environment.root)} if environment else None
        with tempfile.TemporaryDirectory(prefix="kregress-bisect-") as folder:
            report = Path(folder) / "results.json"
            done = subprocess.run(
                self.command(toolchain, report),
                env=handed,
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT,
                check=False,
            )
            if done.returncode == 3 or not report.exists():
                raise InfrastructureError(
                    f"the runner could not judge {self.case} under {toolchain or 'the current toolchain'} "
                    f"(pytest exit {done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}"
                )
            try:  # each item validated as the record the plugin wrote, then read by attribute
                records = load_results(report).items
            except ResultsError as exc:
                raise InfrastructureError(f"the runner wrote results kregress cannot read: {exc}") from None
        if not records:
            raise InfrastructureError(
                f"no item of {self.case} matched (expectation {self.expectation!r}, "
                f"target {self.target!r}):\n"
                f"{(done.stdout + done.stderr)[-2000:]}"
            )
        return Observation({f"{record.expectation}[{record.target}]": record for record in records})


@functools.cache
def device_identity(backend: str) -> str:
    """The GPU model and driver a device judgement runs on, as the vendor's tool names them (the
    first device this process may use); "unknown" where no tool answers. Another GPU, or another
    driver, is judged again, never read back as the old verdict."""
    from kregress.devices import describe

    found = describe(backend, os.environ)
    return f"{found['name']}, driver {found['driver']}" if found else "unknown"


def installed_now(
    run: CaseRun, toolchain: str | None, environment: Environment | None = None
) -> dict[str, str] | None:
    """What the environment that judges `run` under `toolchain` holds now (`environment` where the
    caller resolved it; the matrix's toolchain for the target when None), or None where it is not
    built here or is kregress's own."""
    if environment is not None:
        return environment.installed
    spec = toolchain if toolchain is not None else run.target_entry().get("toolchain")
    if not spec:
        return None
    try:
        environment = EnvironmentCache().find(Toolchain.parse(str(spec)))
    except ToolchainError:
        return None
    return environment.installed if environment else None


def judgement_key(run: CaseRun, toolchain: str | None) -> str:
    """Everything a judgement of `run` under `toolchain` (None: the matrix's toolchains in kregress's
    own environment) depends on: the case's files, the selection, the target's entry in the matrix,
    what the environment holds (kregress.toolchains.environment_identity), and the kregress code that
    judges the case (kregress.judging_code). A remembered verdict is reused only when all match, so
    a change to any of them is judged again without being told to."""
    target = run.target_entry()
    matrix_toolchain = target.get("toolchain") if toolchain is None else None
    key = {
        "case": run.case,
        "expectation": run.expectation,
        "target": run.target,
        "target_entry": target,
        "toolchain": toolchain or "matrix",
        "environment": environment_identity(toolchain),
        "matrix_environment": environment_identity(matrix_toolchain) if matrix_toolchain else None,
        "files": run.fingerprint(),
        "code": judging_code_digest(run.corpus / run.case),
    }
    if run.compile_first:
        key["compiled_first_for"] = run.compile_first
    if run.timeout:  # a shorter one may turn a PASS into a TIMEOUT
        key["timeout"] = run.timeout
    tools = machine_tools.identity(str(target.get("backend")))
    if tools is not None:
        key["machine_tool"] = tools
    if target.get("kind") == "device":  # judged on a GPU: which one, and its driver
        key["device"] = device_identity(str(target.get("backend")))
    return json.dumps(key, sort_keys=True)


def made_with(held: dict[str, str] | None, installed: dict[str, str] | None) -> bool:
    """Observation.judged_with, on what a judgement says it held."""
    return installed is None or held == installed


def current(kept: list[dict[str, Any]], installed: dict[str, str] | None) -> list[dict[str, Any]]:
    """The remembered observations (as stored) still made with what the environment holds."""
    return [o for o in kept if "records" in o and made_with(o.get("installed"), installed)]


def observe_installed(
    run: CaseRun, toolchain: str | None, environment: Environment | None = None
) -> Observation:
    """`run` judged now, with what its environment held (built by the judging, if it was not)."""
    observation = run.observe(toolchain, environment)
    observation.installed = installed_now(run, toolchain, environment)
    return observation


class Memo:
    """Observations per judgement key (`judgement_key`) on disk, shared by bisections, verify and
    processes."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or cache_root() / "bisect" / "memo.json"

    def load(self) -> dict[str, list[dict[str, Any]]]:
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def get(self, run: CaseRun, toolchain: str | None) -> list[Observation]:
        return self.at(judgement_key(run, toolchain), installed_now(run, toolchain))

    def at(self, key: str, installed: dict[str, str] | None = None) -> list[Observation]:
        """What is remembered under `key` and was judged with what the environment holds now
        (`installed`, Observation.judged_with); an entry of an older kregress's memo (not item
        records) is not remembered, so it is judged again."""
        return [Observation.from_json(o) for o in current(self.load().get(key, []), installed)]

    def observations(
        self, run: CaseRun, toolchain: str | None, count: int, environment: Environment | None = None
    ) -> list[Observation]:
        """`count` observations of the case under `toolchain`: the remembered ones first, the
        rest judged now and remembered (a bisect's reruns; verify asks for one). Those made with
        other versions than the environment holds now are forgotten. `environment`: the
        toolchain's, where the caller resolved it (handed to each run)."""
        key = judgement_key(run, toolchain)  # once: it hashes the case, the code and the environment
        installed = installed_now(run, toolchain, environment)
        found = self.at(key, installed)[:count]
        while len(found) < count:
            observation = observe_installed(run, toolchain, environment)
            self.update(key, lambda kept, new=observation: [*current(kept, new.installed), new.as_json()])
            found.append(observation)
        return found

    def replace(self, key: str, observation: Observation) -> None:
        """Forget what was remembered for this key and remember `observation` alone (a judgement
        made again on purpose supersedes the old ones)."""
        self.update(key, lambda kept: [observation.as_json()])

    def add(self, key: str, observation: Observation) -> None:
        self.update(key, lambda kept: [*kept, observation.as_json()])

    def update(self, key: str, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
        """One key's observations rewritten under the memo's lock (other processes write it too)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock"):
            data = self.load()
            data[key] = change(data.get(key, []))
            write_atomically(self.path, json.dumps(data))


def toolchain_for_target(target: Target, spec: str | None, log: Callable[[str], None]) -> Interpreter:
    """The toolchain that judges an item: `spec`, else the matrix's for the target, else this
    environment's; the machine's tools its backend takes added for compile targets, as pytest
    does (kregress.machine_tools)."""
    from kregress import machine_tools
    from kregress.item import toolchain_interpreter, with_machine_tools

    interpreter = toolchain_interpreter(spec or target.toolchain, log)
    return with_machine_tools(
        target, interpreter, lambda backend: machine_tools.child_variables(backend, log=log)
    )


def judge_in_process(
    case_folder: Path, expectation: str, target: Target, interpreter: Interpreter, timeout: float
) -> ItemJudgement:
    """One item of a case folder (a copy being shrunk) judged where the caller runs, as the plugin
    judges it: the kind's job under `interpreter`, the verdict, known_bad."""
    from kregress.item import judge_item
    from kregress.jobs import run_job
    from kregress.manifest import load_case

    case = load_case(case_folder / "case.toml")
    found = dict(case.expectations())[expectation]
    options = {"trace_passes": False, "trace_passes_on_fail": False, "perf_rounds": None}
    run = lambda job: run_job(job, timeout, case_folder.parent, interpreter=interpreter)  # noqa: E731
    return judge_item(case, expectation, found, target, run, options.get)
