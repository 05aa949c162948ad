"""`kregress verify`: show that each case catches its bug, as its [reproduce] table says.

A case is worth its power to FAIL on the compiler that had the bug and to hold on one that does
not. For each case this judges, with the same runner, environments and memo as `kregress bisect`:
its bad releases (the bug's expectations must FAIL there), its good releases (the case must hold),
and its controls (kernels written as the buggy compiler left them must FAIL the named expectations
while the case's own kernels PASS). A guard says why no buggy compiler can run anywhere reachable.

Every judgement is kept in the ledger committed with the corpus (corpus/verify-ledger.json, written
by --write-ledger) and in the memo, both keyed by the case's files, the target, the toolchain, what
the environment holds and the kregress code that judges the case: an unchanged judgement is read
back, a changed one is judged again. CI passes --check-ledger (a judgement the ledger lacks fails)
and --recheck N (N cases the ledger holds judged again; one that disagrees fails). `-j N` verifies
N cases at a time (each a pytest process at a time, and the environments it builds).

Exit codes: 0 every case proven at its level (and the ledger complete and right, where checked);
1 some case not proven, or the ledger missing or contradicted; 2 the ledger cannot be read; 3 the
runner could not judge; 64 usage.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from kregress.bisect.search import PointVerdict
from kregress.bisect.triage.ledger import LEDGER_NAME, Ledger, LedgerEntry, LedgerError, is_draft
from kregress.errors import ExitCode
from kregress.judge import Outcome
from kregress.judging_service import (
    CaseRun,
    InfrastructureError,
    Memo,
    Observation,
    RegressOn,
    installed_now,
    items_verdict,
    judgement_key,
    observe_installed,
    record_verdict,
)
from kregress.manifest import Case, load_case
from kregress.matrix import load_matrix
from kregress.record import ItemRecord
from kregress.schema import SchemaError, read_toml
from kregress.toolchains import ToolchainError


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


def must_fail_items(case: Case, observation: Observation, target: str) -> dict[str, ItemRecord]:
    wanted = case.manifest.must_fail()
    return {name: record for name, record in observation.records.items()
            if record.expectation in wanted and record.target == target}  # fmt: skip


def short(records: dict[str, ItemRecord]) -> str:
    return ", ".join(f"{r.expectation} {r.outcome.value}" for _, r in sorted(records.items()))


def judge_bad(case: Case, observation: Observation, toolchain: str, target: str) -> Check:
    """The bad end: every item of the bug's expectations is bad under the one rule (RegressOn.FAIL);
    an ERROR is the repro's or kregress's, never the compiler's, so it cannot prove anything."""
    items = must_fail_items(case, observation, target)
    if not items:
        return Check(
            "bad", toolchain, target, "no item", False, "none of the bug's expectations applies here"
        )
    verdicts = items_verdict(items, RegressOn.FAIL)
    held = [n for n, v in verdicts.items() if v != PointVerdict.BAD]
    why = f"{', '.join(held)} did not FAIL under the compiler that has the bug" if held else ""
    wanted = case.manifest.reproduce.fails_with if case.manifest.reproduce else None
    otherwise = [
        n for n, v in verdicts.items()
        if v == PointVerdict.BAD and wanted and not re.search(wanted, failure_said(items[n]), re.S)
    ]  # fmt: skip
    if otherwise:
        shown = "; ".join(f"{n}: {failure_said(items[n]).partition(chr(10))[0][:200]}" for n in otherwise)
        why = "; ".join(filter(None, [why, f"failed otherwise than the bug (/{wanted}/): {shown}"]))
        held += otherwise
    errors = [f"{n} ERROR: {(items[n].message or '').partition(chr(10))[0]}"
              for n in held if items[n].outcome == Outcome.ERROR]  # fmt: skip
    if errors:
        why += f" ({'; '.join(errors)})"
    return Check("bad", toolchain, target, short(items), not held, why)


def failure_said(record: ItemRecord) -> str:
    """A failure as `fails_with` reads it: its kind, then its message, then the compiler's
    diagnostics the child printed (MLIR's and LLVM's errors are printed, not raised)."""
    said = f"{record.failure_kind or record.outcome.value}: {record.message or ''}"
    return f"{said}\n{record.diagnostics}" if record.diagnostics else said


