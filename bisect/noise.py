"""An item's noise model from its history: how often it FAILed on code that was good, and how often
it PASSed on code that was bad, each counted on its own (most flakes are one-sided: a numerics or
perf check fails now and then on good code, a broken compiler rarely passes).

Which code was good is read from the runs themselves: under one toolchain (the versions an item ran
with, a head's commit among them) the majority of its outcomes is the truth, and so is the majority
of one run's attempts; an outcome against it is a lie on that side. An UNSTABLE verdict (timings
that cannot tell) counts as a false FAIL of good code."""

from __future__ import annotations

import json
from pathlib import Path

from kregress.bisect.posterior import NoiseModel
from kregress.history import connect
from kregress.judge import Outcome
from kregress.judging_service import PointVerdict, RegressOn, holds, item_verdict


def side_counts(outcomes: list[str]) -> tuple[int, int, int, int]:
    """(false FAILs, runs on good code, false PASSes, runs on bad code) of outcomes of one truth,
    each outcome read by the one verdict rule (an XFAIL fails, as a search reads it)."""
    told = (PointVerdict.GOOD, PointVerdict.BAD)
    judged = [
        o for o in outcomes if o == Outcome.UNSTABLE.value or item_verdict(o, None, RegressOn.FAIL) in told
    ]
    if not judged:
        return 0, 0, 0, 0
    failing = sum(not holds(o) for o in judged)  # a failure, or UNSTABLE
    holding = len(judged) - failing
    if holding >= failing:  # good code: FAILs and UNSTABLE lied
        return failing, len(judged), 0, 0
    return 0, 0, holding, len(judged)


def noise_from_history(
    path: Path, case: str, expectation: str | None, target: str | None
) -> NoiseModel | None:
    """The item's noise model from the history at `path`; None where it holds no run of the item."""
    if not path.exists():
        return None
    query = "SELECT outcome, attempts, toolchain, expectation, target FROM items WHERE case_id = ?"
    values: list[str] = [case]
    for column, value in (("expectation", expectation), ("target", target)):
        if value:
            query += f" AND {column} = ?"
            values.append(value)
    with connect(path) as connection:
        rows = connection.execute(query, values).fetchall()
    if not rows:
        return None
    totals = [0, 0, 0, 0]
    nights: dict[tuple[str, str, str], list[str]] = {}
    for outcome, attempts, toolchain, item_expectation, item_target in rows:
        tried = [str(a) for a in (json.loads(attempts) if attempts else None) or [outcome]]
        if len(tried) > 1:  # one run's attempts: their majority is that run's truth
            totals = [a + b for a, b in zip(totals, side_counts(tried), strict=True)]
        nights.setdefault((item_expectation, item_target, toolchain or ""), []).append(str(outcome))
    for outcomes in nights.values():  # nights under one toolchain: their majority is the truth
        totals = [a + b for a, b in zip(totals, side_counts(outcomes), strict=True)]
    false_fails, good_runs, false_passes, bad_runs = totals
    return NoiseModel.from_counts(false_fails, good_runs, false_passes, bad_runs)
