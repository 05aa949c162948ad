"""The bisect search core: a pure function over ordered candidates and a good/bad/skip predicate.

No git, no pip, no processes here: everything with I/O lives in the other modules of this package,
so the search itself can be tested exhaustively.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, TypeVar

Candidate = TypeVar("Candidate")


class Verdict(str, Enum):
    GOOD = "good"
    BAD = "bad"
    SKIP = "skip"  # could not be judged (failed to build): like `git bisect run` exit 125


@dataclass
class SearchResult(Generic[Candidate]):
    """`first_bad` is exact when `ambiguous` is empty; otherwise the culprit is one of `ambiguous`."""

    last_good: int
    first_bad: int
    ambiguous: list[int] = field(default_factory=list)
    tested: dict[int, Verdict] = field(default_factory=dict)


def first_bad(
    candidates: Sequence[Candidate], judge: Callable[[Candidate], Verdict]
) -> SearchResult[Candidate]:
    """Find the first bad candidate, given candidates[0] is good and candidates[-1] is bad.

    Both endpoints are taken as verified by the caller. Each candidate is judged at most once; with
    no skips, N candidates strictly between the endpoints cost at most ceil(log2(N+1)) calls. A
    skipped midpoint is stepped around (nearest untested point to the middle of the open range);
    when only skipped points separate good from bad, the answer is the range of them.
    """
    if len(candidates) < 2:
        raise ValueError("need at least a good and a bad candidate")
    tested: dict[int, Verdict] = {}
    good, bad = 0, len(candidates) - 1
    while True:
        open_points = [i for i in range(good + 1, bad) if tested.get(i) != Verdict.SKIP]
        if not open_points:
            break
        middle = (good + bad) // 2
        point = min(open_points, key=lambda i: (abs(i - middle), i))
        verdict = judge(candidates[point])
        tested[point] = verdict
        if verdict == Verdict.GOOD:
            good = point
        elif verdict == Verdict.BAD:
            bad = point
    skipped = [i for i in range(good + 1, bad) if tested.get(i) == Verdict.SKIP]
    return SearchResult(good, bad, [*skipped, bad] if skipped else [], tested)