def judge_good(case: Case, observation: Observation, toolchain: str, target: str) -> Check:
    """The good end: no item of the case is bad under the one rule, none is an ERROR (a case that
    cannot run there shows nothing), and some item of the bug's expectations is good."""
    items = must_fail_items(case, observation, target)
    here = {n: r for n, r in observation.records.items() if r.target == target}
    verdicts = items_verdict(here, RegressOn.FAIL)
    broken = [f"{n} {r.outcome.value}" for n, r in here.items() if verdicts[n] == PointVerdict.BAD]
    # an ERROR cannot tell (the repro's or kregress's, never the compiler's): no proof either way
    unjudged = [f"{n} ERROR" for n, r in here.items() if r.outcome == Outcome.ERROR]
    if not items:
        return Check(
            "good", toolchain, target, "no item", False, "none of the bug's expectations applies here"
        )
    why = "; ".join(
        filter(None, [
            f"the case does not hold: {', '.join(broken)}" if broken else "",
            f"could not be judged: {', '.join(unjudged)}" if unjudged else "",
        ])
    )  # fmt: skip
    if not why and not any(verdicts[n] == PointVerdict.GOOD for n in items):
        why = "the bug's expectations did not run (all SKIP)"
    return Check("good", toolchain, target, short(items), not why, why)


def xpass_problems(observation: Observation, toolchain: str) -> list[str]:
    """A known_bad entry that matches an item which PASSes: its range or targets are wrong."""
    return [f"under {toolchain}, {name} is XPASS: a known_bad entry covers an item that passes"
            for name, record in observation.records.items() if record.outcome == Outcome.XPASS]  # fmt: skip


class Verifier:
    def __init__(
        self, corpus: Path, matrix_path: Path | None, memo: Memo, log: Any, ledger: Ledger | None = None
    ) -> None:
        self.corpus, self.matrix_path, self.memo, self.log = corpus, matrix_path, memo, log
        self.matrix = load_matrix(matrix_path)
        self.ledger = ledger
        self.reused = self.judged = 0
        self.fresh = False  # judge everything again, remembering nothing
        self.recheck: set[str] = set()  # cases judged again although the ledger holds them
        self.seen: dict[str, LedgerEntry] = {}  # this run's judgements, by key: the ledger to write
        self.missing: list[str] = []  # judgements the ledger should hold and does not
        self.disagreements: list[str] = []  # ledger entries a fresh judgement contradicts
        self.lock = threading.Lock()  # cases verified at a time (-j) count and record through it

    def observe(self, run: CaseRun, toolchain: str | None) -> Observation:
        """Judged once per judgement key (kregress.judging_service.judgement_key): a judgement the
        ledger or the memo holds under the same key is reused, unless the case is rechecked."""
        key = judgement_key(run, toolchain)
        kept = self.ledger.get(key) if self.ledger else None
        label = f"{run.case} under {toolchain or 'the matrix toolchain'} on {run.target}"
        installed = installed_now(run, toolchain)
        again = self.fresh or run.case in self.recheck
        previous = kept.observation() if kept is not None else None
        if previous is not None and not previous.judged_with(installed):
            self.log(f"{label}: judged again, its environment changed since the ledger's judgement "
                     f"({previous.installed_change(installed)})")  # fmt: skip
            again = True
        if kept is not None and previous is not None and not again:
            with self.lock:
                self.reused += 1
                self.seen[key] = kept
            return previous
        remembered = [] if again else self.memo.at(key, installed)
        if remembered:
            observation = remembered[0]
        else:
            observation = observe_installed(run, toolchain)
            # a judgement made again replaces the remembered ones: the next verify reads the new one
            (self.memo.replace if again else self.memo.add)(key, observation)
        entry = LedgerEntry.of(run, toolchain, observation)
        with self.lock:
            if remembered:
                self.reused += 1
            else:
                self.judged += 1
            self.seen[key] = entry
            if self.ledger is not None:
                if kept is None:
                    self.missing.append(label)
                elif kept.outcomes != entry.outcomes:
                    self.disagreements.append(
                        f"{label}: the ledger says {kept.shown()}, judged now {entry.shown()}"
                    )
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
                    too_old = self.matrix.target(target).predates_toolchain(toolchain)
                    if too_old:  # not a point: `kregress check` refuses such a [reproduce]
                        self.log(f"{case.id}: {role} end {toolchain} on {target}: not applicable, {too_old}")
                        result.checks.append(Check(role, toolchain, target, "not applicable", False, too_old))
                        continue
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
                    control = observation.records.get(f"{control_name}[{target}]")
                    mine = control.outcome.value if control else None
                    theirs = observation.outcome(f"{own}[{target}]")
                    outcome = f"{own}: {mine} with {stand_in}, {theirs} as written"
                    bad = control is not None and record_verdict(control, RegressOn.FAIL) == PointVerdict.BAD
                    shows = bad and theirs == Outcome.PASS
                    why = "" if shows else (
                        f"the control must FAIL (it is {mine}) while the case's own PASSes (it is {theirs})"
                    )  # fmt: skip
                    if mine is None or theirs is None:
                        why = f"no item of {control_name if mine is None else own} on {target}"
                    result.checks.append(Check("control", "matrix", target, outcome, not why, why))


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


