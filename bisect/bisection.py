"""A bisection under way: judge candidates (memoized, rerun for a majority, commits built on
demand, the next points' environments built ahead), verify both ends, then search between them.
No argument parsing and no rendering here."""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from rich.console import Console

from kregress.bisect.candidates import Candidate, environment_ready
from kregress.bisect.confidence import MAX_RUNS, FlakeEstimate, decide, expected_points, per_point_target
from kregress.bisect.search import PointVerdict, SearchResult, search
from kregress.builds import BuildCache, BuildFailed
from kregress.judging_service import (
    CaseRun,
    InfrastructureError,
    Memo,
    Observation,
    RegressOn,
    majority,
    observation_verdict,
)
from kregress.toolchains import Environment, EnvironmentCache, Toolchain, ToolchainError

if TYPE_CHECKING:  # numpy's: imported where the posterior search runs, not by every command
    from kregress.bisect.posterior import NoiseModel, PosteriorResult

MAX_EXCERPT = 1500


@dataclass
class Point:
    """Everything learned about one candidate."""

    candidate: Candidate
    verdict: PointVerdict
    votes: list[PointVerdict] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    note: str = ""  # e.g. why it could not be built
    borrowed_from: str = ""  # not judged here: the verdict of this release, whose tag this commit is
    probability: float = 1.0  # that `verdict` is the point's true verdict (kregress.bisect.confidence)
    launch_code: dict | None = None  # what its device checks launch, compiled first (kregress.launch_code)
    same_code_as: str = ""  # not run on the device: the verdict of this point, whose launches are the same

    @property
    def observation(self) -> Observation | None:
        return self.observations[-1] if self.observations else None

    def describe(self) -> str:
        if self.note:
            return self.note.splitlines()[0]
        shown = self.observation.summary() if self.observation else ""
        if self.same_code_as:
            return f"{shown} (as {self.same_code_as}: the same code launched, not run on the device)"
        return f"{shown} (as {self.borrowed_from})" if self.borrowed_from else shown

    def shown_votes(self) -> str:
        return f" ({'/'.join(v.value for v in self.votes)})" if len(self.votes) > 1 else ""


@dataclass
class Level:
    """One level of a bisection: the releases, or the commits between the last good and the first
    bad release's tags. `problems` say why it names no single culprit although the search ran."""

    name: str  # what the candidates are, for the report: "Releases", "Commits between v3.1.0 and v3.2.0"
    candidates: list[Candidate]
    bisection: Bisection
    result: SearchResult | None = None
    problems: list[str] = field(default_factory=list)
    rechecked: list[str] = field(default_factory=list)  # good points judged again below the boundary
    posterior: PosteriorResult | None = None  # how the posterior search ended, when it searched

    @property
    def exact(self) -> bool:
        return self.result is not None and self.result.exact and not self.problems

    @property
    def culprit(self) -> Candidate | None:
        return self.candidates[self.result.first_bad] if self.exact and self.result else None

    @property
    def last_good(self) -> Candidate | None:
        return self.candidates[self.result.last_good] if self.exact and self.result else None


