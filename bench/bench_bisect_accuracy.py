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
import json
import math
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from kregress.bisect.confidence import (
    DEFAULT_CONFIDENCE,
    FlakeEstimate,
    decide,
    expected_points,
    per_point_target,
)
from kregress.bisect.posterior import NoiseModel, posterior_search, stopping_point
from kregress.bisect.search import PointVerdict, search

COUNT = 64
HISTORY_RUNS = 50  # earlier runs of the item the flake rate is estimated from
POSTERIOR_BUDGET = 600  # runs per search: past it a range is reported, never a guess


def flaky_truth(
    culprit: int, flake: float, rng: random.Random, one_sided: bool = False
) -> Callable[[int], PointVerdict]:
    """Symmetric: any verdict flips with probability `flake`. One-sided: only good code flakes (a
    numerics or perf check that fails now and then); bad code always fails."""

    def judge(index: int) -> PointVerdict:
        truth = PointVerdict.BAD if index >= culprit else PointVerdict.GOOD
        if rng.random() < flake and not (one_sided and truth == PointVerdict.BAD):
            return PointVerdict.GOOD if truth == PointVerdict.BAD else PointVerdict.BAD
        return truth

    return judge


def learned_noise(flake: float, one_sided: bool, rng: random.Random) -> NoiseModel:
    """The noise model an item's history gives: HISTORY_RUNS nights on good code and as many on bad
    code, each rate the share of verdicts that lied (kregress.bisect.noise does this from SQLite)."""
    false_fails = sum(rng.random() < flake for _ in range(HISTORY_RUNS))
    false_passes = 0 if one_sided else sum(rng.random() < flake for _ in range(HISTORY_RUNS))
    return NoiseModel.from_counts(false_fails, HISTORY_RUNS, false_passes, HISTORY_RUNS)


def posterior(
    judge: Callable[[int], PointVerdict], count: int, noise: NoiseModel, confidence: float
) -> tuple[int | None, int]:
    """kregress.bisect.posterior over every culprit 0..count, ends included."""
    runs = [0]

    def points(indices: list[int]) -> dict[int, PointVerdict]:
        runs[0] += len(indices)
        return {i: judge(i) for i in indices}

    result = posterior_search(count, points, noise, confidence=confidence, budget=POSTERIOR_BUDGET)
    return result.culprit, runs[0]


def bound(flake: float, one_sided: bool, count: int) -> float:
    """The information bound of the question asked: log2(count - 1) bits to name the culprit, plus
    the bit that halves the doubt a stated confidence leaves (kregress.bisect.posterior
    .stopping_point), over the channel's capacity."""
    bits = math.log2(count - 1) + DOUBT_BITS
    if flake == 0:
        return math.log2(count - 1)
    return bits / NoiseModel.fixed(flake, 0.0 if one_sided else flake).capacity()


# log2((1 - confidence) / (1 - stopping_point(confidence))): the bit a search spends to stop at half
# the doubt it states.
DOUBT_BITS = math.log2((1 - DEFAULT_CONFIDENCE) / (1 - stopping_point(DEFAULT_CONFIDENCE)))


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
    for one_sided in (False, True):
        for flake in (0.0, 0.1, 0.3):
            if one_sided and flake == 0:
                continue  # the same as symmetric
            for name in ("plain", "confidence", "posterior"):
                rng = random.Random(seed)
                right = wrong = runs = 0
                for _ in range(trials):
                    culprit = rng.randrange(1, COUNT)
                    judge = flaky_truth(culprit, flake, rng, one_sided)
                    if name == "plain":
                        named, spent = plain(judge, COUNT)
                    elif name == "confidence":
                        named, spent = confident(judge, COUNT, flake, rng, confidence)
                    else:
                        noise = learned_noise(flake, one_sided, rng)
                        named, spent = posterior(judge, COUNT, noise, confidence)
                    right += named == culprit
                    wrong += named is not None and named != culprit
                    runs += spent
                rows.append({"model": "one-sided" if one_sided else "symmetric", "flake": flake,
                             "search": name, "accuracy": right / trials, "wrong": wrong / trials,
                             "runs": runs / trials, "bound": bound(flake, one_sided, COUNT)})  # fmt: skip
    return rows


TRUTH = Path(__file__).parent.parent / "tests" / "data" / "bisect_truth.json"


def corpus_question(folder: Path) -> dict | None:
    """The widest search a case's [reproduce] table vouches for, on the first target this machine
    judges: from its oldest good release below the bug to its newest bad one before any good
    (a regression), else from its oldest bad release to its newest good one after the bug (a fix)."""
    from kregress.bisect.candidates import parse_version_ref
    from kregress.manifest import load_case

    reproduce = load_case(folder / "case.toml").manifest.reproduce
    if reproduce is None or not reproduce.bad or not reproduce.good:
        return None
    targets = [t for t in reproduce.targets if not t.endswith(":device")]
    refs = {spec: parse_version_ref(spec) for spec in [*reproduce.bad, *reproduce.good]}
    if not targets or any(r is None for r in refs.values()):
        return None
    version = {spec: ref.version for spec, ref in refs.items() if ref is not None}
    bad = sorted(reproduce.bad, key=version.__getitem__)
    good = sorted(reproduce.good, key=version.__getitem__)
    below = [g for g in good if version[g] < version[bad[0]]]
    case = {"case": folder.name, "target": targets[0]}
    if below:
        after = [g for g in good if version[g] > version[bad[0]]]
        last_bad = [b for b in bad if not after or version[b] < version[after[0]]][-1]
        return {**case, "regress": "fail", "good": below[0], "bad": last_bad}
    above = [g for g in good if version[g] > version[bad[-1]]]
    return {**case, "regress": "pass", "good": bad[0], "bad": above[-1]} if above else None


