"""`kregress bisect`: find the compiler release or commit where a case's outcome changed.

Exit codes: 0 a single culprit found; 1 no single culprit (an endpoint did not verify, skips left
a range, or history was not monotone); 3 infrastructure (the runner or the package index failed);
64 usage.
"""

from __future__ import annotations

import argparse
import shlex
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kregress.bisect.candidates import (
    BuildFailed,
    Candidate,
    CandidateError,
    CommitBuilder,
    commit_candidates,
    environment_ready,
    parse_version_ref,
    release_candidates,
)
from kregress.bisect.judging import (
    REGRESSIONS,
    CaseRun,
    InfrastructureError,
    Memo,
    Observation,
    majority,
    observation_verdict,
)
from kregress.bisect.search import PointVerdict, SearchResult, plain_bound, search
from kregress.markdown import fenced
from kregress.toolchains import EnvironmentCache, Toolchain, ToolchainError

EXIT_FOUND, EXIT_NOT_FOUND, EXIT_INFRASTRUCTURE, EXIT_USAGE = 0, 1, 3, 64
MAX_EXCERPT = 1500


@dataclass
class Point:
    """Everything learned about one candidate."""

    candidate: Candidate
    verdict: PointVerdict
    votes: list[PointVerdict] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    note: str = ""  # e.g. why it could not be built

    @property
    def observation(self) -> Observation | None:
        return self.observations[-1] if self.observations else None

    def describe(self) -> str:
        if self.note:
            return self.note.splitlines()[0]
        return self.observation.summary() if self.observation else ""

    def shown_votes(self) -> str:
        return f" ({'/'.join(v.value for v in self.votes)})" if len(self.votes) > 1 else ""


class Bisection:
    """Judges candidates (memoized, rerun for majority votes, commits built on demand)."""

    def __init__(
        self,
        run: CaseRun,
        regress: str,
        reruns: int,
        builder: CommitBuilder | None,
        memo: Memo,
        console: Console,
    ) -> None:
        self.run, self.regress, self.reruns = run, regress, reruns
        self.builder, self.memo, self.console = builder, memo, console
        self.points: dict[str, Point] = {}

    def toolchain(self, candidate: Candidate) -> str:
        if candidate.toolchain:
            return candidate.toolchain
        assert self.builder is not None and candidate.commit is not None
        return self.builder.build(candidate.commit)

    def cheap(self, candidate: Candidate) -> bool:
        if candidate.toolchain:
            return environment_ready(candidate.toolchain)
        built = self.builder.built(candidate.commit) if self.builder and candidate.commit else None
        return bool(built) and environment_ready(built)

    def judge(self, candidate: Candidate) -> Point:
        try:
            spec = self.toolchain(candidate)
            environment = EnvironmentCache().get(Toolchain.parse(spec))  # built here: a failure is a skip
        except (BuildFailed, ToolchainError) as exc:
            note = f"cannot be built: {str(exc).strip()[-MAX_EXCERPT:]}"
            point = Point(candidate, PointVerdict.SKIP, note=note)
            self.report_point(point)
            return point
        observations = self.memo.observations(self.run, spec, environment.root.name, self.reruns)
        votes = [observation_verdict(o, self.regress, self.run.expectation is None) for o in observations]
        point = Point(candidate, majority(votes), votes, observations)
        self.report_point(point)
        return point

    def report_point(self, point: Point) -> None:
        self.points[point.candidate.key] = point
        colour = {"good": "green", "bad": "red", "skip": "yellow"}[point.verdict.value]
        self.console.print(
            f"  {point.candidate.label}: [{colour}]{point.verdict.value}[/]{point.shown_votes()}  "
            f"{point.describe()[:200]}"
        )


def judge_round(
    bisection: Bisection, candidates: list[Candidate], points: list[int]
) -> dict[int, PointVerdict]:
    with ThreadPoolExecutor(max_workers=len(points)) as pool:
        judged = list(pool.map(lambda i: bisection.judge(candidates[i]), points))
    return {i: p.verdict for i, p in zip(points, judged, strict=True)}


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
    args: argparse.Namespace, candidates: list[Candidate], result: SearchResult, bisection: Bisection
) -> str:
    culprit = candidates[result.first_bad]
    good = candidates[result.last_good]
    lines = [f"### kregress bisect: `{args.case}`" + (f" / `{args.expectation}`" if args.expectation else "")
             + (f" on `{args.target}`" if args.target else "")]  # fmt: skip
    if result.exact:
        pr = f" (PR #{culprit.pr})" if culprit.pr else ""
        if args.regress == "pass":
            scope = "the whole case holds" if not args.expectation else f"{args.expectation} passes"
            lines.append(f"\nFirst fixed ({scope}): **{culprit.label}**{pr}; last broken: {good.label}.")
        else:
            lines.append(f"\nFirst bad ({args.regress}): **{culprit.label}**{pr}; last good: {good.label}.")
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
    spec = bisection.toolchain(culprit) if culprit.toolchain or result.exact else None
    if spec:
        command = shlex.join(bisection.run.command(spec)[1:]).replace("-m pytest", "pytest", 1)
        lines += ["", "Reproduce:", fenced(command)]
    lines.append(
        f"\n{result.calls} points judged in {result.rounds} rounds, after both ends, "
        f"over {len(candidates)} candidates."
    )
    return "\n".join(lines)