class Bisection:
    """Judges candidates (memoized, rerun for majority votes, commits built on demand)."""

    def __init__(
        self,
        run: CaseRun,
        regress: str,
        reruns: int,
        builder: BuildCache | None,
        memo: Memo,
        console: Console,
        flake: FlakeEstimate | None = None,
        point_target: float | None = None,
        max_runs: int = MAX_RUNS,
        compile_first: str | None = None,
    ) -> None:
        """With `flake` and `point_target`, each point is rerun (at least `reruns` times) until its
        verdict is that likely (kregress.bisect.confidence); without, `reruns` runs and a majority.
        With `compile_first` (a compile target: the device's architecture), the code a point's
        device checks launch is compiled first, and a point launching the same code as one judged
        already takes its verdict instead of running on the device."""
        self.run, self.regress, self.reruns = run, regress, reruns
        self.builder, self.memo, self.console = builder, memo, console
        self.flake, self.point_target, self.max_runs = flake, point_target, max_runs
        self.compile_first = compile_first
        self.points: dict[str, Point] = {}

    def launch_code_at(self, spec: str, environment: Environment) -> dict | None:
        """The code the point's device checks launch, compiled first (memoized like a judgement);
        None when it cannot be known."""
        if self.compile_first is None:
            return None
        code_run = replace(self.run, compile_first=self.compile_first)
        try:
            return self.memo.observations(code_run, spec, 1)[0].launch_code()
        except InfrastructureError:
            return None

    def same_code(self, code: dict | None) -> Point | None:
        """A point judged on the device whose checks launch exactly `code`."""
        if code is None:
            return None
        judged = (p for p in self.points.values() if not p.same_code_as and p.verdict != PointVerdict.SKIP)
        return next((p for p in judged if p.launch_code == code), None)

    def use_confidence(self, confidence: float, candidates: int) -> None:
        """Aim the per-point reruns at `confidence` for a search over `candidates` points."""
        self.point_target = per_point_target(confidence, expected_points(candidates))

    def known_toolchain(self, candidate: Candidate) -> str | None:
        """The candidate's toolchain if it exists already (a release, or a commit built during the
        search); never builds."""
        if candidate.toolchain:
            return candidate.toolchain
        return self.builder.built(candidate.commit) if self.builder and candidate.commit else None

    def cheap(self, candidate: Candidate) -> bool:
        spec = self.known_toolchain(candidate)
        return bool(spec) and environment_ready(spec)

    def environment(
        self, candidate: Candidate, cancel: threading.Event | None = None
    ) -> tuple[str, Environment]:
        """The candidate's toolchain spec and environment, built if need be (BuildFailed or
        ToolchainError when it cannot be; BuildCancelled when `cancel` is set first)."""
        if candidate.toolchain:
            spec = candidate.toolchain
        else:
            assert self.builder is not None and candidate.commit is not None
            spec = self.builder.build(candidate.commit, cancel)
        return spec, EnvironmentCache().get(Toolchain.parse(spec), cancel=cancel)

    def borrow(self, candidate: Candidate, point: Point) -> None:
        """Take a verdict already known for the same code (a release, for its tag's commit)."""
        self.points[candidate.key] = Point(
            candidate, point.verdict, point.votes, point.observations, borrowed_from=point.candidate.label
        )

    def judge(self, candidate: Candidate) -> Point:
        try:
            spec, environment = self.environment(candidate)  # built here: a failure is a skip
        except (BuildFailed, ToolchainError) as exc:
            note = f"cannot be built: {str(exc).strip()[-MAX_EXCERPT:]}"
            point = Point(candidate, PointVerdict.SKIP, note=note)
            self.report_point(point)
            return point
        code = self.launch_code_at(spec, environment)
        twin = self.same_code(code)
        if twin is not None:
            point = Point(
                candidate, twin.verdict, twin.votes, twin.observations, probability=twin.probability,
                launch_code=code, same_code_as=twin.candidate.label,
            )  # fmt: skip
            self.report_point(point)
            return point
        whole_case = self.run.expectation is None
        if self.flake is None or self.point_target is None:
            observations = self.memo.observations(self.run, spec, self.reruns, environment)
            votes = [observation_verdict(o, self.regress, whole_case) for o in observations]
            point = Point(candidate, majority(votes), votes, observations, launch_code=code)
            self.report_point(point)
            return point
        observations: list[Observation] = []
        votes = []

        def judge_once() -> PointVerdict:
            # the remembered observations first, in order, then new runs (remembered too)
            found = self.memo.observations(self.run, spec, len(observations) + 1, environment)
            observations.append(found[len(observations)])
            votes.append(observation_verdict(observations[-1], self.regress, whole_case))
            return votes[-1]

        verdict, _, probability = decide(
            judge_once, self.flake, self.point_target, min_runs=self.reruns, max_runs=self.max_runs
        )
        point = Point(candidate, verdict, votes, observations, probability=probability, launch_code=code)
        self.report_point(point)
        return point

    def judge_run(self, candidate: Candidate) -> PointVerdict:
        """One more run of the candidate (the memo's next observation), added to its point's votes:
        what the posterior search asks for, one run at a time. SKIP when it cannot be built."""
        known = self.points.get(candidate.key)
        if known is not None and known.note:  # it could not be built: asking again changes nothing
            return PointVerdict.SKIP
        try:
            spec, environment = self.environment(candidate)
        except (BuildFailed, ToolchainError) as exc:
            note = f"cannot be built: {str(exc).strip()[-MAX_EXCERPT:]}"
            self.report_point(Point(candidate, PointVerdict.SKIP, note=note))
            return PointVerdict.SKIP
        code = known.launch_code if known else self.launch_code_at(spec, environment)
        twin = self.same_code(code)
        if twin is not None and twin.candidate.key != candidate.key:
            # both launch the same code: a run of it is a run of the twin, and counts for both
            verdict = self.judge_run(twin.candidate)
            judged = self.points[twin.candidate.key]
            self.report_point(
                Point(candidate, judged.verdict, judged.votes, judged.observations, launch_code=code,
                      same_code_as=twin.candidate.label)
            )  # fmt: skip
            return verdict
        votes = list(known.votes) if known else []
        observations = self.memo.observations(self.run, spec, len(votes) + 1, environment)
        verdict = observation_verdict(observations[-1], self.regress, self.run.expectation is None)
        votes.append(verdict)
        self.report_point(Point(candidate, majority(votes), votes, observations, launch_code=code))
        return verdict

    def judge_again(self, candidate: Candidate) -> Point:
        """One more run of an already judged point, never read from the memo (ClusterFuzz's check
        below a boundary): the new run's verdict, remembered after the others."""
        spec, environment = self.environment(candidate)  # built, if it was not
        # one more than the memo holds, not than this search used: an earlier search may have
        # remembered more runs of this point, and reading one back is not judging it again
        count = len(self.memo.get(self.run, spec)) + 1
        observation = self.memo.observations(self.run, spec, count, environment)[-1]
        verdict = observation_verdict(observation, self.regress, self.run.expectation is None)
        return Point(candidate, verdict, [verdict], [observation])

    def report_point(self, point: Point) -> None:
        self.points[point.candidate.key] = point
        colour = {"good": "green", "bad": "red", "skip": "yellow"}[point.verdict.value]
        self.console.print(
            f"  {point.candidate.label}: [{colour}]{point.verdict.value}[/]{point.shown_votes()}  "
            f"{point.describe()[:200]}"
        )


