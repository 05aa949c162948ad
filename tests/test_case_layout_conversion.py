"""Negative control for corpus/layout_conversion_smem: D loaded through a tensor of pointers (the
shape the tensor-pointer rewrite left upstream) FAILS the ir check and, on xpu:pvc, the shared
memory limit; the block-pointer form holds both."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO, run_written_case

CONTROL = r"""
title = "layout_conversion_smem with D through a tensor of pointers"
framework = "triton"
timeout = 900
[upstream]
repo = "intel/intel-xpu-backend-for-triton"
issue = "https://github.com/intel/intel-xpu-backend-for-triton/issues/2378"
[[expect]]
name = "no-conversion-pointers"
kind = "ir"
kernel = "matmul_add_tensor_of_pointers"
stage = "ttgir"
pattern = 'convert_layout .*#(mma|dpas)\w*> -> .*#blocked|convert_layout .*#blocked\w*> -> .*#(mma|dpas)'
max_count = 0
[[expect]]
name = "shared-pointers"
kind = "resource"
kernel = "matmul_add_tensor_of_pointers"
metric = "shared_bytes"
[[expect]]
name = "shared-block-pointer"
kind = "resource"
kernel = "matmul_add"
metric = "shared_bytes"
"""


@pytest.mark.slow
def test_tensor_of_pointers_for_d_fails_on_xpu(tmp_path: Path) -> None:
    repro = (REPO / "corpus" / "layout_conversion_smem" / "repro.py").read_text()
    run = run_written_case(tmp_path, "layout_conversion_control", repro, CONTROL, ("--target", "xpu:pvc"))
    conversion = run.item("layout_conversion_control::no-conversion-pointers[xpu:pvc]")
    if conversion["outcome"] == "SKIP":
        pytest.skip(f"xpu:pvc not buildable here: {conversion['message']}")
    assert conversion["outcome"] == "FAIL", run.output[-3000:]
    assert "convert_layout" in run.output  # the offending TTGIR lines are shown
    pointers = run.item("layout_conversion_control::shared-pointers[xpu:pvc]")
    assert pointers["outcome"] == "FAIL"
    assert next(iter(pointers["measured"]["shared_bytes"].values())) > 131072
    assert run.item("layout_conversion_control::shared-block-pointer[xpu:pvc]")["outcome"] == "PASS"