def command_bisect(args: argparse.Namespace) -> int:
    console = Console(stderr=True, highlight=False)
    if args.jobs < 1 or args.reruns < 1:
        console.print("kregress bisect: --jobs and --reruns must be at least 1")
        return EXIT_USAGE
    if not (args.corpus / args.case / "case.toml").exists():
        console.print(
            f"kregress bisect: no case {args.case!r} ({args.corpus / args.case / 'case.toml'} is missing)"
        )
        return EXIT_USAGE
    try:
        if parse_version_ref(args.good) or parse_version_ref(args.bad):
            candidates = release_candidates(args.good, args.bad, pre=args.pre)
            builder = None
        else:
            if args.repo is None:
                console.print("kregress bisect: git refs need --repo PATH (a local clone of the compiler)")
                return EXIT_USAGE
            candidates = commit_candidates(args.repo, args.good, args.bad, first_parent=not args.all_parents)
            builder = CommitBuilder(args.repo, args.build_cmd)
    except CandidateError as exc:
        console.print(f"kregress bisect: {exc}")
        return EXIT_USAGE
    except OSError as exc:
        console.print(f"kregress bisect: cannot list the candidates: {exc}")
        return EXIT_INFRASTRUCTURE
    run = CaseRun(args.corpus, args.case, args.expectation, args.target, args.matrix, args.case_timeout)
    bisection = Bisection(run, args.regress, args.reruns, builder, Memo(), console)
    between = len(candidates) - 2
    console.print(
        f"bisecting {args.case} over {len(candidates)} candidates "
        f"({candidates[0].label} … {candidates[-1].label}): "
        f"at most {plain_bound(between)} points without skips"
        + (f", {args.jobs} at a time" if args.jobs > 1 else "")
    )
    try:
        console.print("verifying both ends")
        ends = judge_round(bisection, candidates, [0, len(candidates) - 1])
        first, last = ends[0], ends[len(candidates) - 1]
        problems = []
        if args.regress == "pass":  # a fix search: --good is the broken end, --bad the fixed one
            shown = {
                PointVerdict.BAD: "holds already",
                PointVerdict.GOOD: "is still broken",
                PointVerdict.SKIP: "cannot be judged",
            }
            if first != PointVerdict.GOOD:
                problems.append(f"the broken end {candidates[0].label} {shown[first]}")
            if last != PointVerdict.BAD:
                problems.append(f"the fixed end {candidates[-1].label} {shown[last]}")
        else:
            if first != PointVerdict.GOOD:
                problems.append(f"the good end {candidates[0].label} is {first.value}")
            if last != PointVerdict.BAD:
                problems.append(f"the bad end {candidates[-1].label} is {last.value}")
        if problems:
            for end in (candidates[0], candidates[-1]):
                point = bisection.points[end.key]
                console.print(f"  observed at {end.label}: {point.note or point.describe()}")
            console.print(
                f"kregress bisect: {'; '.join(problems)} for --regress {args.regress}: nothing to search"
            )
            return EXIT_NOT_FOUND
        result = search(
            len(candidates),
            lambda points: judge_round(bisection, candidates, points),
            jobs=args.jobs,
            cheap=None if args.jobs > 1 else (lambda i: bisection.cheap(candidates[i])),
        )
    except InfrastructureError as exc:
        console.print(f"kregress bisect: {exc}")
        return EXIT_INFRASTRUCTURE
    text = markdown(args, candidates, result, bisection)
    table = Table(title="tested points")
    for column in ("candidate", "verdict", "outcome"):
        table.add_column(column)
    for candidate in candidates:
        point = bisection.points.get(candidate.key)
        if point:
            table.add_row(candidate.label, point.verdict.value + point.shown_votes(), point.describe()[:120])
    console.print(table)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    return EXIT_FOUND if result.exact else EXIT_NOT_FOUND


def add_parser(commands: argparse._SubParsersAction) -> None:
    bisect = commands.add_parser(
        "bisect",
        help="find the release or commit where a case's outcome changed",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bisect.add_argument("case", help="the case folder name under --corpus")
    bisect.add_argument("--good", required=True, help="a release (triton==3.2.0) or, with --repo, a git ref")
    bisect.add_argument("--bad", required=True, help="a release (triton==3.6.0) or, with --repo, a git ref")
    bisect.add_argument(
        "--expectation", "-e", help="judge this expectation only (default: all of the case's)"
    )
    bisect.add_argument(
        "--target", "-t", help="judge on this target (default: every target of --backend cpu)"
    )
    bisect.add_argument(
        "--regress", default="fail", choices=REGRESSIONS,
        help="the outcome that counts as bad: fail (default), pass (to find a fix), crash, error",
    )  # fmt: skip
    bisect.add_argument("--corpus", type=Path, default=Path("corpus"), help="default: corpus")
    bisect.add_argument("--repo", type=Path, help="local clone of the compiler, for git refs")
    bisect.add_argument(
        "--build-cmd",
        help="shell command building a commit: {src} is its source tree, {out} where to leave wheels "
        "(default: install the source tree as it is)",
    )
    bisect.add_argument("--all-parents", action="store_true", help="walk every commit, not first-parent only")
    bisect.add_argument("--pre", action="store_true", help="include pre-releases between the ends")
    bisect.add_argument("-j", "--jobs", type=int, default=1, help="points judged in parallel per round")
    bisect.add_argument(
        "--reruns", type=int, default=1, help="judge each point K times; the majority decides"
    )
    bisect.add_argument("--case-timeout", type=float, help="seconds per child process (default: the case's)")
    bisect.add_argument("--markdown", type=Path, help="also write the report here (for a GitHub comment)")
    bisect.set_defaults(run=command_bisect)
