"""How sure a bisect is of its culprit, and how many runs each point needs to get there.

A judgement is modelled as the point's true verdict, flipped with the item's flake rate `f`
(estimated from the history and from the disagreements this search sees). After `g` good and `b`
bad votes, the probability that the point is good is (1-f)^g f^b / ((1-f)^g f^b + f^g (1-f)^b)
(both verdicts equally likely before any vote). A point is rerun until its more likely verdict
reaches the per-point share of `--confidence`, or until the cap: with f = 0 one run is certain, so
a deterministic compile costs nothing extra. The culprit is right when every point that placed
the boundary was judged right: the product of their probabilities is the stated confidence.
(Google's flake-aware culprit finder works this way; plain bisection is the f = 0 case.)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kregress.bisect.search import PointVerdict

DEFAULT_CONFIDENCE = 0.99
MAX_RUNS = 101  # per point: past this a point stays undecided (a skip), never a guess
UNKNOWN_FLAKE = 0.02  # an item with no history, judged on a device: assume it may flake a little
GUESS_WEIGHT = 10  # a guessed rate counts as this many runs, so a few disagreements outweigh it
FLAKE_CEILING = 0.45  # an estimate near 1/2 would make every vote worthless
# A flake rate is taken this many standard errors above its estimate (a one-sided 90 % bound): at
# the estimate itself the bench's confidence search fell below the 99 % it stated at flake 0.3.
UPPER_Z = 1.28


def point_probability(good: int, bad: int, flake: float) -> float:
    """The probability that the majority of these votes is the point's true verdict."""
    if good == bad:
        return 0.5
    if flake <= 0:
        return 1.0
    flake = min(flake, FLAKE_CEILING)
    lead = abs(good - bad)  # only the difference matters: (f/(1-f))^lead is the odds against
    odds_against = (flake / (1 - flake)) ** lead
    return 1 / (1 + odds_against)


def per_point_target(confidence: float, points: int) -> float:
    """What each of `points` judged points must reach for their product to reach `confidence`, with
    half the doubt kept back (kregress.bisect.posterior.stopping_point): a search judges more
    points than it expects when some skip or disagree, and the bench fell below the confidence it
    stated at flake 0.3 (98.99 %) without it."""
    return (1 - (1 - confidence) / 2) ** (1 / max(points, 1))


def expected_points(count: int) -> int:
    """Points a search over `count` candidates judges: both ends and the bisection between them."""
    return 2 + math.ceil(math.log2(max(count - 1, 1)))


@dataclass
class Votes:
    good: int = 0
    bad: int = 0

    def add(self, verdict: PointVerdict) -> None:
        if verdict == PointVerdict.GOOD:
            self.good += 1
        elif verdict == PointVerdict.BAD:
            self.bad += 1

    @property
    def runs(self) -> int:
        return self.good + self.bad

    def verdict(self) -> PointVerdict:
        if self.good == self.bad:
            return PointVerdict.SKIP
        return PointVerdict.GOOD if self.good > self.bad else PointVerdict.BAD


@dataclass
class FlakeEstimate:
    """The flake rate: a prior (history) updated by the minority votes this search has seen."""

    prior_rate: float
    prior_runs: int  # how many runs the prior stands for
    guessed: bool = False  # no history: the prior is a guess (GUESS_WEIGHT runs' worth)
    minority: int = 0
    runs: int = 0

    @property
    def rate(self) -> float:
        """(prior disagreements + seen minority votes) / all runs, the prior counted as its runs."""
        return self.rate_with(Votes())

    def rate_with(self, votes: Votes) -> float:
        """The rate counting also a point's votes so far (a disagreement there raises it at once),
        taken at the upper end of what the runs behind it allow (UPPER_Z standard errors above the
        share of disagreements): a rate read from a few dozen runs is as often too low as too
        high, and one too low states a confidence the search does not reach."""
        total = self.prior_runs + self.runs + votes.runs
        if total == 0:
            return self.prior_rate
        share = (self.prior_rate * self.prior_runs + self.minority + min(votes.good, votes.bad)) / total
        if share <= 0:
            return share
        return min(share + UPPER_Z * math.sqrt(share * (1 - share) / total), FLAKE_CEILING)

    def learn(self, votes: Votes) -> None:
        self.minority += min(votes.good, votes.bad)
        self.runs += votes.runs


def decide(
    judge_once: Callable[[], PointVerdict],
    flake: FlakeEstimate,
    target: float,
    min_runs: int = 1,
    max_runs: int = MAX_RUNS,
) -> tuple[PointVerdict, Votes, float]:
    """Judge a point until its more likely verdict reaches `target` (at least `min_runs`, at most
    `max_runs` times): the verdict (SKIP when undecided or unjudgeable), the votes, and the
    probability that the verdict is right. The estimate learns from the votes."""
    votes = Votes()
    while votes.runs < max_runs:
        verdict = judge_once()
        if verdict == PointVerdict.SKIP:  # could not be judged (a build failure): not a vote
            break
        votes.add(verdict)
        sure = point_probability(votes.good, votes.bad, flake.rate_with(votes)) >= target
        if sure and votes.runs >= min_runs:
            break
    flake.learn(votes)
    probability = point_probability(votes.good, votes.bad, flake.rate)
    if votes.runs == 0 or (votes.runs >= max_runs and probability < target):
        # undecided within the budget: a skip (the search reports a range), never a likely-wrong verdict
        return PointVerdict.SKIP, votes, probability
    return votes.verdict(), votes, probability


def combined(probabilities: Sequence[float]) -> float:
    """The probability that every one of these independent judgements is right."""
    return math.prod(probabilities)


@dataclass
class ConfidenceReport:
    """What a report and a comment say: the probability, the flake rate it assumed, the runs."""

    probability: float
    flake_rate: float
    runs: int
    points: int
    history_runs: int
    rechecked: list[str] = field(default_factory=list)  # earlier good points judged again

    def sentence(self) -> str:
        basis = (
            f"a flake rate of {self.flake_rate:.3f} from {self.history_runs} earlier runs and this search"
            if self.history_runs
            else f"a flake rate of {self.flake_rate:.3f} (no history: assumed, then updated by this search)"
        )
        again = f"; judged again below the boundary: {', '.join(self.rechecked)}" if self.rechecked else ""
        return (
            f"Confidence that this is the culprit: {self.probability:.1%} ({basis}; "
            f"{self.runs} runs over {self.points} points{again})."
        )
