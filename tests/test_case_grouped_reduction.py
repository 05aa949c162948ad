"""Negative control for corpus/grouped_reduction: the layer-norm backward that does not keep the
tensors broadcast after the grouped reduction (the upstream bug's shape) FAILS numerics at every
chunked hidden size and only there; the kept form PASSES; the nvFuser path SKIPs saying why."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO, run_written_case

CONTROL = """
title = "grouped_reduction with the broadcast tensors dropped from the persistent set"
framework = "triton"
[upstream]
repo = "NVIDIA/Fuser"
issue = "https://github.com/NVIDIA/Fuser/pull/4663"
[[expect]]
name = "dropped"
kind = "numerics"
check = "check_triton_dropped_broadcast"
rtol = 1e-4
atol = 1e-4
[[expect]]
name = "kept"
kind = "numerics"
check = "check_triton_fp32"
rtol = 1e-4
atol = 1e-4
[[expect]]
name = "nvfuser"
kind = "numerics"
check = "check_nvfuser_fp32"
rtol = 1e-4
atol = 1e-4
"""


def test_dropped_broadcast_tensors_fail_numerics(tmp_path: Path) -> None:
    repro = (REPO / "corpus" / "grouped_reduction" / "repro.py").read_text()
    run = run_written_case(tmp_path, "grouped_control", repro, CONTROL, ("--target", "cpu:interpreter"))
    dropped = run.item("grouped_control::dropped[cpu:interpreter]")
    assert dropped["outcome"] == "FAIL", run.output[-3000:]
    assert dropped["failure_kind"] == "WRONG_RESULT"
    chunked = [f"{output}@{size}" for size in (8192, 24576, 32768) for output in ("dx", "dweight", "dbias")]
    for name in chunked:
        assert dropped["measured"][name]["mismatched"] > 0, name
        assert name in dropped["message"]
    # One block per row keeps everything in registers: the bug cannot show there.
    assert all(dropped["measured"][f"{o}@1024"]["mismatched"] == 0 for o in ("dx", "dweight", "dbias"))
    assert run.item("grouped_control::kept[cpu:interpreter]")["outcome"] == "PASS"
    nvfuser = run.item("grouped_control::nvfuser[cpu:interpreter]")
    assert nvfuser["outcome"] == "SKIP"
    assert "nvFuser is not installed" in nvfuser["message"]
