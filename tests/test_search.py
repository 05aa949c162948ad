"""The bisect search core against a brute-force answer, with and without skips."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from kregress.bisect.search import Verdict, first_bad


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
