"""The bisect search core: pure functions over candidate indices and a good/bad/skip predicate.

No git, no pip, no processes here: everything with I/O lives in the other modules of this package,
so the search itself can be tested exhaustively. Index 0 is a verified good candidate and the
last index a verified bad one; the caller checks both before searching.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kregress.judging_service import PointVerdict


@dataclass
class SearchResult:
    """`first_bad` is exact when `ambiguous` is empty; otherwise the culprit is one of `ambiguous`.

    `contradictions` lists points whose verdicts disagree with the boundary (a good point after a
    bad one): history was not monotone there, so no single culprit should be claimed."""

    last_good: int
    first_bad: int
    ambiguous: list[int] = field(default_factory=list)
    tested: dict[int, PointVerdict] = field(default_factory=dict)
    rounds: int = 0
    contradictions: list[int] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return len(self.tested)

    @property
    def exact(self) -> bool:
        return not self.ambiguous and not self.contradictions


def plain_bound(between: int) -> int:
    """Predicate calls a plain bisection needs for `between` candidates strictly inside the range."""
    return math.ceil(math.log2(between + 1))


def rounds_bound(between: int, jobs: int) -> int:
    """Rounds of a (jobs+1)-ary search over `between` inner candidates: ceil(log_{K+1}(N+1))."""
    rounds, reach = 0, 1
    while reach < between + 1:
        reach *= jobs + 1
        rounds += 1
    return rounds


def search(
    count: int,
    judge_points: Callable[[list[int]], Mapping[int, PointVerdict]],
    *,
    jobs: int = 1,
    known: Mapping[int, PointVerdict] | None = None,
    cheap: Callable[[int], bool] | None = None,
    prepare: Callable[[list[int], list[int]], None] | None = None,
) -> SearchResult:
    """Find the first bad index in range(count), index 0 good and index count-1 bad.

    `judge_points` judges one round of points (len == jobs, or fewer near the end) and may do so in
    parallel. `known` verdicts (a memo of earlier bisections) are used for free and never judged
    again. With `cheap` (an environment already built for that index), a single-point search may
    prefer a cheap point near the middle, spending at most two calls over the plain bound.
    `prepare(now, upcoming)` is told, before each single-point round, the point about to be judged
    and the points the next round may judge (one per verdict), so their environments can be built
    while this one is judged; it changes nothing in the search.
    """
    if count < 2:
        raise ValueError("need at least a good and a bad candidate")
    if jobs < 1:
        raise ValueError("jobs must be at least 1")
    seen: dict[int, PointVerdict] = {i: v for i, v in (known or {}).items() if 0 < i < count - 1}
    result = SearchResult(0, count - 1)
    while True:
        good, bad = boundary(seen, count)
        open_points = [i for i in range(good + 1, bad) if i not in seen]
        if not open_points:
            break
        points = [one_point(good, bad, open_points, cheap)] if jobs == 1 else spread(open_points, jobs)
        if prepare is not None and jobs == 1:
            prepare(points, upcoming(seen, count, points[0], cheap))
        verdicts = judge_points(points)
        for point in points:
            result.tested[point] = seen[point] = verdicts[point]
        result.rounds += 1
    result.last_good, result.first_bad = boundary(seen, count)
    skipped = [i for i in range(result.last_good + 1, result.first_bad) if seen.get(i) == PointVerdict.SKIP]
    result.ambiguous = [*skipped, result.first_bad] if skipped else []
    result.contradictions = sorted(
        i
        for i, v in seen.items()
        if (v == PointVerdict.GOOD and i > result.first_bad)
        or (v == PointVerdict.BAD and i < result.last_good)
    )
    return result


def upcoming(
    seen: Mapping[int, PointVerdict], count: int, point: int, cheap: Callable[[int], bool] | None = None
) -> list[int]:
    """The points a single-point search judges next if `point` turns out good, and if it turns out
    bad (a skip leaves the range as it is, so its next point is one of these or the nearest open
    one): mozregression's two possible next builds."""
    found = []
    for verdict in (PointVerdict.GOOD, PointVerdict.BAD):
        after = {**seen, point: verdict}
        good, bad = boundary(after, count)
        open_points = [i for i in range(good + 1, bad) if i not in after]
        if open_points:
            found.append(one_point(good, bad, open_points, cheap))
    return list(dict.fromkeys(found))


def boundary(seen: Mapping[int, PointVerdict], count: int) -> tuple[int, int]:
    """The last good point, and the first bad point after it: a later good point moves the search
    on, and any bad point left behind shows up as a contradiction."""
    good = max([0, *(i for i, v in seen.items() if v == PointVerdict.GOOD)])
    bad = min([count - 1, *(i for i, v in seen.items() if v == PointVerdict.BAD and i > good)])
    return good, bad


def one_point(good: int, bad: int, open_points: list[int], cheap: Callable[[int], bool] | None) -> int:
    """The plain midpoint, or the cheap point nearest to it.

    No budget is needed: a cheap point is the nearest one to the middle, so any cheap point left
    inside the new range lies beyond it, on the far side of the middle; property tests over
    hypothesis' histories (tests/test_search.py) hold the whole search to the plain bound + 2."""
    middle = (good + bad) // 2

    def nearness(i: int) -> tuple[int, int]:
        return abs(i - middle), i

    plain = min(open_points, key=nearness)
    if cheap is None or cheap(plain):
        return plain
    return min((i for i in open_points if cheap(i)), key=nearness, default=plain)


def spread(open_points: list[int], jobs: int) -> list[int]:
    """K points cutting the open points into K+1 near-equal parts."""
    if len(open_points) <= jobs:
        return list(open_points)
    total = len(open_points)
    return [open_points[(part * (total + 1)) // (jobs + 1) - 1] for part in range(1, jobs + 1)]
