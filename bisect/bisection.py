"""A bisection under way: judge candidates (memoized, rerun for a majority, commits built on
demand), verify both ends, then search between them. No argument parsing and no rendering here."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from rich.console import Console

from kregress.bisect.candidates import BuildFailed, Candidate, CommitBuilder, environment_ready
from kregress.bisect.judging import CaseRun, Memo, Observation, majority, observation_verdict
from kregress.bisect.search import PointVerdict, SearchResult, search
from kregress.toolchains import EnvironmentCache, Toolchain, ToolchainError

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

    def known_toolchain(self, candidate: Candidate) -> str | None:
        """The candidate's toolchain if it exists already (a release, or a commit built during the
        search); never builds."""
        if candidate.toolchain:
            return candidate.toolchain
        return self.builder.built(candidate.commit) if self.builder and candidate.commit else None

    def cheap(self, candidate: Candidate) -> bool:
        spec = self.known_toolchain(candidate)
        return bool(spec) and environment_ready(spec)

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


def end_problems(
    regress: str, candidates: list[Candidate], first: PointVerdict, last: PointVerdict
) -> list[str]:
    """Why the two ends, as judged, leave nothing to search (empty when they bracket a change)."""
    problems = []
    if regress == "pass":  # a fix search: --good is the broken end, --bad the fixed one
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
    return problems


def verify_ends(bisection: Bisection, candidates: list[Candidate]) -> list[str]:
    ends = judge_round(bisection, candidates, [0, len(candidates) - 1])
    return end_problems(bisection.regress, candidates, ends[0], ends[len(candidates) - 1])


def search_between(bisection: Bisection, candidates: list[Candidate], jobs: int) -> SearchResult:
    return search(
        len(candidates),
        lambda points: judge_round(bisection, candidates, points),
        jobs=jobs,
        cheap=None if jobs > 1 else (lambda i: bisection.cheap(candidates[i])),
    )
