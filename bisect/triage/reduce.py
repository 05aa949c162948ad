"""`kregress reduce`: shrink a failing case's repro.py to the smallest text that fails the same way.

The item (case, expectation, target) is judged as pytest would judge it: the same job in a child
process (the fork server, the Triton cache), the same kind's verdict. A candidate is kept only if
it fails the same way as the original: the same outcome and failure kind, and for a compile error
or a crash the same error class or signal (or, with --error-matches, a FAIL whose message matches).
A candidate that hangs, crashes differently or stops failing is rejected, never fatal. The edits
(bisect/triage/ast_edits.py) are tried in a fixed order, `-j` at a time, the first that holds in that order
kept, until a whole sweep keeps none: the result does not depend on -j or timing.

The reduced case is written as a new folder beside the old one: repro.py, case.toml keeping the
reduced expectation only, reduce.diff and REDUCED.md (lines, tokens, configs, candidates, seconds).
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import difflib
import multiprocessing
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from kregress.bisect.search import PointVerdict
from kregress.bisect.triage.ast_edits import candidates, normalized, size
from kregress.errors import ExitCode, KregressError
from kregress.frameworks import FRAMEWORKS, framework_of_source
from kregress.judge import diagnostics_of_failure
from kregress.judging_service import (
    CaseRun,
    Memo,
    Observation,
    RegressOn,
    installed_now,
    item_verdict,
    judge_in_process,
    judgement_key,
    toolchain_for_target,
)
from kregress.manifest import Case, load_case
from kregress.matrix import Target, load_matrix
from kregress.schema import SchemaError, read_toml

ERROR_CLASS = re.compile(r"\b(SIG[A-Z]+|signal \d+|[A-Z]\w*(?:Error|Exception|OutOfResources))\b")
KERNEL_MAKERS = tuple(w.__name__ for f in FRAMEWORKS.values() for w in f.wrappers)
DIGITS = re.compile(r"\d+")


class ReduceError(KregressError):
    """What was asked cannot be reduced (usage): said with the file and field, exit 64."""


@dataclass(frozen=True)
class Judged:
    """A candidate's verdict, as much of it as deciding and reporting need."""

    outcome: str
    failure_kind: str | None
    message: str
    detail: str = ""
    versions: tuple[tuple[str, str], ...] = ()  # the toolchain that judged it

    def error_classes(self) -> frozenset[str]:
        """The errors the message names; where configs list theirs ("[cfg] CompilationError: ..."),
        each with its last line, digits aside: a NameError left by a deleted line is not the bug."""
        listed = [line.split("] ", 1)[1] for line in self.message.splitlines()[1:] if "] " in line]
        return frozenset(DIGITS.sub("N", line) for line in listed) or frozenset(
            ERROR_CLASS.findall(self.message)
        )


@dataclass(frozen=True)
class SameFailure:
    """The interesting predicate: fails the way the original did (or as --error-matches says)."""

    original: Judged
    error_matches: re.Pattern[str] | None = None

    def holds(self, judged: Judged) -> bool:
        # still bad under the one rule (an ERROR, a line deleted into a NameError, is the candidate's)
        if item_verdict(judged.outcome, judged.failure_kind, RegressOn.FAIL) != PointVerdict.BAD:
            return False
        if self.error_matches is not None:
            return bool(self.error_matches.search(f"{judged.message}\n{judged.detail}"))
        if judged.failure_kind != self.original.failure_kind:
            return False
        wanted = self.original.error_classes()
        return not wanted or bool(judged.error_classes() & wanted)

    def describe(self) -> str:
        if self.error_matches is not None:
            return f"a FAIL whose message matches /{self.error_matches.pattern}/"
        classes = ", ".join(sorted(self.original.error_classes()))
        return f"{self.original.outcome} {self.original.failure_kind}" + (f" ({classes})" if classes else "")


@dataclass(frozen=True)
class Item:
    """What a worker process needs to judge a candidate, picklable."""

    case_folder: Path
    expectation: str
    target: Target
    interpreter: Any  # kregress.jobs.Interpreter
    timeout: float
    file: str = "repro.py"  # the file of the case that is shrunk
    # how the memo bisect and verify share keys a candidate: the target's name in the matrix, the
    # --toolchain given (None: the matrix's) and the matrix file
    target_name: str = ""
    spec: str | None = None
    matrix: Path | None = None


