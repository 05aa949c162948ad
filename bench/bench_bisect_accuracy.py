"""How often a bisect names the right culprit.

Synthetic: a history of COUNT commits with a planted culprit, judged by a predicate that flips its
answer with probability f (0, 0.1, 0.3). Plain bisection (one run per point, the majority of
--reruns) against the confidence search (kregress.bisect.confidence: each point rerun until its
verdict is likely enough for the culprit to be right with probability 0.99, from a flake rate the
history gives). Prints accuracy, wrong answers and runs per search; the confidence search must stay
at or above 95 % where plain bisection falls.

Corpus (--corpus-cases): for each case with a bad and a good release, judge every release between
them once (the brute-force truth) and bisect; print the answer, whether it matches, and the points
judged against the log2 bound. Slow: it compiles every release of every case.

    python bench/bench_bisect_accuracy.py [--trials 200] [--corpus-cases CASE ...]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable

from kregress.bisect.confidence import (
    DEFAULT_CONFIDENCE,
    FlakeEstimate,
    decide,
    expected_points,
    per_point_target,
)
from kregress.bisect.search import PointVerdict, search

COUNT = 64
HISTORY_RUNS = 50  # earlier runs of the item the flake rate is estimated from


def flaky_truth(culprit: int, flake: float, rng: random.Random) -> Callable[[int], PointVerdict]:
    def judge(index: int) -> PointVerdict:
        truth = PointVerdict.BAD if index >= culprit else PointVerdict.GOOD
        if rng.random() < flake:
            return PointVerdict.GOOD if truth == PointVerdict.BAD else PointVerdict.BAD
        return truth

    return judge


def plain(judge: Callable[[int], PointVerdict], count: int) -> tuple[int | None, int]:
    """One run per point, ends included: (the culprit named or None, runs)."""
    runs = [0]

    def once(index: int) -> PointVerdict:
        runs[0] += 1
        return judge(index)

    if once(0) != PointVerdict.GOOD or once(count - 1) != PointVerdict.BAD:
        return None, runs[0]
    result = search(count, lambda points: {i: once(i) for i in points})
    return (result.first_bad if result.exact else None), runs[0]


def confident(
    judge: Callable[[int], PointVerdict], count: int, flake: float, rng: random.Random, confidence: float
) -> tuple[int | None, int]:
    """Each point decided by kregress.bisect.confidence, the prior from HISTORY_RUNS earlier runs."""
    seen_flakes = sum(rng.random() < flake for _ in range(HISTORY_RUNS))
    estimate = FlakeEstimate(seen_flakes / HISTORY_RUNS, HISTORY_RUNS)
    target = per_point_target(confidence, expected_points(count))
    runs = [0]

    def point(index: int) -> PointVerdict:
        def once() -> PointVerdict:
            runs[0] += 1
            return judge(index)

        return decide(once, estimate, target)[0]

    if point(0) != PointVerdict.GOOD or point(count - 1) != PointVerdict.BAD:
        return None, runs[0]
    result = search(count, lambda points: {i: point(i) for i in points})
    return (result.first_bad if result.exact else None), runs[0]


def synthetic(trials: int, seed: int = 0, confidence: float = DEFAULT_CONFIDENCE) -> list[dict]:
    rows = []
    for flake in (0.0, 0.1, 0.3):
        for name in ("plain", "confidence"):
            rng = random.Random(seed)
            right = wrong = runs = 0
            for _ in range(trials):
                culprit = rng.randrange(1, COUNT)
                judge = flaky_truth(culprit, flake, rng)
                if name == "plain":
                    named, spent = plain(judge, COUNT)
                else:
                    named, spent = confident(judge, COUNT, flake, rng, confidence)
                right += named == culprit
                wrong += named is not None and named != culprit
                runs += spent
            rows.append({"flake": flake, "search": name, "accuracy": right / trials,
                         "wrong": wrong / trials, "runs": runs / trials})  # fmt: skip
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows = synthetic(args.trials, args.seed)
    print(f"synthetic: {COUNT} commits, planted culprit, {args.trials} trials per row, "
          f"flake rate known from {HISTORY_RUNS} earlier runs")  # fmt: skip
    print(f"{'flake':>6} {'search':>11} {'right':>7} {'wrong':>7} {'runs/search':>12}")
    for row in rows:
        print(f"{row['flake']:>6.1f} {row['search']:>11} {row['accuracy']:>7.1%} {row['wrong']:>7.1%} "
              f"{row['runs']:>12.1f}")  # fmt: skip
    held = all(r["accuracy"] >= 0.95 for r in rows if r["search"] == "confidence")
    print("confidence search at or above 95 %:", "yes" if held else "NO")
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