def brute_force(corpus: Path, question: dict) -> dict:
    """Every release between the two ends judged once: the truth a bisect is checked against."""
    from kregress.bisect.candidates import release_candidates
    from kregress.judging_service import CaseRun, Memo, observation_verdict

    candidates = release_candidates(question["good"], question["bad"])
    run = CaseRun(corpus, question["case"], None, question["target"])
    memo, verdicts = Memo(), []
    for candidate in candidates:
        spec = candidate.toolchain or candidate.label
        observation = memo.observations(run, spec, 1)[0]
        verdicts.append(observation_verdict(observation, question["regress"], True).value)
    bad = [i for i, v in enumerate(verdicts) if v == "bad"]
    first = candidates[bad[0]].label if bad else None
    monotone = bool(bad) and all(v == "bad" for v in verdicts[bad[0] :]) and "bad" not in verdicts[: bad[0]]
    return {**question, "releases": [c.label for c in candidates], "verdicts": verdicts,
            "first_bad": first, "monotone": monotone}  # fmt: skip


def bisect_answer(corpus: Path, truth: dict) -> dict:
    command = [sys.executable, "-m", "kregress.cli", "bisect", truth["case"], "--corpus", str(corpus),
               "-t", truth["target"], "--good", truth["good"], "--bad", truth["bad"],
               "--regress", truth["regress"]]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    named = re.search(r"First (?:bad|fixed)[^*]*\*\*([^*]+)\*\*", done.stdout)
    judged = re.search(r"(\d+) points judged in \d+ rounds over (\d+) releases", done.stdout)
    from kregress.bisect.search import plain_bound

    between = len(truth["releases"]) - 2
    points = int(judged.group(1)) if judged else None
    return {"answer": named.group(1) if named else None, "exit": done.returncode,
            "points": points, "bound": plain_bound(max(between, 0))}  # fmt: skip


def corpus_table(corpus: Path, cases: list[str]) -> int:
    folders = [corpus / c for c in cases] if cases else sorted(p.parent for p in corpus.glob("*/case.toml"))
    truths = json.loads(TRUTH.read_text()) if TRUTH.exists() else {}
    rows = []
    for folder in folders:
        question = corpus_question(folder)
        if question is None:
            continue
        known = truths.get(folder.name)
        if known is None or any(known.get(k) != v for k, v in question.items()):
            known = truths[folder.name] = brute_force(corpus, question)
            TRUTH.parent.mkdir(parents=True, exist_ok=True)
            TRUTH.write_text(json.dumps(truths, indent=1, sort_keys=True) + "\n")
        answer = bisect_answer(corpus, known)
        rows.append((known, answer))
        match = "yes" if answer["answer"] == known["first_bad"] else "NO"
        print(f"{folder.name:34} {known['regress']:4} {known['good']:>15} .. {known['bad']:<15} "
              f"truth {known['first_bad']!s:15} bisect {answer['answer']!s:15} {match:3} "
              f"points {answer['points']} (log2 bound {answer['bound']})", flush=True)  # fmt: skip
    right = sum(a["answer"] == t["first_bad"] for t, a in rows)
    print(f"corpus: {right} of {len(rows)} bisects name the brute-force answer")
    return 0 if right == len(rows) else 1


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, nargs="+", default=[0],
                        help="one table per seed; the check holds over all of them (default 0)")  # fmt: skip
    parser.add_argument("--corpus", type=Path, default=Path("corpus"))
    parser.add_argument("--corpus-cases", nargs="*", metavar="CASE",
                        help="bisect these cases (none named: every case) against the truth")  # fmt: skip
    args = parser.parse_args(argv)
    if args.corpus_cases is not None:
        return corpus_table(args.corpus, args.corpus_cases)
    rows = []
    for seed in args.seed:
        table = synthetic(args.trials, seed)
        rows += table
        print(f"synthetic, seed {seed}: {COUNT} commits, planted culprit, {args.trials} trials per row, "
              f"flake rates known from {HISTORY_RUNS} earlier runs (each side)")  # fmt: skip
        print(f"{'model':>10} {'flake':>6} {'search':>11} {'right':>7} {'wrong':>7} {'of named':>9} "
              f"{'runs/search':>12} {'bound':>6} {'runs/bound':>10}")  # fmt: skip
        for row in table:
            print(f"{row['model']:>10} {row['flake']:>6.1f} {row['search']:>11} {row['accuracy']:>7.1%} "
                  f"{row['wrong']:>7.1%} {named_right(row):>9.2%} {row['runs']:>12.1f} {row['bound']:>6.1f} "
                  f"{row['runs'] / row['bound']:>10.2f}")  # fmt: skip
    # A named culprit states DEFAULT_CONFIDENCE: of the culprits each search names, that share must
    # be right in every row of every seed (a range it reports instead states nothing).
    stating = [r for r in rows if r["search"] != "plain" and r["flake"] > 0]
    met = all(named_right(r) >= DEFAULT_CONFIDENCE for r in stating)
    print(f"every culprit named right at >= {DEFAULT_CONFIDENCE:.0%} (confidence and posterior, all seeds):",
          "yes" if met else "NO")  # fmt: skip
    goal = [r for r in rows if r["search"] == "posterior" and r["flake"] > 0]
    held = all(r["accuracy"] >= 0.99 and r["runs"] <= 2 * r["bound"] for r in goal)
    print("posterior search at >= 99 % within 2x the bound:", "yes" if held else "NO")
    return 0 if held and met else 1


def named_right(row: dict) -> float:
    """Of the culprits a search named, the share that was right."""
    named = row["accuracy"] + row["wrong"]
    return row["accuracy"] / named if named else 1.0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