WORKER: dict[str, Any] = {}


def start_worker(item: Item, workdir: Path) -> None:
    WORKER.update(item=item, workdir=workdir)


def judge_text(text: str, number: int) -> Judged:
    """In a worker process: the candidate as the shrunk file of a copy of the case, judged like pytest."""
    item: Item = WORKER["item"]
    folder = Path(WORKER["workdir"]) / f"candidate-{number:05d}" / item.case_folder.name
    shutil.copytree(item.case_folder, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / item.file).write_text(text)
    try:
        # the memo bisect, verify and import share: a candidate judged before (a reduce run again,
        # or the same text reached twice) is read back under the same key, never judged twice
        run = CaseRun(
            folder.parent, folder.name, item.expectation, item.target_name, item.matrix, item.timeout
        )
        key, installed, memo = judgement_key(run, item.spec), installed_now(run, item.spec), Memo()
        name = f"{item.expectation}[{item.target_name}]"  # the item's record in the memo
        remembered = memo.at(key, installed)
        if remembered:
            return judged_from(remembered[0], name)
        judged = judge_in_process(folder, item.expectation, item.target, item.interpreter, item.timeout)
        verdict, outcome = judged.verdict, judged.outcome
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)
    versions = tuple(sorted(outcome.toolchain.items()))
    said = diagnostics_of_failure(verdict, outcome) or ""  # the compiler's, which its exception lacks
    found = Judged(
        verdict.outcome.value, verdict.failure_kind, verdict.message,
        "\n".join(filter(None, [verdict.detail[-3000:], said])), versions,
    )  # fmt: skip
    memo.add(key, observation_of(found, name, installed))
    return found


def observation_of(judged: Judged, name: str, installed: dict[str, str] | None) -> Observation:
    """A candidate's verdict as the memo keeps an item's record (its detail among what it measured)."""
    return Observation.from_parts(
        {name: judged.outcome}, {name: judged.failure_kind}, {name: judged.message},
        measured={name: {"detail": judged.detail}}, versions=dict(judged.versions), installed=installed,
    )  # fmt: skip


def judged_from(observation: Observation, name: str) -> Judged:
    record = observation.records[name]
    detail = str((record.measured or {}).get("detail", ""))
    versions = tuple(sorted((record.toolchain or {}).items()))
    return Judged(record.outcome.value, record.failure_kind, record.message or "", detail, versions)


@dataclass
class Reduction:
    """The search's state and what the report says of it."""

    original: str
    current: str
    judged: int = 0
    kept: list[str] = field(default_factory=list)
    seconds: float = 0.0


def reduce_text(
    text: str,
    holds: SameFailure,
    judge_batch: Any,
    jobs: int,
    log: Any = print,
) -> Reduction:
    """Edits in order, `jobs` at a time; the first that holds is kept and the sweep goes on from
    its place in the new text's list; sweeps repeat until one keeps nothing."""
    started = time.perf_counter()
    reduction = Reduction(text, normalized(text))
    failing: set[str] = set()  # texts judged not to hold
    changed = True
    while changed:
        changed = False
        position = 0
        while True:
            edits = candidates(reduction.current)
            batch: list[tuple[int, str, str]] = []
            current_size = size(reduction.current)
            while len(batch) < jobs and position < len(edits):
                edit = edits[position]
                made = edit.apply(reduction.current)
                if made is not None and made not in failing and size(made) < current_size:
                    batch.append((position, edit.describe, made))
                position += 1
            if not batch:
                break
            verdicts = judge_batch([made for _, _, made in batch])
            reduction.judged += len(batch)
            held = [holds.holds(verdict) for verdict in verdicts]
            # Only what was decided counts: a text after the kept one is judged again if it recurs,
            # so -j never changes the result.
            decided = held.index(True) if True in held else len(batch)
            failing.update(made for _, _, made in batch[:decided])
            if decided == len(batch):
                continue
            position, describe, reduction.current = batch[decided]
            reduction.kept.append(describe)
            changed = True
            tokens, _ = size(reduction.current)
            log(f"  {reduction.judged} judged, {tokens} tokens, {len(reduction.current.splitlines())} lines: "
                f"{describe}")  # fmt: skip
    reduction.seconds = time.perf_counter() - started
    return reduction


