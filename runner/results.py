"""Corpus runs compared: what is new since the last run (new FAIL, fixed, new XPASS, flaky).

One comparison serves the nightly workflow (`kregress compare`), the history page (`kregress
report`) and the PR comment, so "new FAIL" means the same thing everywhere. Results are the JSON
documents `pytest --kregress-json` writes; several (one per runner, or a rerun) merge into one run.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, ValidationError

from kregress.errors import KregressError
from kregress.frameworks import DEFAULT
from kregress.judge import Outcome
from kregress.record import ItemRecord, RunResults

Key = tuple[str, str, str]  # case, expectation, target
# What a comparison of two nights calls "did not newly break": a known-bad item that fails as known
# (XFAIL) too. Not a verdict: a search and a flake rate read outcomes by kregress.judging_service.
NOT_NEWLY_BROKEN = (Outcome.PASS, Outcome.XFAIL, Outcome.XPASS)


class ResultsError(KregressError):
    """A results file that is not one kregress wrote: names the file and what is wrong."""


def key_of(item: ItemRecord) -> Key:
    return item.case, item.expectation, item.target


COMMIT_SUFFIX = " commit"  # the key of a built package's commit among an item's versions


def built_commits(versions: dict[str, str] | None) -> dict[str, str]:
    """Package -> the commit its build was made from, among the versions an item was judged with."""
    versions = versions or {}
    return {k.removesuffix(COMMIT_SUFFIX): v for k, v in versions.items() if k.endswith(COMMIT_SUFFIX)}


def line_of(item: ItemRecord) -> str:
    """Which toolchain line an item was judged on, so that a runner judging a release and a head
    compares each with its own past: "" (kregress's own toolchain), a package's releases
    ("triton", whichever is newest), or a package's commits ("triton@", a branch's head)."""
    commits = built_commits(item.toolchain)
    if commits:
        return f"{min(commits)}@"
    spec = item.toolchain_spec
    return package_of(spec, spec) if spec else ""


def identity(item: ItemRecord) -> tuple[str, str, str, str]:
    """An item across runs: its key on its toolchain line."""
    return (line_of(item), *key_of(item))


def report_name(case: str, target: str, fix: bool = False) -> str:
    """File name of a bisect report (of the fix's search when `fix`): artifact names and paths may
    not hold ':'."""
    return f"{case}.{target.replace(':', '-')}{'.fix' if fix else ''}.md"


def problems_of(error: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors(include_url=False))


def load_results(path: Path) -> RunResults:
    try:
        document = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{path}: cannot read results: {exc}") from None
    if not isinstance(document, dict) or "kregress" not in document:
        raise ResultsError(f"{path}: not a kregress results file (no 'kregress' field)")
    items = document.get("items")
    if not isinstance(items, list):
        raise ResultsError(f"{path}: 'items' must be a list")
    records = []
    for index, item in enumerate(items):
        missing = [k for k in ("case", "expectation", "target", "outcome") if k not in item]
        if missing:
            raise ResultsError(f"{path}: items[{index}] lacks {', '.join(missing)}")
        try:
            records.append(ItemRecord.model_validate(item))
        except ValidationError as exc:
            raise ResultsError(
                f"{path}: items[{index}] does not fit an item record: {problems_of(exc)}"
            ) from None
    try:
        return RunResults.model_validate({**document, "items": records})
    except ValidationError as exc:
        raise ResultsError(f"{path}: does not fit a run's results: {problems_of(exc)}") from None


def merge(documents: list[RunResults]) -> RunResults:
    """One run from the documents of its jobs. An item judged more than once (a rerun, or a
    compile target two runners share) keeps every outcome in `attempts`; its `outcome` is the
    worst, so a failure is never hidden by a later pass."""
    by_key: dict[tuple[str, ...], list[ItemRecord]] = defaultdict(list)
    for document in documents:
        for item in document.items:
            by_key[identity(item)].append(item)
    items = []
    for records in by_key.values():
        worst = min(records, key=lambda r: severity(r.outcome))
        if len(records) > 1:
            worst = ItemRecord.model_validate({**worst.as_json(), "attempts": [r.outcome for r in records]})
        items.append(worst)
    return RunResults(
        started=min((d.started or 0 for d in documents), default=0),
        runs=[job for d in documents for job in d.jobs()],
        run_ids=sorted({i for d in documents for i in d.run_ids or []}) or None,
        items=items,
    )


WORST_FIRST = (
    Outcome.ERROR,
    Outcome.FAIL,
    Outcome.XPASS,
    Outcome.UNSTABLE,
    Outcome.XFAIL,
    Outcome.PASS,
    Outcome.SKIP,
)
SYMBOL = {
    Outcome.PASS: "✅",
    Outcome.FAIL: "❌",
    Outcome.XFAIL: "⚠️",
    Outcome.XPASS: "🎉",
    Outcome.UNSTABLE: "〰️",
    Outcome.SKIP: "⏭️",
    Outcome.ERROR: "💥",
}


def severity(outcome: str) -> int:
    return WORST_FIRST.index(outcome) if outcome in WORST_FIRST else 0


def worst_outcome(outcomes: Iterable[str]) -> str | None:
    """The worst of these outcomes, as its name (an Outcome formats as its class on Python 3.12)."""
    found = min(outcomes, key=severity, default=None)
    return found.value if isinstance(found, Outcome) else found


@dataclass
class Change:
    key: Key
    now: str
    was: str | None  # None: the item did not exist in the previous runs
    item: ItemRecord
    reason: str = ""
    earlier: ItemRecord | None = None  # the item in the newest previous run (what `was` was)

    def as_dict(self) -> dict[str, Any]:
        return self.entry().model_dump(mode="json")

    def entry(self) -> ChangeEntry:
        case, expectation, target = self.key
        was_toolchain = self.earlier.toolchain if self.earlier else None
        return ChangeEntry(case=case, expectation=expectation, target=target, now=self.now, was=self.was,
                           reason=self.reason, message=self.item.message or "",
                           failure_kind=self.item.failure_kind, upstream=self.item.upstream,
                           toolchain=self.item.toolchain or {}, line=line_of(self.item),
                           was_toolchain=was_toolchain or {})  # fmt: skip


class ChangeEntry(BaseModel):
    """One change as `kregress compare --json` writes it, and as the comments read it back."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    case: str
    expectation: str
    target: str
    now: str
    was: str | None = None  # None: the item did not exist in the previous runs
    reason: str = ""
    message: str = ""
    failure_kind: str | None = None
    upstream: str | None = None
    toolchain: dict[str, str] = {}
    line: str = ""  # the toolchain line (results.line_of): "triton@" on a branch head
    was_toolchain: dict[str, str] = {}


def load_changes(document: dict[str, Any], path: Path) -> dict[str, list[ChangeEntry]]:
    """A `kregress compare --json` document's sections, each entry checked against ChangeEntry."""
    try:
        return {
            name: [ChangeEntry.model_validate(e) for e in document.get(name) or []] for name, *_ in SECTIONS
        }
    except ValidationError as exc:
        raise ResultsError(
            f"{path}: does not fit a change of `kregress compare --json`: {problems_of(exc)}"
        ) from None


@dataclass
class Changes:
    new_fail: list[Change] = field(default_factory=list)
    fixed: list[Change] = field(default_factory=list)
    new_xpass: list[Change] = field(default_factory=list)
    new_error: list[Change] = field(default_factory=list)
    lost_coverage: list[Change] = field(default_factory=list)
    flaky: list[Change] = field(default_factory=list)
    still_failing: int = 0
    compared_with: int = 0

    def sections(self) -> list[tuple[str, str, str, list[Change]]]:
        """(field, symbol, title, entries) in the order every rendering shows them."""
        return [(name, symbol, title, getattr(self, name)) for name, symbol, title in SECTIONS]

    def as_dict(self) -> dict[str, Any]:
        return {
            "kregress_changes": 1,
            "compared_with": self.compared_with,
            "still_failing": self.still_failing,
            **{name: [c.as_dict() for c in entries] for name, _, _, entries in self.sections()},
        }


SECTIONS = (
    ("new_fail", "❌", "New FAIL"),
    ("fixed", "✅", "Fixed (FAIL → PASS)"),
    ("new_xpass", "🎉", "New XPASS (a known-bad case now passes)"),
    ("new_error", "💥", "New ERROR (the harness, not the compiler)"),
    ("lost_coverage", "🕳️", "Lost coverage (held before, now SKIP or ERROR: judged no more)"),
    ("flaky", "🎲", "Flaky or UNSTABLE (reported, not bisected)"),
)


def compare(current: RunResults, previous: list[RunResults], window: int = 5) -> Changes:
    """`previous` are earlier merged runs in any order; the newest `window` of them are read.

    An item is flaky when its attempts in this run disagree on PASS vs FAIL, or when it flipped
    between the two at least twice over the window (on a head's line, only flips between two runs
    of one build count: two commits that broke and mended it are no flake), or when a perf item is
    UNSTABLE (its timing interval straddles the floor or is too wide): it is reported, never
    bisected."""
    now = current.identities()
    earlier = [d for d in previous if not (now and d.identities() & now)]  # this run, stored already
    earlier = sorted(earlier, key=lambda d: d.started or 0)[-window:] if window else []
    history: dict[tuple[str, ...], list[str]] = defaultdict(list)
    compilers: dict[tuple[str, ...], list[str]] = defaultdict(list)
    newest: dict[tuple[str, ...], ItemRecord] = {}
    for document in earlier:
        for item in document.items:
            history[identity(item)].append(item.outcome.value)
            compilers[identity(item)].append(compiler_of(item))
            newest[identity(item)] = item
    changes = Changes(compared_with=len(earlier))
    for item in sorted(current.items, key=identity):
        key, now = key_of(item), item.outcome.value
        past = history.get(identity(item), [])
        was = past[-1] if past else None
        attempts = [a.value for a in item.attempts or []] or [now]
        if Outcome.FAIL in attempts and any(a in NOT_NEWLY_BROKEN for a in attempts):
            changes.flaky.append(Change(key, now, was, item, f"attempts in this run: {', '.join(attempts)}"))
            continue
        if Outcome.UNSTABLE in attempts:  # timings too noisy to tell: like flaky, never a new FAIL
            changes.flaky.append(
                Change(key, now, was, item, "UNSTABLE: its timings cannot tell PASS from FAIL")
            )
            continue
        flips = (
            same_build_flips([*past, now], [*compilers.get(identity(item), []), compiler_of(item)])
            if line_of(item).endswith("@")
            else flip_count([*past, now])
        )
        if flips >= 2 and now in (Outcome.FAIL, Outcome.PASS):
            sequence = " → ".join([*past, now])
            changes.flaky.append(Change(key, now, was, item, f"last {len(past) + 1} runs: {sequence}"))
            continue
        if now in (Outcome.SKIP, Outcome.ERROR) and was in (Outcome.PASS, Outcome.XFAIL):
            # A compiler that stopped importing turns a corpus into SKIPs: never a quiet night.
            changes.lost_coverage.append(Change(key, now, was, item))
        elif now == Outcome.FAIL:
            if was == Outcome.FAIL:
                changes.still_failing += 1
            else:
                changes.new_fail.append(Change(key, now, was, item, earlier=newest.get(identity(item))))
        elif now == Outcome.PASS and was == Outcome.FAIL:
            changes.fixed.append(Change(key, now, was, item, earlier=newest.get(identity(item))))
        elif now == Outcome.XPASS and was != Outcome.XPASS:
            changes.new_xpass.append(Change(key, now, was, item))
        elif now == Outcome.ERROR and was != Outcome.ERROR:
            changes.new_error.append(Change(key, now, was, item))
    return changes


def compiler_of(item: ItemRecord) -> str:
    """What judged the item, as far as a flip can be blamed on it: the versions it ran with (a head's
    commit among them), the Python aside."""
    versions = {k: v for k, v in (item.toolchain or {}).items() if k != "python"}
    return json.dumps(versions, sort_keys=True)


def same_build_flips(outcomes: list[str], compilers: list[str]) -> int:
    """Flips between consecutive judged runs of one build (SKIP and ERROR are ignored)."""
    judged = [
        (o == Outcome.FAIL, c)
        for o, c in zip(outcomes, compilers, strict=True)
        if o == Outcome.FAIL or o in NOT_NEWLY_BROKEN
    ]
    return sum(1 for (a, x), (b, y) in itertools.pairwise(judged) if a != b and x == y)


def flip_count(outcomes: list[str]) -> int:
    """How often an item went between FAIL and a held outcome (SKIP and ERROR are ignored)."""
    kept = (Outcome.FAIL, *NOT_NEWLY_BROKEN)
    judged = [Outcome.FAIL if o == Outcome.FAIL else "held" for o in outcomes if o in kept]
    return sum(1 for a, b in itertools.pairwise(judged) if a != b)


def bisect_requests(
    changes: Changes,
    previous: list[RunResults],
    packages: dict[str, str],
    repositories: dict[str, str] | None = None,
) -> list[dict]:
    """For each new FAIL, the toolchain range to bisect: where it last held → where it fails now.

    `packages` maps a target to the package that builds it (triton-xpu for xpu targets);
    `repositories` a package to its source repository, which makes the bisect go on from the
    releases to the commits between them ("" when the matrix names none: releases only). On a
    head's line the range is the commits from the build where it last held to tonight's
    (`package@sha`, commits only), when the matrix names the repository. Left out: a new FAIL
    whose toolchain did not change (the corpus did), and one judged with a local build
    (`--toolchain PATH`) that says no commit."""
    last_held: dict[tuple[str, ...], ItemRecord] = {}
    for document in sorted(previous, key=lambda d: d.started or 0):
        for item in document.items:
            if item.outcome in NOT_NEWLY_BROKEN:
                last_held[identity(item)] = item
    requests = []
    for change in changes.new_fail:
        case, expectation, target = change.key
        line = line_of(change.item)
        held = last_held.get((line, *change.key))
        if line.endswith("@"):  # a head: the commits between two builds
            package = line.removesuffix("@")
            good, bad = (
                built_commits(held.toolchain if held else None).get(package),
                built_commits(change.item.toolchain).get(package),
            )
            repository = (repositories or {}).get(package, "")
            if good and bad and good != bad and repository:
                requests.append({"case": case, "expectation": expectation, "target": target,
                                 "good": f"{package}@{good}", "bad": f"{package}@{bad}", "regress": "fail",
                                 "repository": repository, "report": report_name(case, target)})  # fmt: skip
            continue
        spec = change.item.toolchain_spec
        if spec and (len(spec.split()) != 1 or pinned_version(spec) is None):
            continue  # a local build, or several packages: its range is commits, not releases
        # the package judged: the one --toolchain named, else the framework (its key in `toolchain`)
        framework = change.item.framework or DEFAULT  # records before frameworks were stored
        package = package_of(spec, "") if spec else packages.get(target, framework)
        if held is None or bool(spec) != bool(held.toolchain_spec):
            continue  # one side judged a named toolchain, the other the default: not one package's range
        good = judged_version(held, package, framework)
        bad = judged_version(change.item, package, framework)
        if not good or not bad or good == bad:
            continue
        requests.append({"case": case, "expectation": expectation, "target": target,
                         "good": f"{package}=={good}", "bad": f"{package}=={bad}", "regress": "fail",
                         "repository": (repositories or {}).get(package, ""),
                         "report": report_name(case, target)})  # fmt: skip
    return requests + fix_requests(changes, repositories or {})


def fix_requests(changes: Changes, repositories: dict[str, str]) -> list[dict]:
    """For each head that passes again, the commits between the last build where it failed and
    tonight's, searched for the fixing commit (`--regress pass`), as a culprit is."""
    requests = []
    for change in changes.fixed:
        line = line_of(change.item)
        if not line.endswith("@"):
            continue
        package = line.removesuffix("@")
        case, expectation, target = change.key
        was = change.earlier.toolchain if change.earlier else None
        failed, now = built_commits(was).get(package), built_commits(change.item.toolchain).get(package)
        repository = repositories.get(package, "")
        if failed and now and failed != now and repository:
            report = report_name(case, target, fix=True)
            requests.append({"case": case, "expectation": expectation, "target": target,
                             "good": f"{package}@{failed}", "bad": f"{package}@{now}", "regress": "pass",
                             "repository": repository, "report": report})  # fmt: skip
    return requests


def pinned_version(spec: str) -> str | None:
    """The version a one-requirement spec pins (`tinycc==0.3` -> `0.3`), else None."""
    try:
        pins = [s.version for s in Requirement(spec).specifier if s.operator == "=="]
    except InvalidRequirement:
        return None
    return pins[0] if len(pins) == 1 else None


def judged_version(item: ItemRecord, package: str, framework: str) -> str | None:
    """The version of `package` an item was judged with: the pin of its --toolchain when that named
    the package; the framework's version the child reported when no --toolchain was given and the
    package is the framework's own (a spec-less run judged the default compiler, not `package`)."""
    spec = item.toolchain_spec
    if spec:
        return pinned_version(spec) if package_of(spec, "") == package else None
    return (item.toolchain or {}).get(framework)


def version_key(text: str) -> tuple:
    """Versions in release order (3.10 after 3.9); what does not parse sorts after, by name."""
    try:
        return (0, Version(text))
    except InvalidVersion:
        return (1, text)


def package_of(requirement: str | None, default: str) -> str:
    if not requirement:
        return default
    try:
        return Requirement(requirement).name
    except InvalidRequirement:
        return default


def render_changes(changes: Changes) -> str:
    """Markdown for the step summary and the comments: the new things first, counts last."""
    earlier = f"compared with {changes.compared_with} earlier run(s)"
    lines = [f"### kregress: new since the last run ({earlier})", ""]
    for _, symbol, title, entries in changes.sections():
        if not entries:
            continue
        lines += [f"#### {symbol} {title}: {len(entries)}", "",
                  "| case | expectation | target | was | detail |", "|---|---|---|---|---|"]  # fmt: skip
        for change in entries:
            detail = change.reason or first_line(change.item.message or "")
            case, expectation, target = change.key
            was = change.was or "new"
            built = "".join(
                f" · {p}@{c[:12]}" for p, c in sorted(built_commits(change.item.toolchain).items())
            )
            lines.append(f"| `{case}` | `{expectation}` | `{target}`{built} | {was} | {cell(detail)} |")
        lines.append("")
    if not any(entries for *_, entries in changes.sections()):
        lines += ["Nothing changed.", ""]
    lines.append(f"Still failing as before: {changes.still_failing}.")
    return "\n".join(lines)


def first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "")


def cell(text: str, limit: int = 200) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"
