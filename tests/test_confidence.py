"""A stated confidence: how sure one point's votes make it, how a flaky point is rerun until it is
sure (and a deterministic one is not), the flake rate read from a real history, and the accuracy
the confidence search keeps on a flaky synthetic history where plain bisection falls."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

from kregress.bisect.confidence import FlakeEstimate, decide, point_probability
from kregress.bisect.search import PointVerdict
from kregress.history import flake_history, store
from kregress.record import RunResults

GOOD, BAD = PointVerdict.GOOD, PointVerdict.BAD


def test_one_vote_is_certain_without_flakes_and_a_lead_is_what_counts_with_them() -> None:
    assert point_probability(1, 0, 0.0) == 1.0
    assert point_probability(2, 2, 0.1) == 0.5
    assert point_probability(5, 3, 0.1) == point_probability(2, 0, 0.1)  # only the lead matters
    assert abs(point_probability(0, 1, 0.02) - 0.98) < 1e-9


def test_a_deterministic_point_runs_once_a_flaky_one_until_sure_and_a_coin_stays_undecided() -> None:
    calls = []
    verdict, votes, probability = decide(lambda: calls.append(1) or BAD, FlakeEstimate(0.0, 10), 0.999)
    assert (verdict, votes.runs, probability) == (BAD, 1, 1.0)
    # No history on the CPU: the first vote is trusted unless --reruns asks for more, which here
    # shows a disagreement; from then on the point is rerun until it is sure.
    flips = itertools.cycle([BAD, GOOD, GOOD, GOOD, GOOD, GOOD, GOOD])
    estimate = FlakeEstimate(0.0, 10, guessed=True)
    verdict, votes, probability = decide(lambda: next(flips), estimate, 0.999, min_runs=3)
    assert verdict == GOOD and votes.runs > 3 and probability >= 0.999
    assert estimate.rate > 0  # the disagreement raised the estimate
    coin = itertools.cycle([GOOD, BAD])
    verdict, votes, _ = decide(lambda: next(coin), FlakeEstimate(0.3, 50), 0.999, max_runs=20)
    assert verdict == PointVerdict.SKIP and votes.runs == 20


def test_the_flake_rate_comes_from_attempts_and_nightly_flips_under_one_toolchain(tmp_path: Path) -> None:
    history = tmp_path / "history.sqlite"
    toolchain = {"triton": "3.6.0"}

    def item(outcome: str, **more: object) -> dict:
        return {"case": "c", "expectation": "perf", "target": "cuda:device", "outcome": outcome,
                "toolchain": toolchain, **more}  # fmt: skip

    store(history, RunResults(items=[item("PASS", attempts=["PASS", "FAIL", "PASS"])]))
    store(history, RunResults(items=[item("PASS")]))
    store(history, RunResults(items=[item("FAIL")]))  # flipped with no compiler change
    store(history, RunResults(items=[item("UNSTABLE")]))
    disagreed, runs = flake_history(history, "c", "perf", "cuda:device")
    assert runs == 6  # three attempts, then three single runs
    assert disagreed == 1 + 1 + 2  # the minority attempt, UNSTABLE itself, and two against the majority
    assert flake_history(history, "other", None, None) == (0, 0)
    assert flake_history(tmp_path / "none.sqlite", "c", None, None) == (0, 0)


def test_the_confidence_search_stays_right_where_plain_bisection_falls() -> None:
    path = Path(__file__).parent.parent / "bench" / "bench_bisect_accuracy.py"
    spec = importlib.util.spec_from_file_location("bench_bisect_accuracy", path)
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = {(r["flake"], r["search"]): r for r in bench.synthetic(trials=60, seed=3)}
    for flake in (0.0, 0.1, 0.3):
        assert rows[(flake, "confidence")]["accuracy"] >= 0.95, rows[(flake, "confidence")]
    assert rows[(0.1, "plain")]["accuracy"] < 0.8 and rows[(0.3, "plain")]["accuracy"] < 0.5
    assert rows[(0.0, "confidence")]["runs"] == rows[(0.0, "plain")]["runs"]  # no flakes: no reruns