def at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def ledger_asked(args: argparse.Namespace) -> bool:
    """A check or a rewrite of the committed ledger: about the cases a fresh clone has."""
    return bool(args.check_ledger or args.write_ledger or args.recheck) and not args.no_ledger


def command_verify(args: argparse.Namespace) -> ExitCode:
    def log(message: str) -> None:
        print(f"kregress verify: {message}", file=sys.stderr, flush=True)

    matrix = load_matrix(args.matrix)
    names = args.cases or sorted(p.parent.name for p in args.corpus.glob("*/case.toml"))
    drafts = [name for name in names if is_draft(name)] if not args.cases and ledger_asked(args) else []
    if drafts:
        names = [name for name in names if name not in drafts]
        log(f"left out {len(drafts)} draft(s) of kregress import ({', '.join(drafts)}): git ignores them and "
            "the ledger never holds them; name one to verify it")  # fmt: skip
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
    try:
        ledger = None if args.no_ledger else Ledger(args.ledger or args.corpus / LEDGER_NAME)
    except LedgerError as exc:
        log(str(exc))
        return ExitCode.INVALID_FILE
    verifier = Verifier(args.corpus, args.matrix, Memo(), log, ledger)
    verifier.fresh = args.fresh
    if args.recheck and ledger is not None:
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
        held = sorted(c.id for c in cases if c.id in ledger.cases())
        verifier.recheck = set(random.Random(seed).sample(held, min(args.recheck, len(held))))
        log(f"judging again, though the ledger holds them: {', '.join(sorted(verifier.recheck)) or 'none'} "
            f"(--seed {seed} picks the same)")  # fmt: skip

    def verify(number: int, case: Case) -> Verification:
        if case.manifest.reproduce is None:
            return Verification(case.id, [], problems=["no [reproduce] table"])
        log(f"[{number}/{len(cases)}] {case.id}")
        return verifier.verify(case)

    pool = ThreadPoolExecutor(max_workers=args.jobs, thread_name_prefix="kregress-verify")
    try:
        futures = [pool.submit(verify, number, case) for number, case in enumerate(cases, 1)]
        results = [future.result() for future in futures]  # in the corpus's order, whatever ends first
    except InfrastructureError as exc:
        pool.shutdown(wait=True, cancel_futures=True)
        log(str(exc))
        return ExitCode.INFRASTRUCTURE
    pool.shutdown()
    print(render(results))
    total = verifier.reused + verifier.judged
    log(f"{verifier.judged} of {total} judgements made now, {verifier.reused} reused from the ledger or the "
        "memo (same case files, target, toolchain, environment and judging code)")  # fmt: skip
    if args.json:
        document = [{**asdict(r), "proven": r.proven, "reason": r.reason()} for r in results]
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    if args.write_ledger and ledger is not None:
        written, dropped = ledger.write(verifier.seen, {c.id for c in cases})
        log(f"wrote {ledger.path}: {written} entries ({dropped} no longer asked for dropped)")
    ledger_ok = not verifier.disagreements and not (args.check_ledger and verifier.missing)
    for label in verifier.missing if args.check_ledger else []:
        log(
            f"LEDGER MISSING {label}: judged now; `kregress verify --write-ledger`, then commit {LEDGER_NAME}"
        )
    for said in verifier.disagreements:
        log(f"LEDGER WRONG {said}")
    if ledger is not None and (args.check_ledger or verifier.recheck):
        log(f"ledger: {len(verifier.missing)} missing, {len(verifier.disagreements)} contradicted by a fresh "
            f"judgement ({len(verifier.recheck)} cases judged again)")  # fmt: skip
    return ExitCode.OK if ledger_ok and all(r.proven for r in results) else ExitCode.NOT_PROVEN


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
        help="judge every case again, reading neither the ledger nor the memo (never needed for "
        "correctness: both key on the case, target, toolchain, environment and judging code)",
    )
    verify.add_argument("--ledger", type=Path, help=f"the ledger to read (default: CORPUS/{LEDGER_NAME})")
    verify.add_argument("--no-ledger", action="store_true", help="read no ledger (the memo still counts)")
    verify.add_argument(
        "--write-ledger",
        action="store_true",
        help="write the judgements of the cases verified into the ledger (commit it with the corpus)",
    )
    verify.add_argument(
        "--check-ledger",
        action="store_true",
        help="exit 1 when the ledger lacks a judgement this run needed (it is judged now all the same)",
    )
    verify.add_argument(
        "--recheck",
        type=int,
        default=0,
        metavar="N",
        help="judge N cases again that the ledger holds, picked at random; exit 1 if one disagrees",
    )
    verify.add_argument("--seed", type=int, help="the seed that picks --recheck's cases (default: random)")
    verify.add_argument(
        "-j", "--jobs", type=at_least_one, default=1, metavar="N", help="cases verified at a time (default 1)"
    )
    verify.set_defaults(run=command_verify)