def kernel_objects(source: str) -> list[str]:
    """Names bound at the top of a repro to a framework's kernel wrapper (TritonKernel(...), ...)."""
    names = []
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
            called = statement.value.func
            maker = called.id if isinstance(called, ast.Name) else getattr(called, "attr", "")
            if maker in KERNEL_MAKERS:
                names += [t.id for t in statement.targets if isinstance(t, ast.Name)]
    return names


def scratch_case(file: Path, kernel: str | None, issue: str | None, folder: Path) -> tuple[Path, str]:
    """A case folder around a repro file outside the corpus: its kernel under a `compiles`
    expectation, so any compile failure can be matched by --error-matches."""
    source = file.read_text()
    found = kernel_objects(source)
    if kernel is None:
        if len(found) != 1:
            makers = " or ".join(f"{m}(...)" for m in KERNEL_MAKERS)
            raise ReduceError(
                f"{file}: name the kernel with --kernel (kernel objects found: {', '.join(found) or 'none'}; "
                f"a repro binds one with {makers}, see `kregress new`)"
            )
        kernel = found[0]
    if not issue:
        raise ReduceError(f"{file}: a case names its upstream bug: give --issue URL")
    framework = framework_of_source(source).name
    name = re.sub(r"[^a-z0-9_]", "_", file.stem.lower()) or "pasted"
    case = folder / name
    case.mkdir(parents=True)
    shutil.copy(file, case / "repro.py")
    repo = "/".join(issue.split("/")[3:5])
    manifest = {"title": f"{file.name}: reduced", "framework": framework,
                "upstream": {"repo": repo, "issue": issue},
                "expect": [{"name": "compiles", "kind": "compiles", "kernel": kernel}]}  # fmt: skip
    (case / "case.toml").write_text(tomli_w.dumps(manifest))
    load_case(case / "case.toml")  # refuses a bad issue URL with the field named
    return case, "compiles"


def reduced_manifest(case: Case, expectation: str, target: str, versions: dict[str, str]) -> dict[str, Any]:
    """The case's manifest with the reduced expectation only (named), the known_bad entries that
    cover it, and [reproduce] narrowed to it (controls dropped: they stand in for the old kernels)."""
    raw = read_toml(case.folder / "case.toml")
    names = [name for name, _ in case.expectations()]
    kept = dict(raw["expect"][names.index(expectation)], name=expectation)
    manifest = {**raw, "title": f"{raw['title']} (reduced)", "expect": [kept]}
    covering = [e for e in raw.get("known_bad", []) if expectation in e.get("expect", [expectation])]
    known_bad = [
        dict(entry, **({"expect": [expectation]} if entry.get("expect") else {})) for entry in covering
    ]
    manifest["known_bad"] = known_bad
    if not known_bad:
        del manifest["known_bad"]
    reproduce = {k: v for k, v in (raw.get("reproduce") or {}).items() if k not in ("control", "must_fail")}
    framework = case.manifest.framework
    if reproduce.get("bad") or reproduce.get("guard"):
        manifest["reproduce"] = {**reproduce, "must_fail": [expectation]}
    elif framework in versions:  # a pasted repro: shown failing under the toolchain that reduced it
        manifest["reproduce"] = {
            "targets": [target], "bad": [f"{framework}=={versions[framework]}"], "must_fail": [expectation],
            "no_good": "not named yet: give the release without the bug as good, then run kregress verify",
        }  # fmt: skip
    else:
        manifest.pop("reproduce", None)
    return manifest


def configs_in(source: str) -> int:
    """Configs a repro lists: the dicts of `configs=[...]` and the triton.Config(...) calls."""
    count = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.keyword) and node.arg == "configs" and isinstance(node.value, ast.List):
            count += sum(isinstance(element, ast.Dict) for element in node.value.elts)
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "Config"
        ):
            count += 1
    return count


