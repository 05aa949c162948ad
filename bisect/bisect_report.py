"""The bisect report: markdown for a GitHub comment or a file, and the table printed as it ends.
Pure: it renders what the bisection learned (one level, or releases then commits) and builds
nothing."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from rich.table import Table

from kregress.bisect.bisection import MAX_EXCERPT, Level, Point
from kregress.bisect.confidence import ConfidenceReport
from kregress.bisect.search import PointVerdict
from kregress.code_identity import first_difference as first_code_difference
from kregress.code_identity import order_of
from kregress.judging_service import Observation, RegressOn, record_verdict
from kregress.markdown import fenced
from kregress.pass_trace import aligned, first_difference
from kregress.schema import SchemaError, parse


class CulpritCommit(BaseModel):
    """The one commit a commit-level bisect blamed, with the pull request its subject names."""

    model_config = ConfigDict(extra="forbid")
    commit: str
    subject: str = ""
    pr: int | None = None
    pins_moved: list[str] = Field(default_factory=list, description="pinned dependencies it also moves")


class CulpritFile(BaseModel):
    """What `kregress bisect --culprit-json` writes and `kregress comment culprit` reads: the one
    file between the search and the bot, so both sides agree on its fields."""

    model_config = ConfigDict(extra="forbid")
    case: str
    expectation: str | None = None
    target: str | None = None
    good: str
    bad: str
    regress: str = Field(default="fail", description="fail: the commit broke it; pass: the commit fixed it")
    culprit: CulpritCommit | None = None
    why_none: str | None = Field(default=None, description="why no single culprit commit is named")
    pins_in_range: list[str] = Field(
        default_factory=list, description="each pinned dependency a commit of the range searched moved"
    )

    def pins_said(self) -> list[str]:
        """The pins moved in the range, as markdown lines for a report or a comment (none: none)."""
        if not self.pins_in_range:
            return []
        moved = [f"- {pin}" for pin in self.pins_in_range]
        return ["", "Pinned dependencies moved inside the range searched:", *moved]

    @classmethod
    def load(cls, path: Path) -> CulpritFile:
        """The file read back; SchemaError naming the file and each field that does not fit."""
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise SchemaError(path, [f"cannot be read as JSON: {exc}"]) from None
        if not isinstance(data, dict):
            raise SchemaError(path, ["not a culprit file: `kregress bisect --culprit-json` writes an object"])
        return parse(cls, path, data)


def boundary_points(level: Level) -> tuple[Point, Point] | None:
    """The last good and the first bad point, when the level found one boundary."""
    if level.result is None or not level.result.exact or level.problems:
        return None
    points = level.bisection.points
    good = points.get(level.candidates[level.result.last_good].key)
    bad = points.get(level.candidates[level.result.first_bad].key)
    if good is None or bad is None or good.observation is None or bad.observation is None:
        return None
    return good, bad


def flipped_items(good: Observation, bad: Observation, regress: str) -> list[str]:
    """The items judged good at the last good point and bad at the first bad one: what the culprit
    is blamed for."""
    return [
        item
        for item, record in bad.records.items()
        if item in good.records
        and record_verdict(record, regress) == PointVerdict.BAD
        and record_verdict(good.records[item], regress) == PointVerdict.GOOD
    ]


def code_change(item: str, good: Observation, bad: Observation) -> str | None:
    """How the generated code of one item differs between the two points: the first stage that
    differs, per config; None when neither side recorded code (an interpreter or device run)."""
    before, after = (
        (seen.records[item].code if item in seen.records else None) or {} for seen in (good, bad)
    )
    if not before and not after:
        return None
    if not before or not after:
        missing = "last good" if not before else "first bad"
        return f"differs: no code at the {missing} point (it did not compile)"
    differing = []
    for config in sorted(set(before) | set(after)):
        if config not in before or config not in after:
            differing.append(f"{config}: compiled on one side only")
            continue
        stage = first_code_difference(before[config], after[config])
        if stage is None:
            continue
        if stage not in before[config] or stage not in after[config]:
            reached = "first bad" if stage in after[config] else "last good"
            differing.append(f"{config}: {stage} only at the {reached} point, the same code before it")
        else:
            differing.append(f"{config}: from {stage} on")
    if differing:
        return "differs (" + "; ".join(differing) + ")"
    stages = sorted({s for c in before.values() for s in c}, key=order_of)
    return f"identical at every stage ({', '.join(stages)})"


def item_code_changes(level: Level, regress: str) -> list[tuple[str, bool, str]]:
    """Per item with code on either side of the boundary: whether the culprit changed its outcome,
    and how its generated code changed (code_change)."""
    ends = boundary_points(level)
    if ends is None:
        return []
    good, bad = (p.observation for p in ends)
    assert good is not None and bad is not None
    flipped = set(flipped_items(good, bad, regress))
    changes = [
        (item, item in flipped, code_change(item, good, bad))
        for item in sorted(set(good.records) & set(bad.records))
    ]
    return [(item, changed, change) for item, changed, change in changes if change is not None]


def suspect_items(level: Level, regress: str) -> list[str]:
    """Items whose outcome the culprit changes without changing their generated code: named only
    when every item it changed that recorded code kept the same code."""
    blamed = [(item, change) for item, changed, change in item_code_changes(level, regress) if changed]
    if not blamed or any(not change.startswith("identical") for _, change in blamed):
        return []
    return [item for item, _ in blamed]


def code_section(level: Level, regress: str) -> list[str]:
    """Per item, whether the last good and the first bad point generate different code."""
    changes, ends = item_code_changes(level, regress), boundary_points(level)
    if not changes or ends is None:
        return []
    good_point, bad_point = ends
    title = f"Generated code, {good_point.candidate.label} → {bad_point.candidate.label}:"
    lines = [f"- {item} ({'its outcome changed' if changed else 'same outcome'}): {change}"
             for item, changed, change in changes]  # fmt: skip
    return ["", title, *lines]


def shown_figures(measured: object, failure_kind: str | None, outcome: str | None) -> str:
    """Measured values as a reader writes them (`stack_bytes 32 [num_warps=4]`), never a dict's
    repr; nothing measured (an error, a crash) says so and why."""
    if not measured:
        return f"not measured ({failure_kind or outcome or 'no result'})"
    if not isinstance(measured, dict):
        return str(measured)
    parts = []
    for name, value in measured.items():
        if name == "configs":
            parts.append("compiled: " + ", ".join(map(str, value)))
        elif name == "failed_configs":
            parts.append("did not compile: " + ", ".join(map(str, value)))
        elif isinstance(value, dict) and all("=" in str(k) or k == "default" for k in value):
            parts += [f"{name} {figure} [{config}]" for config, figure in value.items()]  # per config
        elif isinstance(value, dict):
            parts.append(f"{name}: " + ", ".join(f"{k} {v}" for k, v in value.items()))  # per field
        else:
            parts.append(f"{name} {value}")
    return "; ".join(parts)


def changed_values(good: Point, bad: Point) -> list[str]:
    """Measured values that differ between the last good and the first bad point."""
    if not good.observation or not bad.observation:
        return []
    before_seen, after_seen = good.observation, bad.observation
    lines = []
    for item, record in before_seen.records.items():
        later = after_seen.records.get(item)
        before, after = record.measured, later.measured if later else None
        if before != after:
            was = shown_figures(before, record.failure_kind, record.outcome.value)
            now = shown_figures(after, later.failure_kind if later else None, after_seen.outcome(item))
            lines.append(f"{item}: {was} → {now}")
    return lines


VERDICT_WORDS = {
    # a fix search (--regress pass) looks for where the case first holds: its "good" end is broken
    "pass": {PointVerdict.GOOD: "broken", PointVerdict.BAD: "fixed", PointVerdict.SKIP: "skip"},
}


def verdict_word(verdict: PointVerdict, regress: str) -> str:
    return VERDICT_WORDS.get(regress, {}).get(verdict, verdict.value)


def headline(level: Level, expectation: str | None, regress: str) -> str:
    """One sentence: the culprit of this level, or why there is none."""
    result, candidates = level.result, level.candidates
    if result is None:
        return "not searched: " + "; ".join(level.problems)
    culprit, good = candidates[result.first_bad], candidates[result.last_good]
    if level.problems:
        return "no single culprit: " + "; ".join(level.problems)
    if result.exact:
        pr = f" (PR #{culprit.pr})" if culprit.pr else ""
        suspect = suspect_items(level, regress)
        if suspect:
            return (
                f"Suspect culprit: **{culprit.label}**{pr} changes the outcome of {', '.join(suspect)} but "
                f"generates the same code as {good.label} at every stage: look at the environment, a "
                "runtime change or flakiness before blaming it."
            )
        if regress == RegressOn.PASS:
            scope = "the whole case holds" if not expectation else f"{expectation} passes"
            return f"First fixed ({scope}): **{culprit.label}**{pr}; last broken: {good.label}."
        return f"First bad ({regress}): **{culprit.label}**{pr}; last good: {good.label}."
    if result.contradictions:
        return (
            f"No single culprit: history is not monotone. The search ended at {good.label} → "
            f"{culprit.label}, but "
            + ", ".join(
                f"{candidates[i].label} was {result.tested.get(i, PointVerdict.BAD).value}"
                for i in result.contradictions
            )
            + " on the other side of that boundary."
        )
    return "No single culprit: unbuildable or unjudgeable points leave a range. The first bad is one of: " + (
        ", ".join(candidates[i].label for i in result.ambiguous)
    )


def points_rows(level: Level) -> list[str]:
    lines = ["| candidate | verdict | outcome |", "|---|---|---|"]
    for candidate in level.candidates:
        point = level.bisection.points.get(candidate.key)
        if point is not None:
            outcome = point.describe().replace("|", "/")[:300]
            verdict = verdict_word(point.verdict, level.bisection.regress)
            lines.append(f"| {candidate.label} | {verdict}{point.shown_votes()} | {outcome} |")
    return lines


def culprit_details(level: Level) -> list[str]:
    """What changed at the culprit, what it printed, and how to reproduce it there."""
    if level.result is None:
        return []
    culprit = level.candidates[level.result.first_bad]
    good = level.candidates[level.result.last_good]
    lines: list[str] = []
    points = level.bisection.points
    good_point, bad_point = points.get(good.key), points.get(culprit.key)
    if good_point and bad_point:
        changes = changed_values(good_point, bad_point)
        if changes:
            lines += ["", "Measured values that changed:", *(f"- {c}" for c in changes)]
        # The error is what a reader wants: at the first bad point of a regression, at the last
        # broken one of a fix search (the fixed point only says it passes).
        fix_search = level.bisection.regress == RegressOn.PASS
        shown, where = (
            (good_point, "the last broken point") if fix_search else (bad_point, "the first bad point")
        )
        if shown.observation:
            excerpt = "\n".join(r.message for r in shown.observation.records.values() if r.message)[
                :MAX_EXCERPT
            ]
            lines += ["", f"Outcome at {where}, {shown.candidate.label}:", fenced(excerpt)]
    spec = level.bisection.known_toolchain(culprit)
    if spec:
        command = shlex.join(level.bisection.run.command(spec)[1:]).replace("-m pytest", "pytest", 1)
        lines += ["", "Reproduce:", fenced(command)]
    return lines


def pass_section(good: str, bad: str, before: Observation, after: Observation) -> list[str]:
    """The ir expectation's count after every MLIR pass at the last good and the first bad point,
    side by side, and the first pass (of those both ran) whose count differs."""
    lines: list[str] = []
    for item, record in before.records.items():
        later = after.records.get(item)
        traced_before = (record.measured or {}).get("passes") or {}
        traced_after = ((later.measured if later else None) or {}).get("passes") or {}
        for config, timeline in traced_before.items():
            other = traced_after.get(config)
            if not other or "every_pass" not in timeline or "every_pass" not in other:
                continue
            lines += ["", f"Pass by pass, {item} [{config}]:"]
            difference = first_difference(timeline["every_pass"], other["every_pass"])
            if difference:
                name, was, now = difference
                lines.append(
                    f"the first pass whose count differs: {good} leaves {was} after {name}, {bad} {now}"
                )
            else:
                lines.append("the passes both run leave the same counts; they differ in which passes run")
            pairs = dict(aligned(timeline["every_pass"], other["every_pass"]))
            lines += [f"\n| after pass (where either count changes) | {good} | {bad} |", "|---|---|---|"]
            previous: tuple[object, object] | None = None
            last = len(timeline["every_pass"]) - 1
            for index, (name, count) in enumerate(timeline["every_pass"]):
                match = pairs.get(index)
                then = other["every_pass"][match][1] if match is not None else "(not run)"
                if previous is None or previous != (count, then) or index == last:
                    lines.append(f"| {name} | {count} | {then} |")
                previous = (count, then)
    return lines


def markdown(
    case: str,
    expectation: str | None,
    target: str | None,
    regress: str,
    levels: list[Level],
    passes: list[str] | None = None,
    stated: ConfidenceReport | None = None,
) -> str:
    """One report for every level searched: the headlines first, then each level's points, then
    the details at the last level's culprit (the commit when there is one)."""
    lines = [f"### kregress bisect: `{case}`" + (f" / `{expectation}`" if expectation else "")
             + (f" on `{target}`" if target else "")]  # fmt: skip
    if len(levels) == 1:
        lines.append("\n" + headline(levels[0], expectation, regress))
    else:
        lines.append("")
        lines += [f"- {level.name}: {headline(level, expectation, regress)}" for level in levels]
    if stated is not None:
        lines += ["", stated.sentence()]
    for level in levels:
        if level.result is None:
            continue
        if len(levels) > 1:
            lines += ["", f"#### {level.name}"]
        lines += ["", *points_rows(level)]
    searched = [level for level in levels if level.result is not None]
    lines += culprit_details(searched[-1]) if searched else []
    lines += code_section(searched[-1], regress) if searched else []
    lines += passes or []
    counts = ", ".join(
        f"{level.result.calls} points judged in {level.result.rounds} rounds over {len(level.candidates)} "
        f"{level.name.split()[0].lower()}"
        for level in searched
        if level.result is not None
    )
    lines.append(f"\n{counts}, after both ends.")
    return "\n".join(lines)


def points_table(level: Level) -> Table:
    table = Table(title=f"tested points: {level.name}")
    for column in ("candidate", "verdict", "outcome"):
        table.add_column(column)
    for candidate in level.candidates:
        point = level.bisection.points.get(candidate.key)
        if point:
            verdict = verdict_word(point.verdict, level.bisection.regress)
            table.add_row(candidate.label, verdict + point.shown_votes(), point.describe()[:120])
    return table
