"""The bisect search core against a brute-force answer, with and without skips."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from kregress.bisect.search import Verdict, first_bad, plain_bound, rounds_bound, search


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

    def judge(point: int) -> Verdict:
        calls.append(point)
        if point in skips:
            return Verdict.SKIP
        return Verdict.BAD if point >= boundary else Verdict.GOOD

    result = first_bad(list(range(n + 2)), judge)
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
    def judge_points(points: list[int]) -> dict[int, Verdict]:
        calls.extend(points)
        return {
            p: Verdict.SKIP if p in skips else (Verdict.BAD if p >= boundary else Verdict.GOOD)
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


@given(histories(), st.dictionaries(st.integers(1, 200), st.sampled_from(list(Verdict))))
def test_known_verdicts_are_free_and_never_judged_again(history, memo) -> None:
    n, boundary, skips = history
    known = {i: (Verdict.SKIP if i in skips else (Verdict.BAD if i >= boundary else Verdict.GOOD))
             for i in memo if 1 <= i <= n}  # fmt: skip
    calls: list[int] = []
    result = search(n + 2, monotone(boundary, skips, calls), known=known)
    assert not set(calls) & set(known)
    assert result.first_bad == boundary or boundary in result.ambiguous


def test_a_good_point_after_a_bad_one_is_reported_not_hidden() -> None:
    """Release 3 went bad, 5 came back, 7 went bad for good: whichever way the search learns of a
    bad point before a good one (a memo of an earlier bisection, or one parallel round), it says so."""
    history = {1: Verdict.GOOD, 2: Verdict.GOOD, 3: Verdict.BAD, 4: Verdict.BAD, 5: Verdict.GOOD,
               6: Verdict.GOOD, 7: Verdict.BAD, 8: Verdict.BAD}  # fmt: skip

    def judge(points: list[int]) -> dict[int, Verdict]:
        return {p: history[p] for p in points}

    remembered = search(10, judge, known={3: Verdict.BAD, 5: Verdict.GOOD})
    assert (remembered.first_bad, remembered.contradictions, remembered.exact) == (7, [3], False)
    parallel = search(10, judge, jobs=3)
    assert sorted(parallel.tested)[:3] == [2, 4, 6]
    assert (parallel.first_bad, parallel.contradictions, parallel.exact) == (7, [4], False)
