"""The bisect report: markdown for a GitHub comment or a file, and the table printed as it ends.
Pure: it renders what the bisection learned and builds nothing."""

from __future__ import annotations

import shlex

from rich.table import Table

from kregress.bisect.bisection import MAX_EXCERPT, Bisection, Point
from kregress.bisect.candidates import Candidate
from kregress.bisect.search import PointVerdict, SearchResult
from kregress.markdown import fenced


def changed_values(good: Point, bad: Point) -> list[str]:
    """Measured values that differ between the last good and the first bad point."""
    if not good.observation or not bad.observation:
        return []
    lines = []
    for item, before in good.observation.measured.items():
        after = bad.observation.measured.get(item)
        if before != after:
            lines.append(f"{item}: {before} → {after}")
    return lines


def markdown(
    case: str,
    expectation: str | None,
    target: str | None,
    regress: str,
    candidates: list[Candidate],
    result: SearchResult,
    bisection: Bisection,
) -> str:
    culprit = candidates[result.first_bad]
    good = candidates[result.last_good]
    lines = [f"### kregress bisect: `{case}`" + (f" / `{expectation}`" if expectation else "")
             + (f" on `{target}`" if target else "")]  # fmt: skip
    if result.exact:
        pr = f" (PR #{culprit.pr})" if culprit.pr else ""
        if regress == "pass":
            scope = "the whole case holds" if not expectation else f"{expectation} passes"
            lines.append(f"\nFirst fixed ({scope}): **{culprit.label}**{pr}; last broken: {good.label}.")
        else:
            lines.append(f"\nFirst bad ({regress}): **{culprit.label}**{pr}; last good: {good.label}.")
    elif result.contradictions:
        lines.append(
            f"\nNo single culprit: history is not monotone. The search ended at {good.label} → "
            f"{culprit.label}, but "
            + ", ".join(
                f"{candidates[i].label} was {result.tested.get(i, PointVerdict.BAD).value}"
                for i in result.contradictions
            )
            + " on the other side of that boundary."
        )
    else:
        lines.append(
            "\nNo single culprit: unbuildable or unjudgeable points leave a range. The first bad is one of: "
            + ", ".join(candidates[i].label for i in result.ambiguous)
        )
    lines += ["", "| candidate | verdict | outcome |", "|---|---|---|"]
    for candidate in candidates:
        point = bisection.points.get(candidate.key)
        if point is None:
            continue
        outcome = point.describe().replace("|", "/")[:300]
        lines.append(f"| {candidate.label} | {point.verdict.value}{point.shown_votes()} | {outcome} |")
    good_point, bad_point = bisection.points.get(good.key), bisection.points.get(culprit.key)
    if good_point and bad_point:
        changes = changed_values(good_point, bad_point)
        if changes:
            lines += ["", "Measured values that changed:", *(f"- {c}" for c in changes)]
        if bad_point.observation:
            excerpt = "\n".join(m for m in bad_point.observation.messages.values() if m)[:MAX_EXCERPT]
            lines += ["", f"Outcome at {culprit.label}:", fenced(excerpt)]
    spec = bisection.known_toolchain(culprit)
    if spec:
        command = shlex.join(bisection.run.command(spec)[1:]).replace("-m pytest", "pytest", 1)
        lines += ["", "Reproduce:", fenced(command)]
    lines.append(
        f"\n{result.calls} points judged in {result.rounds} rounds, after both ends, "
        f"over {len(candidates)} candidates."
    )
    return "\n".join(lines)


def points_table(candidates: list[Candidate], bisection: Bisection) -> Table:
    table = Table(title="tested points")
    for column in ("candidate", "verdict", "outcome"):
        table.add_column(column)
    for candidate in candidates:
        point = bisection.points.get(candidate.key)
        if point:
            table.add_row(candidate.label, point.verdict.value + point.shown_votes(), point.describe()[:120])
    return table
