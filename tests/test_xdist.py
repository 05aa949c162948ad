"""An xdist run gives the same outcomes as a serial run."""

from __future__ import annotations

import pytest

from conftest import KINDS_CORPORA, KINDS_TARGETS, CorpusRun, kinds_judged, run_corpus


def promised(run: CorpusRun) -> dict[str, str]:
    """Each item's outcome as far as a run promises it: a perf item timed on this CPU reads PASS or
    UNSTABLE with the load of the machine (the noise model's promise: never FAIL on noise), so those
    two are one outcome here; every other outcome is deterministic."""
    outcomes = run.outcomes()
    for record in run.document["items"]:
        name = f"{record['case']}::{record['nodeid'].split('::')[-1]}"
        if record.get("kind") == "perf" and outcomes[name] in ("PASS", "UNSTABLE"):
            outcomes[name] = "PASS or UNSTABLE"
    return outcomes


def test_parallel_run_matches_serial(tmp_path_factory: pytest.TempPathFactory) -> None:
    parallel_args = (*KINDS_TARGETS, "-n", "2")
    parallel = run_corpus(tmp_path_factory.mktemp("parallel"), *KINDS_CORPORA, args=parallel_args)
    serial = kinds_judged(tmp_path_factory)  # one item at a time, shared with test_expectation_kinds
    assert serial.outcomes(), serial.output
    assert "PASS or UNSTABLE" in promised(serial).values()  # the perf item is there, and judged
    assert promised(parallel) == promised(serial)
    assert parallel.returncode == serial.returncode == 1


@pytest.mark.slow
def test_auto_gives_kregress_s_workers_per_device_when_kregress_is_on_pythonpath(tmp_path) -> None:
    """A GPU runner may install kregress with `pip install --target DIR` on PYTHONPATH: its plugin
    is then registered before xdist's, and without tryfirst xdist's one-worker-per-core answer won.
    (One worker per device asked for, so the answer differs from xdist's on any machine.)"""
    import os
    import subprocess
    import sys

    from conftest import REPO

    target = tmp_path / "site"
    install = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--target",
        str(target),
        str(REPO),
    ]
    subprocess.run(install, check=True, capture_output=True, timeout=300)
    (tmp_path / "corpus").mkdir()
    env = {**os.environ, "PYTHONPATH": str(target), "KREGRESS_CACHE_DIR": str(tmp_path / "cache")}
    where = [sys.executable, "-c", "import kregress.plugin as p; print(p.__file__)"]
    found = subprocess.run(where, env=env, capture_output=True, text=True, check=True, timeout=60)
    assert found.stdout.startswith(str(target)), found.stdout  # the copy on PYTHONPATH is the one used
    for devices, workers in (("1", 1), ("3", 3)):
        command = [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "-v", "--backend",
                   "cuda", "--devices", devices, "--workers-per-device", "1", "-n", "auto"]  # fmt: skip
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        output = done.stdout + done.stderr
        noun = "worker" if workers == 1 else "workers"
        assert f"created: {workers}/{workers} {noun}" in output, output