def report(case: str, expectation: str, target: str, holds: SameFailure, reduction: Reduction) -> str:
    before, after = reduction.original, reduction.current
    rows = [("lines", len(before.splitlines()), len(after.splitlines())),
            ("tokens", size(before)[0], size(after)[0]),
            ("configs", configs_in(before), configs_in(after))]  # fmt: skip
    lines = [
        f"# {case}: reduced for {expectation} on {target}",
        "",
        f"Kept: {holds.describe()}.",
        f"Judged {reduction.judged} candidates in {reduction.seconds:.0f} s; "
        f"kept {len(reduction.kept)} edits.",
        "",
        "| | before | after |",
        "|---|---|---|",
        *(f"| {name} | {was} | {now} |" for name, was, now in rows),
        "",
        "Edits kept, in order:",
        "",
        *(f"1. {describe}" for describe in reduction.kept),
    ]
    return "\n".join(lines) + "\n"


def interpreter_for_target(target: Target, spec: str | None) -> Any:
    """The toolchain that judges the item (kregress.judging_service.toolchain_for_target)."""
    log = lambda message: print(f"kregress: {message}", file=sys.stderr)  # noqa: E731
    return toolchain_for_target(target, spec, log)


def command_reduce(args: argparse.Namespace) -> ExitCode:
    try:
        return run_reduce(args)
    except ReduceError as exc:
        print(f"kregress reduce: {exc}", file=sys.stderr)
        return ExitCode.USAGE


def run_reduce(args: argparse.Namespace) -> ExitCode:
    matrix = load_matrix(args.matrix)
    if args.target not in matrix.named:
        raise ReduceError(f"--target {args.target!r} is not in the matrix (see `kregress targets`)")
    target = matrix.target(args.target)
    error_matches = re.compile(args.error_matches) if args.error_matches else None
    given = Path(args.case)
    with tempfile.TemporaryDirectory(prefix="kregress-reduce-") as scratch:
        if given.suffix == ".py":
            if error_matches is None:
                raise ReduceError(f"{given}: a file outside the corpus needs --error-matches REGEX")
            folder, expectation = scratch_case(given, args.kernel, args.issue, Path(scratch) / "case")
            out = args.out or given.parent / f"{folder.name}_reduced"
        else:
            folder = given if given.is_dir() else args.corpus / args.case
            if not (folder / "case.toml").is_file():
                raise ReduceError(
                    f"{folder}: no case.toml (give a case of --corpus, a case folder or a .py file)"
                )
            if not args.expectation:
                raise ReduceError(f"{folder.name}: name the expectation to keep failing with -e")
            expectation = args.expectation
            out = args.out or folder.parent / f"{folder.name}_reduced"
        case = load_case(folder / "case.toml")
        kinds = dict(case.expectations())
        if expectation not in kinds:
            raise ReduceError(
                f"{folder / 'case.toml'}: no expectation {expectation!r} (names: {', '.join(kinds)})"
            )
        if kinds[expectation].not_reducible:
            raise ReduceError(f"{expectation}: {kinds[expectation].not_reducible}")
        if out.exists():
            raise ReduceError(f"{out} exists: remove it or give --out")
        timeout = args.timeout or float(case.manifest.timeout or 300)
        if not (folder / args.file).is_file() or Path(args.file).name != args.file:
            raise ReduceError(f"{folder}: --file {args.file!r} is not a file of the case folder")
        interpreter = interpreter_for_target(target, args.toolchain)
        item = Item(
            folder,
            expectation,
            target,
            interpreter,
            timeout,
            args.file,
            args.target,
            args.toolchain,
            args.matrix,
        )
        return reduce_case(args, case, item, error_matches, out, Path(scratch))


