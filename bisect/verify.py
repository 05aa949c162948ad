"""`kregress verify`: show that each case catches its bug, as its [reproduce] table says.

A case is worth its power to FAIL on the compiler that had the bug and to hold on one that does
not. For each case this judges, with the same runner, environments and memo as `kregress bisect`:
its bad releases (the bug's expectations must FAIL there), its good releases (the case must hold),
and its controls (kernels written as the buggy compiler left them must FAIL the named expectations
while the case's own kernels PASS). A guard says why no buggy compiler can run anywhere reachable.

Exit codes: 0 every case proven at its level; 1 some case not proven; 3 the runner could not
judge; 64 usage.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from kregress.bisect.judging import CaseRun, InfrastructureError, Memo, Observation
from kregress.errors import ExitCode
from kregress.judge import Outcome
from kregress.manifest import Case, load_case
from kregress.matrix import load_matrix
from kregress.schema import SchemaError, read_toml
from kregress.toolchains import Toolchain, ToolchainError

HELD = (Outcome.PASS, Outcome.XPASS)
BROKEN = (Outcome.FAIL, Outcome.XFAIL)


@dataclass
class Check:
    """One run that a case's proof rests on, and whether it showed what it must."""

    role: str  # bad | good | control
    toolchain: str  # a spec, or "matrix" for the toolchain the matrix names per target
    target: str
    outcome: str  # what the items did, in short
    ok: bool
    why: str = ""


@dataclass
class Verification:
    case: str
    levels: list[str]
    checks: list[Check] = field(default_factory=list)
    guard: str | None = None
    problems: list[str] = field(default_factory=list)  # e.g. a known_bad entry matching a PASS
    not_run: list[str] = field(default_factory=list)  # the bug's device targets: judged on their runners
    no_good: str | None = None
    seconds: float = 0.0

    @property
    def proven(self) -> bool:
        return not self.problems and all(c.ok for c in self.checks) and bool(self.checks or self.guard)

    def reason(self) -> str:
        failed = [f"{c.role} {c.toolchain} on {c.target}: {c.why}" for c in self.checks if not c.ok]
        return "; ".join(self.problems + failed) or (f"guard: {self.guard}" if not self.checks else "")


def must_fail_items(case: Case, observation: Observation, target: str) -> dict[str, str]:
    wanted = case.manifest.must_fail()
    return {name: outcome for name, outcome in observation.outcomes.items()
            if name.rsplit("[", 1)[0] in wanted and name.endswith(f"[{target}]")}  # fmt: skip


def short(outcomes: dict[str, str]) -> str:
    return ", ".join(f"{name.rsplit('[', 1)[0]} {outcome}" for name, outcome in sorted(outcomes.items()))


def judge_bad(case: Case, observation: Observation, toolchain: str, target: str) -> Check:
    items = must_fail_items(case, observation, target)
    if not items:
        return Check(
            "bad", toolchain, target, "no item", False, "none of the bug's expectations applies here"
        )
    held = [n for n, o in items.items() if o not in BROKEN]
    why = f"{', '.join(held)} did not FAIL under the compiler that has the bug" if held else ""
    return Check("bad", toolchain, target, short(items), not held, why)


def judge_good(case: Case, observation: Observation, toolchain: str, target: str) -> Check:
    items = must_fail_items(case, observation, target)
    here = {n: o for n, o in observation.outcomes.items() if n.endswith(f"[{target}]")}
    broken = [f"{n} {o}" for n, o in here.items() if o in (*BROKEN, Outcome.ERROR)]
    if not items:
        return Check(
            "good", toolchain, target, "no item", False, "none of the bug's expectations applies here"
        )
    why = f"the case does not hold: {', '.join(broken)}" if broken else ""
    if not broken and not any(o in HELD for o in items.values()):
        why = "the bug's expectations did not run (all SKIP)"
    return Check("good", toolchain, target, short(items), not why, why)


def xpass_problems(observation: Observation, toolchain: str) -> list[str]:
    """A known_bad entry that matches an item which PASSes: its range or targets are wrong."""
    return [f"under {toolchain}, {name} is XPASS: a known_bad entry covers an item that passes"
            for name, outcome in observation.outcomes.items() if outcome == Outcome.XPASS]  # fmt: skip


