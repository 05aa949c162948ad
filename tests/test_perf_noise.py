"""The perf noise model: the median ratio's order-statistic interval decides PASS, FAIL or UNSTABLE."""

from __future__ import annotations

import math

import pytest

from kregress.judge import Outcome, Verdict
from kregress.kinds.perf import Perf
from kregress.timing import clear_of, interleaved, median_interval, timed_rounds


def perf(min_ratio: float = 0.8, max_spread: float = 0.1) -> Perf:
    fields = {"subject": "fast", "baseline": "eager", "min_ratio": min_ratio, "max_spread": max_spread}
    return Perf.model_validate({"kind": "perf", **fields})


def judge_perf(expectation: Perf, timings: dict) -> Verdict:
    return expectation.judge_timings(timings)


def timed(ratios: list[float]) -> dict:
    """What the child writes for rounds whose baseline takes 1 ms and whose ratios are given."""
    return {
        "rounds": len(ratios),
        "ratios": ratios,
        "subject_ms": [1.0 / r for r in ratios],
        "baseline_ms": [1.0] * len(ratios),
        "names": {"subject": "fast", "baseline": "eager"},
        "flops": {"subject": 2e9, "baseline": None},
        "method": {"subject": "thread CPU time", "baseline": "thread CPU time"},
    }


def test_interval_ranks_come_from_the_binomial() -> None:
    values = [float(v) for v in range(1, 11)]  # n = 10: ranks 2 and 9 cover the median 97.9 %
    interval = median_interval(values)
    assert (interval.low, interval.median, interval.high) == (2.0, 5.5, 9.0)
    assert interval.confidence == pytest.approx(1 - 2 * 11 / 1024)
    small = median_interval([3.0, 1.0, 2.0])  # no rank reaches 95 % with 3 values: min and max
    assert (small.low, small.high) == (1.0, 3.0)
    assert small.confidence == pytest.approx(0.75)
    one = median_interval([2.0])
    assert (one.low, one.median, one.high, one.confidence, one.spread) == (2.0, 2.0, 2.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        median_interval([])


def test_interval_above_the_floor_passes_and_below_fails() -> None:
    held = judge_perf(perf(), timed([0.95, 0.97, 0.96, 0.98, 0.94, 0.97, 0.96, 0.95, 0.99, 0.96]))
    assert held.outcome == Outcome.PASS, held.message
    assert held.measured["ratio_low"] >= 0.8
    assert held.measured["subject_tflops"] == pytest.approx(2e9 / (1 / 0.965) / 1e9, rel=0.02)
    slow = judge_perf(perf(), timed([0.70, 0.72, 0.71, 0.69, 0.73, 0.70, 0.71, 0.72, 0.70, 0.71]))
    assert slow.outcome == Outcome.FAIL
    assert slow.failure_kind == "TOO_SLOW"
    assert slow.message.startswith("TOO_SLOW") and "[0.700, 0.720]" in slow.message
    assert slow.limit == {"min_ratio": 0.8, "max_spread": 0.1}


def test_an_interval_across_the_floor_is_unstable_not_a_verdict() -> None:
    straddling = judge_perf(perf(), timed([0.78, 0.79, 0.80, 0.81, 0.82, 0.79, 0.80, 0.81, 0.78, 0.82]))
    assert straddling.outcome == Outcome.UNSTABLE
    assert straddling.failure_kind is None
    assert "straddles 0.8" in straddling.message


def test_a_wide_interval_is_unstable_even_wholly_below_the_floor() -> None:
    ratios = [0.3, 0.5, 0.35, 0.6, 0.4, 0.55, 0.3, 0.6, 0.45, 0.5]
    wide = judge_perf(perf(), timed(ratios))
    assert wide.outcome == Outcome.UNSTABLE
    assert wide.measured["spread"] > 0.1
    assert "max_spread 10.0%" in wide.message
    tolerant = judge_perf(perf(max_spread=1.0), timed(ratios))
    assert tolerant.outcome == Outcome.FAIL


def test_one_round_is_the_single_timing_verdict() -> None:
    once = judge_perf(perf(), timed([0.79]))
    assert once.outcome == Outcome.FAIL
    assert "one round: no noise model" in once.message
    assert judge_perf(perf(), timed([0.81])).outcome == Outcome.PASS


def test_rounds_alternate_and_each_gives_a_ratio() -> None:
    calls: list[str] = []
    found = interleaved(lambda: calls.append("s"), lambda: calls.append("b"), "cpu", rounds=4)
    assert found["rounds"] == 4 and len(found["ratios"]) == 4
    assert all(math.isfinite(r) and r > 0 for r in found["ratios"])
    assert min(found["calls_per_round"].values()) >= 5
    # one warm-up call each, then s b | b s | s b | b s: runs of one side are s b s b s b s
    runs = [side for index, side in enumerate(calls) if index == 0 or calls[index - 1] != side]
    assert runs == ["s", "b", "s", "b", "s", "b", "s"]


def given(values: list[float]):
    """A timer that replays measured milliseconds, one per round."""
    feed = iter(values)
    return lambda: next(feed)


def test_timing_stops_once_the_interval_is_clear_of_the_floor_and_goes_on_while_it_straddles() -> None:
    # the baseline 20 % slower than the subject every round: clear above a floor of 1.0 after six
    slower = [1.2, 1.21, 1.19, 1.2, 1.22, 1.18, 1.2, 1.2, 1.2, 1.2]
    clear = {"subject": given([1.0] * 10), "baseline": given(slower)}
    found = timed_rounds(clear, 10, clear_of(1.0, 0.25))
    assert found["rounds"] == 6 and found["max_rounds"] == 10
    assert found["stopped"].startswith("clear after 6 rounds") and found["stopped"].endswith("≥ 1.0")
    # clearly below the floor: stops too, with the other sign
    slow = {"subject": given([1.0] * 10), "baseline": given([0.8] * 10)}
    assert timed_rounds(slow, 10, clear_of(1.0, 0.25))["stopped"].endswith("< 1.0")
    # around the floor: every round is spent, and the verdict is what all ten say
    around = [0.97, 1.03, 0.98, 1.02, 0.99, 1.01, 0.97, 1.03, 0.98, 1.02]
    straddling = {"subject": given([1.0] * 10), "baseline": given(around)}
    found = timed_rounds(straddling, 10, clear_of(1.0, 0.25))
    assert found["rounds"] == 10 and found["stopped"] == "all 10 rounds"
    assert judge_perf(perf(1.0, 0.25), timed(found["ratios"])).outcome == Outcome.UNSTABLE


def test_an_early_stop_almost_always_gives_the_verdict_all_rounds_give() -> None:
    """Streams drawn around the floor with 0.5-8 % noise: the rule stops early for most, and the
    verdict on the rounds it ran differs from the verdict on all ten for under 0.5 % of those (a
    later round can still cross a floor; the rule stops only at a distance of the interval's width)."""
    import random

    rng = random.Random(7)
    early = changed = 0
    for _ in range(2000):
        centre, noise = rng.uniform(0.7, 1.3), rng.uniform(0.005, 0.08)
        ratios = [centre * (1 + rng.gauss(0, noise)) for _ in range(10)]
        timers = {"subject": given([1.0] * 10), "baseline": given(ratios)}
        found = timed_rounds(timers, 10, clear_of(1.0, 0.25))
        if found["rounds"] < 10:
            early += 1
            verdicts = {judge_perf(perf(1.0, 0.25), timed(r)).outcome for r in (found["ratios"], ratios)}
            changed += len(verdicts) > 1
    assert early > 800 and changed <= early * 0.005, (early, changed)