def reduce_case(
    args: argparse.Namespace,
    case: Case,
    item: Item,
    error_matches: re.Pattern[str] | None,
    out: Path,
    scratch: Path,
) -> ExitCode:
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=args.jobs, mp_context=context, initializer=start_worker, initargs=(item, scratch / "jobs")
    ) as pool:
        counter = iter(range(1, 1 << 30))

        def judge_batch(texts: list[str]) -> list[Judged]:
            return list(pool.map(judge_text, texts, [next(counter) for _ in texts]))

        original = (case.folder / item.file).read_text()
        print(f"judging {case.id}::{item.expectation}[{item.target.name}] as it is", file=sys.stderr)
        first = judge_batch([original])[0]
        holds = SameFailure(first, error_matches)
        if not holds.holds(first):
            wanted = f" (--error-matches /{error_matches.pattern}/)" if error_matches else ""
            named = f"{case.id}::{item.expectation}[{item.target.name}]"
            said = f"{first.outcome} {first.message[:300]}"
            print(f"kregress reduce: {named} does not fail{wanted}: {said}; nothing to keep while shrinking",
                  file=sys.stderr)  # fmt: skip
            return ExitCode.NOT_FAILING
        if not holds.holds(judge_batch([normalized(original)])[0]):
            print(
                "kregress reduce: the repro printed without comments fails otherwise; not reduced",
                file=sys.stderr,
            )
            return ExitCode.NOT_FAILING
        print(f"keeping {holds.describe()}; {args.jobs} candidate(s) at a time", file=sys.stderr)
        reduction = reduce_text(original, holds, judge_batch, args.jobs,
                                log=lambda line: print(line, file=sys.stderr))  # fmt: skip
    write_reduced(case, item, holds, reduction, out)
    print(report(case.id, item.expectation, item.target.name, holds, reduction))
    print(f"wrote {out}")
    return ExitCode.OK


def write_reduced(case: Case, item: Item, holds: SameFailure, reduction: Reduction, out: Path) -> None:
    shutil.copytree(case.folder, out, ignore=shutil.ignore_patterns("__pycache__"))
    (out / item.file).write_text(reduction.current)
    manifest = reduced_manifest(case, item.expectation, item.target.name, dict(holds.original.versions))
    (out / "case.toml").write_text(tomli_w.dumps(manifest))
    before, after = (text.splitlines(keepends=True) for text in (reduction.original, reduction.current))
    diff = difflib.unified_diff(before, after,
                                f"{case.id}/{item.file}", f"{out.name}/{item.file}")  # fmt: skip
    (out / "reduce.diff").write_text("".join(diff))
    (out / "REDUCED.md").write_text(report(case.id, item.expectation, item.target.name, holds, reduction))
    try:
        load_case(out / "case.toml")
    except SchemaError as exc:  # never leave a case that `kregress check` refuses without saying so
        print(f"kregress reduce: the reduced case needs editing: {exc}", file=sys.stderr)


def register(commands: argparse._SubParsersAction) -> None:
    reduce = commands.add_parser(
        "reduce",
        help="shrink a failing case's repro.py to a minimal one that fails the same way",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 reduced (the new folder written), 1 the item does not fail that way as it "
        "is (nothing to keep), 3 the toolchain could not be set up, 64 usage.",
    )
    reduce.add_argument("case", help="a case of --corpus, a case folder, or a .py repro outside the corpus")
    reduce.add_argument("-e", "--expectation", help="the expectation whose failure to keep (a case)")
    reduce.add_argument("-t", "--target", required=True, help="where it fails, e.g. cuda:sm_90")
    reduce.add_argument("--toolchain", help="judge under this toolchain, e.g. triton==3.2.0")
    reduce.add_argument("-j", "--jobs", type=int, default=1, help="candidates judged at a time (default 1)")
    reduce.add_argument("--timeout", type=float, help="seconds per candidate (default: the case's timeout)")
    reduce.add_argument("--error-matches", metavar="REGEX",
                        help="keep a FAIL whose message matches REGEX, not the failure kind")  # fmt: skip
    reduce.add_argument("--kernel", help="a .py repro's kernel object (default: its only one)")
    reduce.add_argument("--issue", help="a .py repro's upstream issue URL (the new case names it)")
    reduce.add_argument("--corpus", type=Path, default=Path("corpus"), help="default: corpus")
    reduce.add_argument("--file", default="repro.py",
                        help="the case's file to shrink (default repro.py; a draft of `kregress import` "
                        "keeps the reporter's code in pasted.py)")  # fmt: skip
    reduce.add_argument(
        "--out", type=Path, help="the new case folder (default: beside the old, NAME_reduced)"
    )
    reduce.set_defaults(run=command_reduce)