class Verifier:
    def __init__(self, corpus: Path, matrix_path: Path | None, memo: Memo, log: Any) -> None:
        self.corpus, self.matrix_path, self.memo, self.log = corpus, matrix_path, memo, log
        self.matrix = load_matrix(matrix_path)
        self.reused = self.judged = 0
        self.fresh = False  # judge again what the memo remembers (after a change to kregress itself)

    def observe(self, run: CaseRun, toolchain: str | None) -> Observation:
        """Judged once per (case files, selection, environment), like a bisect point: a case whose
        folder, specs and targets did not change is not judged again (the memo says so)."""
        if toolchain is None:  # the matrix's toolchain: kregress's own environment, by its versions
            candidate, environment = "matrix", own_environment()
        else:
            candidate = toolchain
            # By what it holds, not where: a fresh clone's environments lend from another folder
            # (CI clones afresh every run) and judge the same, so their verdicts are reused.
            environment = Toolchain.parse(toolchain).verdict_key()
        remembered = [] if self.fresh else self.memo.get(run, candidate, environment)
        if remembered:
            self.reused += 1
            return remembered[0]
        self.judged += 1
        observation = run.observe(toolchain)
        # judged again with --fresh: the new verdict replaces the old, or the next verify (CI's)
        # would read the old one back
        (self.memo.replace if self.fresh else self.memo.add)(run, candidate, environment, observation)
        return observation

    def runnable(self, case: Case) -> list[str]:
        """The bug's targets this machine judges: compile targets and the interpreter (a device
        target needs its GPU runner, where the nightly judges it)."""
        reproduce = case.manifest.reproduce
        assert reproduce is not None
        return [t for t in reproduce.targets if self.matrix.target(t).kind != "device"]

    def verify(self, case: Case) -> Verification:
        started = time.perf_counter()
        reproduce = case.manifest.reproduce
        assert reproduce is not None
        result = Verification(case.id, reproduce.levels, guard=reproduce.guard, no_good=reproduce.no_good)
        result.not_run = [t for t in reproduce.targets if t not in self.runnable(case)]
        for role, toolchains in (("bad", reproduce.bad), ("good", reproduce.good)):
            for toolchain in toolchains:
                for target in self.runnable(case):
                    self.log(f"{case.id}: {role} end {toolchain} on {target}")
                    run = CaseRun(self.corpus, case.id, None, target, self.matrix_path)
                    try:
                        observation = self.observe(run, toolchain)
                    except ToolchainError as exc:
                        result.checks.append(
                            Check(role, toolchain, target, "not installable", False, str(exc))
                        )
                        continue
                    judge = judge_bad if role == "bad" else judge_good
                    result.checks.append(judge(case, observation, toolchain, target))
                    result.problems += xpass_problems(observation, toolchain)
        if reproduce.control:
            self.controls(case, result)
        result.seconds = round(time.perf_counter() - started, 1)
        return result

    def controls(self, case: Case, result: Verification) -> None:
        """Judge the case with each control standing in for its own kernel or check, on the
        toolchain the matrix names: the stand-ins must FAIL, the case's own must PASS."""
        reproduce = case.manifest.reproduce
        assert reproduce is not None
        with tempfile.TemporaryDirectory(prefix="kregress-verify-") as tmp:
            folder = Path(tmp) / case.id
            shutil.copytree(case.folder, folder, ignore=shutil.ignore_patterns("__pycache__"))
            data = read_toml(case.folder / "case.toml")
            stand_ins: dict[str, tuple[str, str]] = {}  # control item -> (own expectation, stand-in)
            by_name = {name: index for index, (name, _) in enumerate(case.expectations())}
            for control in reproduce.control:
                for name in control.expect:
                    entry = dict(data["expect"][by_name[name]])
                    field_name, value = (
                        ("kernel", control.kernel) if control.kernel else ("check", control.check)
                    )
                    entry.update(
                        {"name": f"control-{value}-{name}", field_name: value, "targets": reproduce.targets}
                    )
                    data["expect"].append(entry)
                    stand_ins[entry["name"]] = (name, value)
            (folder / "case.toml").write_text(tomli_w.dumps(data))
            for target in self.runnable(case):
                self.log(f"{case.id}: controls on {target}")
                observation = self.observe(CaseRun(Path(tmp), case.id, None, target, self.matrix_path), None)
                result.problems += xpass_problems(observation, "the matrix's toolchain")
                for control_name, (own, stand_in) in stand_ins.items():
                    mine = observation.outcomes.get(f"{control_name}[{target}]")
                    theirs = observation.outcomes.get(f"{own}[{target}]")
                    outcome = f"{own}: {mine} with {stand_in}, {theirs} as written"
                    why = "" if mine in BROKEN and theirs == Outcome.PASS else (
                        f"the control must FAIL (it is {mine}) while the case's own PASSes (it is {theirs})"
                    )  # fmt: skip
                    if mine is None or theirs is None:
                        why = f"no item of {control_name if mine is None else own} on {target}"
                    result.checks.append(Check("control", "matrix", target, outcome, not why, why))


