"""A perf item judged against its earlier nights on the same GPU model (kregress.night_window), from a
real SQLite history written by kregress.history: a planted 10 % slowdown FAILs, a night inside the
measured night-to-night noise PASSes, even where the floor alone would have FAILed it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from test_perf_noise import perf, timed

from kregress.history import store
from kregress.judge import Outcome
from kregress.night_window import NightWindow, earlier_nights, judged_against
from kregress.record import RunResults

H200 = {"index": "0", "name": "NVIDIA H200", "driver": "570.1", "uuid": "GPU-1"}
H100 = {"index": "0", "name": "NVIDIA H100 80GB HBM3", "driver": "570.1", "uuid": "GPU-2"}
# perf-triton-8k on one H200, three nights in a row: each night's interval was ~0.001 wide
MEASURED_NIGHTS = [0.623, 0.592, 0.622]


def night(ratio: float, device: dict, started: float, outcome: str = "PASS") -> dict:
    item = {
        "case": "fused_softmax", "expectation": "perf-triton-8k", "target": "cuda:device", "kind": "perf",
        "outcome": outcome, "message": "", "measured": {"ratio": ratio}, "device": device,
    }  # fmt: skip
    return {"started": started, "runner": "gpu-1", "backend": "cuda", "items": [item]}


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / "history.sqlite"
    for n, ratio in enumerate(MEASURED_NIGHTS):
        store(path, RunResults.model_validate(night(ratio, H200, 1000.0 + n)))
    store(path, RunResults.model_validate(night(0.1, H200, 900.0, outcome="UNSTABLE")))  # measured noise
    store(path, RunResults.model_validate(night(0.3, H100, 1100.0)))  # another GPU model
    return path


def tonight(centre: float, noise: float, seed: int = 0) -> dict:
    """Ten rounds around `centre`, each within ±`noise` of it (relative)."""
    rng = random.Random(seed)
    return timed([centre * (1 + rng.uniform(-noise, noise)) for _ in range(10)])


def window_of(history: Path, device: dict = H200) -> NightWindow:
    return earlier_nights(history, "fused_softmax", "perf-triton-8k", "cuda:device", device["name"])


def test_the_window_holds_the_item_s_measured_nights_on_this_gpu_model_only(history: Path) -> None:
    window = window_of(history)
    assert window.ratios == tuple(MEASURED_NIGHTS)  # not the UNSTABLE night, not the H100's
    assert window.enough and window.median == pytest.approx(0.622)
    assert window.spread == pytest.approx((0.623 - 0.592) / 0.622)
    assert window_of(history, H100).ratios == (0.3,)


@pytest.mark.parametrize("seed", range(5))
def test_a_planted_ten_percent_slowdown_fails_against_the_nights_though_its_floor_passes(
    history: Path, seed: int
) -> None:
    expectation = perf(min_ratio=0.5, max_spread=0.1)
    verdict = expectation.judge_timings(tonight(0.622 * 0.9, 0.005, seed))
    assert verdict.outcome is Outcome.PASS  # the floor alone misses it
    judged = judged_against(verdict, window_of(history), 0.5)
    assert judged.outcome is Outcome.FAIL and judged.failure_kind == "SLOWER_THAN_NIGHTS", judged.message
    assert "3 earlier nights on NVIDIA H200" in judged.message
    assert judged.measured["window_nights"] == 3 and judged.measured["window_score"] < -3.5


@pytest.mark.parametrize("centre", [0.592, 0.600, 0.610, 0.623])
def test_a_night_inside_the_measured_noise_passes_where_a_floor_inside_it_would_fail(
    history: Path, centre: float
) -> None:
    expectation = perf(min_ratio=0.61, max_spread=0.1)  # a floor between the nights measured
    verdict = expectation.judge_timings(tonight(centre, 0.001))
    judged = judged_against(verdict, window_of(history), 0.61)
    assert judged.outcome is Outcome.PASS, judged.message
    assert "sits inside the night-to-night spread" in judged.message
    if verdict.outcome is Outcome.FAIL:  # the floor alone FAILed it "with confidence"
        assert "PASS against the nights" in judged.message and verdict.message in judged.message


def test_a_slowdown_below_a_floor_inside_the_spread_still_fails(history: Path) -> None:
    verdict = perf(min_ratio=0.61, max_spread=0.1).judge_timings(tonight(0.55, 0.002))
    judged = judged_against(verdict, window_of(history), 0.61)
    assert judged.outcome is Outcome.FAIL and judged.failure_kind == "SLOWER_THAN_NIGHTS"


def test_an_item_without_enough_nights_on_this_model_says_so_and_keeps_its_floor_verdict(
    history: Path,
) -> None:
    verdict = perf(min_ratio=0.5, max_spread=0.1).judge_timings(tonight(0.2, 0.002))
    judged = judged_against(verdict, window_of(history, H100), 0.5)
    assert judged.outcome is Outcome.FAIL and judged.failure_kind == "TOO_SLOW"
    assert (
        "no history to judge against on NVIDIA H100 80GB HBM3: 1 earlier nights, 3 needed" in judged.message
    )
    missing = earlier_nights(history.parent / "none.sqlite", "c", "e", "t", "NVIDIA H200")
    assert missing.ratios == () and not missing.enough


def test_an_unstable_night_is_left_as_it_is(history: Path) -> None:
    noisy = perf(min_ratio=0.5, max_spread=0.01).judge_timings(tonight(0.5, 0.2))
    assert noisy.outcome is Outcome.UNSTABLE
    assert judged_against(noisy, window_of(history), 0.5) is noisy


def test_check_with_a_history_names_each_floor_inside_its_nights_range(tmp_path: Path) -> None:
    """grouped_reduction's perf-triton-8k floor (0.53) against nights measured around it, and its
    perf-triton-1k floor (0.43) against nights well above it."""
    import shutil
    import subprocess
    import sys

    corpus = tmp_path / "corpus"
    shutil.copytree(Path(__file__).parents[1] / "corpus" / "grouped_reduction", corpus / "grouped_reduction")
    path = tmp_path / "history.sqlite"
    for n, (eight, one) in enumerate([(0.52, 0.481), (0.55, 0.480), (0.54, 0.481)]):
        document = night(eight, H200, 1000.0 + n)
        item = document["items"][0]
        item["case"] = "grouped_reduction"
        document["items"] = [item, {**item, "expectation": "perf-triton-1k", "measured": {"ratio": one}}]
        store(path, RunResults.model_validate(document))
    done = subprocess.run(
        [sys.executable, "-m", "kregress.cli", "check", str(corpus), "--history", str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = done.stdout
    assert (
        "noisy   perf-triton-8k on cuda:device: the floor 0.53 sits inside 3 earlier nights on NVIDIA H200"
        in said
    )
    assert "perf-triton-1k on cuda:device: the floor 0.43 is clear of 3 earlier nights" in said
