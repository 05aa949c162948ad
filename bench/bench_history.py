"""History and matrix page: what storing a run and rendering the page cost as the history grows.

A synthetic corpus of CASES cases × 6 targets × 3 expectations (resource items with measured
values). Reported as ratios in one run: the cost of storing the 100th run over the 1st (a history
must not slow down as it grows), of rendering 20 runs over 5 (trends are linear in runs), and of
one store over one corpus item's typical judging time (a compile job: ~0.5 s).

    .venv/bin/python bench/bench_history.py [--cases 30] [--runs 100]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from kregress.history import recent_runs, store
from kregress.page import build, render_html
from kregress.record import RunResults

TARGETS = ("cpu:interpreter", "cuda:sm_80", "cuda:sm_90", "hip:gfx942", "xpu:pvc", "xpu:dg2")


def run_document(cases: int, night: int) -> RunResults:
    items = [
        {"case": f"case_{c:03}", "expectation": f"shared-{e}", "kind": "resource", "target": target,
         "framework": "triton", "outcome": "FAIL" if (c + night) % 17 == 0 else "PASS",
         "message": "shared_bytes ...",
         "measured": {"shared_bytes": {f"cfg{k}": 1000 * (c + k + night) for k in range(4)}},
         "limit": 232448, "toolchain": {"python": "3.11.7", "triton": "3.6.0"},
         "upstream": f"https://github.com/example/compiler/issues/{c}"}
        for c in range(cases) for e in range(3) for target in TARGETS
    ]  # fmt: skip
    return RunResults.model_validate({"started": 1.8e9 + night * 86400, "runner": "bench", "items": items})


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=30)
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "history.sqlite"
        documents = [run_document(args.cases, n) for n in range(args.runs)]
        stores = [timed(lambda d=d: store(path, d)) for d in documents]
        items = len(documents[0].items)
        first, last = statistics.median(stores[:5]), statistics.median(stores[-5:])
        size = path.stat().st_size / 2**20
        print(f"store one run of {items} items: first runs {first * 1e3:.1f} ms, last runs "
              f"{last * 1e3:.1f} ms (ratio {last / first:.2f}); history file {size:.1f} MiB")  # fmt: skip
        renders = {}
        for count in (5, 20):
            runs = recent_runs(path, count)
            renders[count] = timed(lambda runs=runs: render_html(build(runs)))
            print(f"read + render {count:2} runs: {renders[count] * 1e3:.0f} ms")
        print(f"render 20 runs / 5 runs: {renders[20] / renders[5]:.2f} (4.0 would be linear in runs)")
        print(f"one store / one 0.5 s compile job: {last / 0.5:.3f}")


if __name__ == "__main__":
    main()