class Speculator:
    """Builds the environments of the points the search may judge next while one is judged
    (mozregression fetches both possible next builds): `width` builds at most at a time, and a
    build whose point can no longer come next is cancelled."""

    def __init__(self, bisection: Bisection, width: int = 2) -> None:
        self.bisection = bisection
        self.pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix="kregress-ahead")
        self.running: dict[str, tuple[Future[None], threading.Event]] = {}
        self.started = self.cancelled = 0

    def prepare(self, now: list[Candidate], upcoming: list[Candidate]) -> None:
        wanted = {c.key for c in [*now, *upcoming]}
        for key, (future, cancel) in list(self.running.items()):
            if future.done():
                del self.running[key]
            elif key not in wanted:
                cancel.set()
                future.cancel()
                self.cancelled += 1
                del self.running[key]
        for candidate in upcoming:
            if candidate.key in self.running or self.bisection.cheap(candidate):
                continue
            builder = self.bisection.builder
            if builder and candidate.commit and builder.failed(candidate.commit):
                continue
            cancel = threading.Event()
            self.running[candidate.key] = (self.pool.submit(self.build, candidate, cancel), cancel)
            self.started += 1

    def build(self, candidate: Candidate, cancel: threading.Event) -> None:
        self.bisection.console.print(f"  [dim]building {candidate.label} ahead[/]")
        # Cancelled, or it cannot be built: the point is judged later as a skip, with the reason.
        with contextlib.suppress(BuildFailed, ToolchainError):
            self.bisection.environment(candidate, cancel)

    def close(self) -> None:
        for _, cancel in self.running.values():
            cancel.set()
        self.pool.shutdown(wait=True, cancel_futures=True)


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
    if regress == RegressOn.PASS:  # a fix search: --good is the broken end, --bad the fixed one
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


def search_between(
    bisection: Bisection, candidates: list[Candidate], jobs: int, ahead: Speculator | None = None
) -> SearchResult:
    def prepare(now: list[int], upcoming: list[int]) -> None:
        if ahead is not None:
            ahead.prepare([candidates[i] for i in now], [candidates[i] for i in upcoming])

    return search(
        len(candidates),
        lambda points: judge_round(bisection, candidates, points),
        jobs=jobs,
        cheap=None if jobs > 1 else (lambda i: bisection.cheap(candidates[i])),
        prepare=prepare,
    )


def posterior_between(
    bisection: Bisection, candidates: list[Candidate], noise: NoiseModel, confidence: float, jobs: int,
    budget: int,
) -> tuple[SearchResult, PosteriorResult]:  # fmt: skip
    """The inner candidates searched by the posterior (kregress.bisect.posterior), the ends verified
    already; the answer in the search core's terms: a range where it cannot be sure."""
    from kregress.bisect.posterior import posterior_search

    def judge(points: list[int]) -> dict[int, PointVerdict]:
        with ThreadPoolExecutor(max_workers=len(points)) as pool:
            verdicts = list(pool.map(lambda i: bisection.judge_run(candidates[i]), points))
        return dict(zip(points, verdicts, strict=True))

    count = len(candidates)
    prior = [0.0] + [1.0] * (count - 1) + [0.0]  # both ends verified
    found = posterior_search(
        count, judge, noise, confidence=confidence, budget=budget, jobs=jobs, prior=prior
    )
    tested = {i: bisection.points[candidates[i].key].verdict for i in found.runs}
    if found.culprit is not None:
        result = SearchResult(found.culprit - 1, found.culprit, tested=tested, rounds=found.rounds)
    else:
        low, high = found.range
        result = SearchResult(max(low - 1, 0), high, list(range(max(low, 1), high + 1)), tested, found.rounds)
    return result, found


def confirm_borrowed_ends(
    bisection: Bisection, candidates: list[Candidate], result: SearchResult
) -> list[str]:
    """When the boundary falls at an end whose verdict was borrowed from its release, judge that
    commit built from source: a release wheel and a build of its tag may disagree, and the search
    must then not name the commit next to it."""
    problems = []
    for index, expected in ((result.first_bad, PointVerdict.BAD), (result.last_good, PointVerdict.GOOD)):
        if index not in (0, len(candidates) - 1):
            continue
        candidate = candidates[index]
        borrowed = bisection.points.get(candidate.key)
        if borrowed is None or not borrowed.borrowed_from:
            continue
        bisection.console.print(f"confirming {candidate.label} from source: its release decided the boundary")
        point = bisection.judge(candidate)
        if point.verdict != expected:
            problems.append(
                f"built from source, {candidate.label} is {point.verdict.value}, while its release "
                f"{borrowed.borrowed_from} is {expected.value}: the release and a build of its tag disagree"
            )
    return problems
