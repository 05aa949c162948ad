"""Negative control for corpus/layout_conversion_smem: D loaded through a tensor of pointers (the
shape the tensor-pointer rewrite left upstream) FAILS the ir check and, on xpu:pvc, the shared
memory limit; the block-pointer form holds both."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, CorpusRun

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
    case = tmp_path / "corpus" / "layout_conversion_control"
    case.mkdir(parents=True)
    shutil.copy(REPO / "corpus" / "layout_conversion_smem" / "repro.py", case / "repro.py")
    (case / "case.toml").write_text(CONTROL)
    report = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "-q", "--target", "xpu:pvc",
         "--kregress-json", str(report)],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    run = CorpusRun(done.returncode, done.stdout + done.stderr, json.loads(report.read_text()))
    conversion = run.item("layout_conversion_control::no-conversion-pointers[xpu:pvc]")
    if conversion["outcome"] == "SKIP":
        pytest.skip(f"xpu:pvc not buildable here: {conversion['message']}")
    assert conversion["outcome"] == "FAIL", run.output[-3000:]
    assert "convert_layout" in run.output  # the offending TTGIR lines are shown
    pointers = run.item("layout_conversion_control::shared-pointers[xpu:pvc]")
    assert pointers["outcome"] == "FAIL"
    assert next(iter(pointers["measured"]["shared_bytes"].values())) > 131072
    assert run.item("layout_conversion_control::shared-block-pointer[xpu:pvc]")["outcome"] == "PASS"
