"""Negative control for corpus/scratch_overflow: the same kernel forced into a configuration that
spills FAILS a spill bound with the measured bytes; with enough warps it holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO, run_written_case

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
    repro = (REPO / "corpus" / "scratch_overflow" / "repro.py").read_text() + FORCED
    run = run_written_case(tmp_path, "scratch_overflow_forced", repro, CONTROL, ("--target", "cuda:sm_90"))
    spilling = run.item("scratch_overflow_forced::one-warp-spills[cuda:sm_90]")
    assert spilling["outcome"] == "FAIL", run.output[-3000:]
    measured = spilling["measured"]["spill_bytes"]["num_warps=1"]
    assert measured > 1024
    assert f"spill_bytes {measured} > limit 1024" in spilling["message"]
    holding = run.item("scratch_overflow_forced::eight-warps-do-not[cuda:sm_90]")
    assert holding["outcome"] == "PASS", holding["message"]
