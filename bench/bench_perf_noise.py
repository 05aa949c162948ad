"""How much a perf item's ratio moves between runs, with the noise model on and off, in one run.

Runs the corpus's perf items `--repeats` times with `--perf-rounds 1` (off: one timing each) and
with the manifests' rounds (on: alternating rounds, median ratio and its interval), then prints,
per item and mode, the ratio of every run, its spread over the runs ((max - min) / median) and the
outcomes. On a GPU it judges `corpus/` on `--backend cuda`; without one, the interpreter perf
items of the test fixtures (tests/corpora/kinds, copied out of the test tree), whose noise is the
shared CPU's. Absolute ratios depend on the machine; compare the spreads.

    .venv/bin/python bench/bench_perf_noise.py [--repeats 3] [--backend cuda] [CORPUS] [-- PYTEST ARGS]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def has_gpu() -> bool:
    try:
        done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and "GPU" in done.stdout


def judge(corpus: Path, backend: str, rounds: int | None, extra: list[str], cwd: Path) -> list[dict]:
    """The perf items of one corpus run."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "results.json"
        command = [sys.executable, "-m", "pytest", str(corpus), "--backend", backend, "-m", "perf", "-q",
                   "-p", "no:cacheprovider", "--kregress-json", str(report), *extra]  # fmt: skip
        if rounds is not None:
            command += ["--perf-rounds", str(rounds)]
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
        if not report.exists():
            sys.exit(f"no results from {' '.join(command)}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
        return [i for i in json.loads(report.read_text())["items"] if i.get("kind") == "perf"]


def main() -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("corpus", nargs="?", type=Path, help="default: corpus/ on a GPU, else the fixtures")
    parser.add_argument("--repeats", type=int, default=3, help="runs per mode (default 3)")
    parser.add_argument("--backend", default=None, help="default: cuda where nvidia-smi sees a GPU, else cpu")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args, extra = parser.parse_args(argv[:split]), argv[split + 1 :]  # after --: more pytest arguments
    backend = args.backend or ("cuda" if has_gpu() else "cpu")
    with tempfile.TemporaryDirectory() as work:
        if args.corpus:
            corpus, cwd = args.corpus.resolve(), Path.cwd()
        elif backend != "cpu":
            corpus, cwd = REPO / "corpus", REPO
        else:  # outside the repo, where tests/conftest.py does not ignore the fixtures
            corpus, cwd = Path(work) / "corpus", Path(work)
            shutil.copytree(REPO / "tests" / "corpora" / "kinds", corpus)
            extra += ["--target", "cpu:interpreter"]
        print(f"perf noise: {corpus} on {backend}, {args.repeats} runs per mode", flush=True)
        ratios: dict[tuple[str, str], list[float]] = defaultdict(list)
        outcomes: dict[tuple[str, str], list[str]] = defaultdict(list)
        for mode, rounds in (("off", 1), ("on", None)):
            for repeat in range(args.repeats):
                for item in judge(corpus, backend, rounds, extra, cwd):
                    key = (f"{item['case']}/{item['expectation']}[{item['target']}]", mode)
                    outcomes[key].append(item["outcome"])
                    if (item.get("measured") or {}).get("ratio") is not None:
                        ratios[key].append(item["measured"]["ratio"])
                print(f"  noise model {mode}: run {repeat + 1} done", file=sys.stderr, flush=True)
    if not outcomes:
        print(f"no perf items judged in {corpus} on {backend}", file=sys.stderr)
        return 1
    print(f"{'item':62} {'model':5} {'spread':>7}  ratios / outcomes")
    for name in sorted({name for name, _ in outcomes}):
        for mode in ("off", "on"):
            values = ratios.get((name, mode), [])
            spread = (max(values) - min(values)) / statistics.median(values) if len(values) > 1 else math.nan
            shown = " ".join(f"{v:.3f}" for v in values)
            print(f"{name[:62]:62} {mode:5} {spread:7.1%}  {shown} / {' '.join(outcomes[name, mode])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
