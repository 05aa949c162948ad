"""Negative control for corpus/scratch_overflow: the same kernel forced into a configuration that
spills FAILS a spill bound with the measured bytes; with enough warps it holds."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, CorpusRun

CONTROL = """
title = "scratch_overflow forced to spill"
framework = "triton"
timeout = 900
[upstream]
repo = "intel/intel-xpu-backend-for-triton"
issue = "https://github.com/intel/intel-xpu-backend-for-triton/issues/3449"
# Upstream's advice: past about 1 KiB of spills the compiler should have chosen differently.
[[expect]]
name = "one-warp-spills"
kind = "resource"
kernel = "one_warp"
metric = "spill_bytes"
max = 1024
[[expect]]
name = "eight-warps-do-not"
kind = "resource"
kernel = "eight_warps"
metric = "spill_bytes"
max = 1024
"""

FORCED = """

one_warp = TritonKernel(wy_repr_bwd_kernel, args=launch_args, configs=[{"num_warps": 1}])
eight_warps = TritonKernel(wy_repr_bwd_kernel, args=launch_args, configs=[{"num_warps": 8}])
"""


@pytest.mark.slow
def test_forced_spilling_config_fails_with_its_bytes(tmp_path: Path) -> None:
    import json

    case = tmp_path / "corpus" / "scratch_overflow_forced"
    case.mkdir(parents=True)
    shutil.copy(REPO / "corpus" / "scratch_overflow" / "repro.py", case / "repro.py")
    with (case / "repro.py").open("a") as repro:
        repro.write(FORCED)
    (case / "case.toml").write_text(CONTROL)
    report = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "-q", "--target", "cuda:sm_90",
         "--kregress-json", str(report)],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    run = CorpusRun(done.returncode, done.stdout + done.stderr, json.loads(report.read_text()))
    spilling = run.item("scratch_overflow_forced::one-warp-spills[cuda:sm_90]")
    assert spilling["outcome"] == "FAIL", run.output[-3000:]
    measured = spilling["measured"]["spill_bytes"]["num_warps=1"]
    assert measured > 1024
    assert f"spill_bytes {measured} > limit 1024" in spilling["message"]
    holding = run.item("scratch_overflow_forced::eight-warps-do-not[cuda:sm_90]")
    assert holding["outcome"] == "PASS", holding["message"]