def own_environment() -> str:
    """kregress's own environment, as a memo key: the compilers in it (not its folder, which a
    fresh clone changes)."""
    versions = []
    for package in ("triton", "torch", "tilelang"):
        try:
            versions.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return f"own:{', '.join(versions)}"


def render(results: list[Verification]) -> str:
    rows = [("case", "level", "role", "toolchain", "target", "outcome", "")]
    for result in results:
        for check in result.checks:
            rows.append((result.case, "+".join(result.levels), check.role, check.toolchain, check.target,
                         check.outcome[:90], "ok" if check.ok else "NOT OK"))  # fmt: skip
        if not result.checks:
            rows.append(
                (result.case, "+".join(result.levels), "guard", "-", "-", (result.guard or "")[:90], "")
            )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    lines.append("")
    for result in results:
        verdict = "PROVEN" if result.proven else "NOT PROVEN"
        level = "+".join(result.levels)
        reason = f": {result.reason()}" if not result.proven or not result.checks else ""
        notes = [f"no good end: {result.no_good}"] if result.no_good else []
        notes += [f"not run here (device targets): {', '.join(result.not_run)}"] if result.not_run else []
        notes += [f"guard: {result.guard}"] if result.guard and result.checks else []
        lines.append(f"{verdict:<10}  {result.case} ({level}, {result.seconds} s){reason}")
        lines += [f"            {note}" for note in notes]
    return "\n".join(lines)


def command_verify(args: argparse.Namespace) -> ExitCode:
    def log(message: str) -> None:
        print(f"kregress verify: {message}", file=sys.stderr, flush=True)

    matrix = load_matrix(args.matrix)
    names = args.cases or sorted(p.parent.name for p in args.corpus.glob("*/case.toml"))
    cases = []
    for name in names:
        path = args.corpus / name / "case.toml"
        if not path.exists():
            log(f"no case {name!r} ({path} is missing)")
            return ExitCode.USAGE
        try:
            case = load_case(path, set(matrix.targets))
        except SchemaError as exc:
            log(f"INVALID {exc}")
            return ExitCode.USAGE
        if case.manifest.reproduce is None:
            log(f"{name}: no [reproduce] table in {path}: nothing says how it is shown to catch its bug")
        cases.append(case)
    verifier = Verifier(args.corpus, args.matrix, Memo(), log)
    verifier.fresh = args.fresh
    results = []
    try:
        for case in cases:
            if case.manifest.reproduce is None:
                results.append(Verification(case.id, [], problems=["no [reproduce] table"]))
                continue
            results.append(verifier.verify(case))
    except InfrastructureError as exc:
        log(str(exc))
        return ExitCode.INFRASTRUCTURE
    print(render(results))
    total = verifier.reused + verifier.judged
    log(f"{verifier.judged} of {total} judgements made now, {verifier.reused} reused (unchanged case, specs, "
        "target and environment)")  # fmt: skip
    if args.json:
        document = [{**asdict(r), "proven": r.proven, "reason": r.reason()} for r in results]
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    return ExitCode.OK if all(r.proven for r in results) else ExitCode.NOT_PROVEN


def register(commands: argparse._SubParsersAction) -> None:
    verify = commands.add_parser(
        "verify",
        help="show that each case catches its bug: bad and good releases, controls",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("cases", nargs="*", help="case folder names (default: every case of --corpus)")
    verify.add_argument("--corpus", type=Path, default=Path("corpus"), help="default: corpus")
    verify.add_argument("--json", type=Path, help="also write the verdicts here")
    verify.add_argument(
        "--fresh",
        action="store_true",
        help="judge every case again, even where its folder, specs, target and environment are "
        "unchanged (the memo keys on those, not on kregress's own code)",
    )
    verify.set_defaults(run=command_verify)
