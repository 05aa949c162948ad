"""The bisect search core against a brute-force answer, with and without skips."""

from __future__ import annotations

import itertools
import math

from hypothesis import given
from hypothesis import strategies as st

from kregress.bisect.search import PointVerdict, plain_bound, rounds_bound, search


@st.composite
def histories(draw: st.DrawFn) -> tuple[int, int, set[int]]:
    """A good endpoint at 0, a bad one at n+1, the boundary somewhere between, some unbuildable points."""
    n = draw(st.integers(0, 200))
    boundary = draw(st.integers(1, n + 1))
    skips = draw(st.sets(st.integers(1, n), max_size=n // 3)) if n else set()
    return n, boundary, skips


@given(histories())
def test_finds_the_boundary_and_never_judges_twice(history: tuple[int, int, set[int]]) -> None:
    n, boundary, skips = history
    calls: list[int] = []

    def judge(point: int) -> PointVerdict:
        calls.append(point)
        if point in skips:
            return PointVerdict.SKIP
        return PointVerdict.BAD if point >= boundary else PointVerdict.GOOD

    result = search(n + 2, lambda points: {p: judge(p) for p in points})
    assert len(calls) == len(set(calls))
    assert 0 not in calls and n + 1 not in calls
    if result.ambiguous:
        assert boundary in result.ambiguous
        assert all(p in skips for p in result.ambiguous[:-1])
    else:
        assert result.first_bad == boundary
    if not skips:
        assert len(calls) <= math.ceil(math.log2(n + 1)) if n else not calls


def monotone(boundary: int, skips: set[int], calls: list[int]):
    def judge_points(points: list[int]) -> dict[int, PointVerdict]:
        calls.extend(points)
        return {
            p: PointVerdict.SKIP if p in skips else (PointVerdict.BAD if p >= boundary else PointVerdict.GOOD)
            for p in points
        }

    return judge_points


@given(histories(), st.integers(1, 7))
def test_k_points_per_round_need_log_k_plus_1_rounds(history: tuple[int, int, set[int]], jobs: int) -> None:
    n, boundary, skips = history
    calls: list[int] = []
    result = search(n + 2, monotone(boundary, skips, calls), jobs=jobs)
    assert len(calls) == len(set(calls))
    assert result.first_bad == boundary or boundary in result.ambiguous
    if not skips:
        assert result.first_bad == boundary and result.exact
        assert result.rounds <= rounds_bound(n, jobs)
        assert result.rounds == 0 or all(c not in (0, n + 1) for c in calls)


@given(histories(), st.sets(st.integers(1, 200)))
def test_cache_aware_midpoints_cost_at_most_two_more_calls(history, built: set[int]) -> None:
    n, boundary, _ = history
    calls: list[int] = []
    result = search(n + 2, monotone(boundary, set(), calls), cheap=lambda i: i in built)
    assert result.first_bad == boundary and result.exact
    assert len(calls) <= plain_bound(n) + 2
    if not built & set(range(1, n + 1)):  # nothing cheap: exactly the plain search
        plain: list[int] = []
        search(n + 2, monotone(boundary, set(), plain))
        assert calls == plain


def test_cache_aware_midpoint_reuses_a_built_neighbour() -> None:
    calls: list[int] = []
    search(102, monotone(70, set(), calls), cheap=lambda i: i in {48, 75})
    assert calls[0] == 48  # beside the plain midpoint 50, already built


@given(histories(), st.dictionaries(st.integers(1, 200), st.sampled_from(list(PointVerdict))))
def test_known_verdicts_are_free_and_never_judged_again(history, memo) -> None:
    n, boundary, skips = history
    good, bad, skip = PointVerdict.GOOD, PointVerdict.BAD, PointVerdict.SKIP
    known = {i: (skip if i in skips else (bad if i >= boundary else good)) for i in memo if 1 <= i <= n}
    calls: list[int] = []
    result = search(n + 2, monotone(boundary, skips, calls), known=known)
    assert not set(calls) & set(known)
    assert result.first_bad == boundary or boundary in result.ambiguous


def test_a_good_point_after_a_bad_one_is_reported_not_hidden() -> None:
    """Release 3 went bad, 5 came back, 7 went bad for good: whichever way the search learns of a
    bad point before a good one (a memo of an earlier bisection, or one parallel round), it says so."""
    good, bad = PointVerdict.GOOD, PointVerdict.BAD
    history = {1: good, 2: good, 3: bad, 4: bad, 5: good, 6: good, 7: bad, 8: bad}

    def judge(points: list[int]) -> dict[int, PointVerdict]:
        return {p: history[p] for p in points}

    remembered = search(10, judge, known={3: PointVerdict.BAD, 5: PointVerdict.GOOD})
    assert (remembered.first_bad, remembered.contradictions, remembered.exact) == (7, [3], False)
    parallel = search(10, judge, jobs=3)
    assert sorted(parallel.tested)[:3] == [2, 4, 6]
    assert (parallel.first_bad, parallel.contradictions, parallel.exact) == (7, [4], False)


@given(histories())
def test_every_next_point_was_announced_while_the_previous_one_was_judged(
    history: tuple[int, int, set[int]],
) -> None:
    """What speculation builds ahead is what the search then judges: after a good or bad verdict
    the next point is one of the two announced (after a skip the range is unchanged, so it may
    be another)."""
    n, boundary, skips = history
    announced: list[tuple[list[int], list[int]]] = []
    verdicts: dict[int, PointVerdict] = {}

    def judge(points: list[int]) -> dict[int, PointVerdict]:
        for p in points:
            verdicts[p] = (
                PointVerdict.SKIP if p in skips else PointVerdict.BAD if p >= boundary else PointVerdict.GOOD
            )
        return {p: verdicts[p] for p in points}

    search(n + 2, judge, prepare=lambda now, upcoming: announced.append((now, upcoming)))
    for (now, upcoming), (following, _) in itertools.pairwise(announced):
        assert len(upcoming) <= 2
        if verdicts[now[0]] != PointVerdict.SKIP:
            assert following[0] in upcoming
