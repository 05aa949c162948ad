"""The GPU nightly's corpus run, timed as it runs: `pytest corpus/ --backend cuda -n auto`, several
times in a row, in one sitting on one device machine.

Per run: wall seconds, the items by outcome, the sum over perf items of the seconds each held its
device alone (`device_alone_s`) and waited for it (`waited_for_device_s`), and the timed rounds
per perf item; beside the results, NAME.timeline.txt: every job in the order it was asked for,
with its wait for the device and its run time (where the run's time went). At the end: whether
every run gave every item the same outcome (it must: more workers change the time, never a
verdict). Variants are pytest arguments, so "before" and "after"
are measured side by side, e.g. one worker per device against the default:

    python bench/bench_gpu_nightly.py --runs 3 --variant after= --variant before=--workers-per-device=1

A run that exceeds --timeout is killed and reported as such (never as a time), with the process
tree and the kernel's file locks at that moment written beside the results (--out), so a stall
can be read afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path


def run_once(corpus: Path, backend: str, extra: list[str], timeout: float, out: Path, name: str) -> dict:
    report = out / f"{name}.json"
    command = [sys.executable, "-m", "pytest", str(corpus), "--backend", backend, "-n", "auto", "-q",
               "-p", "no:cacheprovider", "--kregress-json", str(report), *extra]  # fmt: skip
    started = time.perf_counter()
    began_at = time.time()
    with (out / f"{name}.log").open("w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            snapshot(out / f"{name}.stalled.txt", process.pid)
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return {"name": name, "seconds": None, "why": f"killed after {timeout:.0f} s"}
    seconds = time.perf_counter() - started
    if not report.exists():
        return {"name": name, "seconds": None, "why": f"pytest exit {process.returncode}, no results"}
    items = json.loads(report.read_text())["items"]
    perf = [i for i in items if i.get("kind") == "perf" and i.get("measured")]
    spans = timeline(items, began_at, out / f"{name}.timeline.txt")
    return {
        "name": name,
        "seconds": round(seconds, 1),
        "exit": process.returncode,
        "outcomes": dict(Counter(i["outcome"] for i in items)),
        "verdicts": {f"{i['case']}::{i['expectation']}[{i['target']}]": i["outcome"] for i in items},
        "device_alone_s": round(sum(i["measured"].get("device_alone_s") or 0 for i in perf), 2),
        "perf_waited_s": round(sum(i["measured"].get("waited_for_device_s") or 0 for i in perf), 1),
        "perf_prepared_s": round(sum(i["measured"].get("prepared_s") or 0 for i in perf), 1),
        "shared_waited_s": round(sum(i.get("device_wait_s") or 0 for i in items), 1),
        "job_s": round(sum(i.get("job_seconds") or 0 for i in items), 1),
        "rounds": {f"{i['case']}::{i['expectation']}": i["measured"].get("rounds") for i in perf},
        **spans,
    }


def timeline(items: list[dict], began_at: float, path: Path) -> dict[str, float]:
    """Each item's job, in the order it was asked for (items that share a job share its line):
    seconds from the run's start, how long it waited for its device, how long it ran; written to
    `path`. Returns when the first job was asked for (start-up: collection, workers) and when the
    last one ended (the rest is teardown)."""
    jobs: dict[tuple, dict] = {}
    for item in items:
        if item.get("job_started_at") is None:
            continue
        key = (item["job_started_at"], item["case"], item["target"], item["expectation"])
        jobs.setdefault(key, item)
    if not jobs:
        return {}
    rows, last_end = [], 0.0
    for (start, case, target, _), item in sorted(jobs.items()):
        at = start - began_at
        shared_wait = item.get("device_wait_s") or 0.0  # before the job; a perf job waits inside it
        wait = shared_wait or (item.get("measured") or {}).get("waited_for_device_s") or 0.0
        ran = item.get("job_seconds") or 0.0
        last_end = max(last_end, at + shared_wait + ran)
        name = f"{case}::{item['expectation']}[{target}]"
        rows.append(f"{at:7.1f} wait {wait:6.1f} ran {ran:6.1f}  {item.get('kind') or '':8} {name}")
    path.write_text("\n".join(rows) + "\n")
    first = min(k[0] for k in jobs) - began_at
    return {"first_job_at_s": round(first, 1), "last_job_end_s": round(last_end, 1)}


def snapshot(path: Path, root: int) -> None:
    """The process tree and the file locks held, as they were when a run had to be killed, and
    where py-spy is found, the Python stack of every process of the run (which job hung, where)."""
    parts = []
    for title, command in (("processes", ["ps", "-eo", "pid,ppid,etime,stat,args", "--forest"]),
                           ("locks", ["cat", "/proc/locks"])):  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        parts.append(f"== {title}\n{done.stdout}{done.stderr}")
    spy = shutil.which("py-spy")
    table = subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True, check=False).stdout
    children: dict[str, list[str]] = {}
    for pid, parent in (line.split() for line in table.splitlines() if line.strip()):
        children.setdefault(parent, []).append(pid)
    listed, waiting = [], [str(root)]  # every descendant: jobs run in sessions of their own
    while waiting:
        pid = waiting.pop()
        listed.append(pid)
        waiting += children.get(pid, [])
    for pid in listed if spy else []:
        done = subprocess.run(
            [spy, "dump", "--pid", pid], capture_output=True, text=True, timeout=60, check=False
        )
        parts.append(f"== py-spy dump {pid}\n{done.stdout}{done.stderr}")
    path.write_text("\n".join(parts))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", nargs="?", type=Path, default=Path("corpus"))
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--runs", type=int, default=3, help="runs of each variant, in a row (default 3)")
    parser.add_argument(
        "--variant", action="append", metavar="NAME=ARGS",
        help="a named set of extra pytest arguments, split on spaces (repeatable; default: default=)",
    )  # fmt: skip
    parser.add_argument("--timeout", type=float, default=300, help="seconds before a run is killed")
    parser.add_argument("--out", type=Path, help="where the results, logs and stall snapshots go")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-gpu-nightly-"))
    out.mkdir(parents=True, exist_ok=True)
    variants = [v.partition("=") for v in (args.variant or ["default="])]
    runs = []
    for name, _, extra in variants:
        for n in range(1, args.runs + 1):
            result = run_once(args.corpus, args.backend, extra.split(), args.timeout, out, f"{name}-{n}")
            runs.append(result)
            shown = f"{result['seconds']:.1f} s" if result["seconds"] is not None else result["why"]
            if result["seconds"] is not None:
                shown += (
                    f", {result['outcomes']}, exclusive device {result['device_alone_s']} s, "
                    f"job time {result['job_s']} s, device waits: shared {result['shared_waited_s']} s, "
                    f"perf {result['perf_waited_s']} s (perf preparing {result['perf_prepared_s']} s), "
                    f"rounds {sorted(Counter(result['rounds'].values()).items())} (rounds: items), "
                    f"first job asked at {result.get('first_job_at_s')} s, "
                    f"last ended at {result.get('last_job_end_s')} s"
                )
            print(f"{name} run {n}: {shown}", flush=True)
    finished = [r for r in runs if r["seconds"] is not None]
    same = all(r["verdicts"] == finished[0]["verdicts"] for r in finished) if finished else False
    differing = sorted(
        {k for r in finished for k, v in r["verdicts"].items() if finished[0]["verdicts"].get(k) != v}
    )
    print(
        f"same verdicts in all {len(finished)} finished runs: {same}"
        + (f" (differ: {differing})" if differing else "")
    )
    (out / "summary.json").write_text(json.dumps(runs, indent=1))
    print(f"results in {out}")
    return 0 if same and len(finished) == len(runs) else 1


if __name__ == "__main__":
    sys.exit(main())
