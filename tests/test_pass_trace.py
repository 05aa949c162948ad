"""--trace-passes on real compiles: an ir expectation's count after each MLIR pass of Triton, and
the pass after which it crossed the bound."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_page import console_messages, load, needs_chromium

from conftest import run_written_case
from kregress.cli import main
from kregress.history import store
from kregress.pass_trace import PassStep, PassTrace, crossing, trace
from kregress.record import RunResults

REPRO = """
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel


@triton.jit
def transpose_kernel(x_ptr, out_ptr, N: tl.constexpr):
    rows = tl.arange(0, N)
    tile = tl.load(x_ptr + rows[:, None] * N + rows[None, :])
    tl.store(out_ptr + rows[:, None] * N + rows[None, :], tl.trans(tile))


transpose = TritonKernel(
    transpose_kernel,
    args=lambda: {"x_ptr": torch.empty(64 * 64), "out_ptr": torch.empty(64 * 64)},
    configs=[{"N": 64}],
)
"""

MANIFEST = """
title = "a transpose keeps one layout conversion"
framework = "triton"
[upstream]
repo = "example/kernels"
issue = "https://github.com/example/kernels/issues/9"
[[expect]]
name = "no-conversion"
kind = "ir"
kernel = "transpose"
stage = "ttgir"
pattern = 'convert_layout'
max_count = 0
targets = ["cuda:sm_80"]
[[expect]]
name = "no-barrier-in-ttir"
kind = "ir"
kernel = "transpose"
stage = "ttir"
pattern = 'gpu\\.barrier'
max_count = 0
targets = ["cuda:sm_80"]
[[expect]]
name = "ptx-stores"
kind = "ir"
kernel = "transpose"
stage = "ptx"
pattern = 'st\\.global'
min_count = 1
targets = ["cuda:sm_80"]
"""


@pytest.mark.parametrize(
    "toolchain",
    [None, pytest.param("triton==3.0.0", marks=pytest.mark.slow)],
    ids=["installed", "triton-3.0.0"],
)
def test_the_pass_that_brings_the_conversion_is_named(tmp_path: Path, toolchain: str | None) -> None:
    args = ("--target", "cuda:sm_80", "--trace-passes", *(("--toolchain", toolchain) if toolchain else ()))
    run = run_written_case(tmp_path, "transpose", REPRO, MANIFEST, args)
    conversion = run.item("transpose::no-conversion[cuda:sm_80]")
    assert conversion["outcome"] == "FAIL", run.output
    # Measured the same on 3.0.0 (triton_gpu dialect) and 3.6 (ttg): none in TTIR, 7 after the
    # conversion to TTGIR, 10 after Coalesce, 1 left by RemoveLayoutConversions, 1 in the final TTGIR.
    assert "crosses the bound after ConvertTritonToTritonGPU (0 → 7)" in conversion["message"], conversion
    steps = conversion["measured"]["passes"]["N=64"]["steps"]
    assert steps[0] == ["input", 0] and ["ConvertTritonToTritonGPU", 7] in steps
    assert ["TritonGPURemoveLayoutConversions", 1] in steps and steps[-1][1] == 1
    assert conversion["measured"]["passes"]["N=64"]["to_stage_end"] is True
    never = run.item(
        "transpose::no-barrier-in-ttir[cuda:sm_80]"
    )  # a pattern that never appears: a flat timeline, no crossing
    assert never["outcome"] == "PASS"
    assert never["measured"]["passes"]["N=64"]["steps"][0] == ["input", 0]
    assert all(count == 0 for _, count in never["measured"]["passes"]["N=64"]["steps"])
    llvm = run.item("transpose::ptx-stores[cuda:sm_80]")  # not an MLIR stage: said, not silently absent
    assert llvm["measured"]["passes"]["N=64"]["unavailable"].startswith("not traced: ptx comes from LLVM")


def test_without_the_option_nothing_is_traced(tmp_path: Path) -> None:
    run = run_written_case(tmp_path, "transpose", REPRO, MANIFEST, ("--target", "cuda:sm_80"))
    assert "passes" not in run.item("transpose::no-conversion[cuda:sm_80]")["measured"]


def test_crossing_names_the_last_entry_outside_the_bound() -> None:
    steps = [PassStep("", 0, "m"), PassStep("A", 3, "m"), PassStep("B", 1, "m"), PassStep("C", 2, "m")]
    assert crossing(PassTrace(steps, True), None, 1) == "crosses the bound after C (1 → 2)"
    assert crossing(PassTrace(steps, True), None, 5) == ""
    assert crossing(PassTrace(steps[:3], True), None, 1) == (
        "outside the bound after A (0 → 3), back inside after B (3 → 1)"
    )
    start = crossing(PassTrace(steps, True), 1, None)
    assert (
        start
        == "outside the bound from the start (0 in the input to the first pass), back inside after A (0 → 3)"
    )
    never_back = crossing(PassTrace(steps[:1], True), 1, None)
    assert never_back == "outside the bound from the start (0 in the input to the first pass)"
    assert trace("no dumps here", "x", None) is None


@pytest.mark.slow
def test_a_release_bisect_names_the_first_pass_that_differs(tmp_path: Path) -> None:
    """Triton 3.3.0 renamed the TritonGPU dialect to ttg: a pattern on the new name is 0 up to 3.2.0
    and 1 from 3.3.0. The bisect names 3.3.0, and the pass where the two compiles part."""
    case = tmp_path / "corpus" / "transpose"
    case.mkdir(parents=True)
    (case / "repro.py").write_text(REPRO)
    (case / "case.toml").write_text(
        MANIFEST.replace("pattern = 'convert_layout'", "pattern = 'ttg\\.convert_layout'")
    )
    report = tmp_path / "report.md"
    command = [sys.executable, "-m", "kregress.cli", "bisect", "transpose", "-e", "no-conversion",
               "-t", "cuda:sm_80", "--good", "triton==3.1.0", "--bad", "triton==3.4.0",
               "--corpus", str(tmp_path / "corpus"), "--markdown", str(report)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    text = report.read_text()
    assert "First bad (fail): **triton==3.3.0**; last good: triton==3.2.0." in text
    assert (
        "the first pass whose count differs: triton==3.2.0 leaves 0 after ConvertTritonToTritonGPU, "
        "triton==3.3.0 7" in text
    ), text
    assert "| TritonGPURemoveLayoutConversions | 0 | 1 |" in text


GEMM = """
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        a = tl.load(a_ptr + offs[:, None] * K + (k + offs[None, :]))
        b = tl.load(b_ptr + (k + offs[:, None]) * BLOCK + offs[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc)


gemm = TritonKernel(
    gemm_kernel,
    args=lambda: {"a_ptr": torch.empty(64 * 256, dtype=torch.float16),
                  "b_ptr": torch.empty(256 * 64, dtype=torch.float16),
                  "c_ptr": torch.empty(64 * 64), "K": 256},
    configs=[{"BLOCK": 64, "num_stages": 3}],
)
"""

GEMM_MANIFEST = """
title = "a pipelined GEMM stays in a small shared budget"
framework = "triton"
[upstream]
repo = "example/kernels"
issue = "https://github.com/example/kernels/issues/10"
[[expect]]
name = "shared"
kind = "resource"
kernel = "gemm"
metric = "shared_bytes"
max = 1024
trace_passes = "on-fail"
targets = ["cuda:sm_80"]
[[expect]]
name = "registers"
kind = "resource"
kernel = "gemm"
metric = "registers"
max = 1
trace_passes = "on-fail"
targets = ["cuda:sm_80"]
"""


def test_a_shared_memory_fail_is_traced_when_the_case_asks(tmp_path: Path) -> None:
    """No --trace-passes: the case asks for a trace on FAIL. Shared bytes exist only from the
    allocation pass on, so before it the ops that may take shared memory are counted instead."""
    run = run_written_case(tmp_path, "gemm", GEMM, GEMM_MANIFEST, ("--target", "cuda:sm_80"))
    shared = run.item("gemm::shared[cuda:sm_80]")
    assert shared["outcome"] == "FAIL", run.output
    traced = shared["measured"]["passes"]["BLOCK=64,num_stages=3"]
    assert traced["of"].startswith("ops that may take shared memory"), traced
    assert traced["steps"][0] == ["input", 0] and max(count for _, count in traced["steps"]) > 0
    assert any(name == "ConvertTritonToTritonGPU" and count > 0 for name, count in traced["steps"])
    allocated_after, allocated = traced["allocated"][1]  # 0 until the allocation pass
    assert allocated == shared["measured"]["shared_bytes"]["BLOCK=64,num_stages=3"] > 1024
    assert "AllocateSharedMemory" in allocated_after
    # a figure no MLIR pass decides: said so, and not compiled again for nothing
    registers = run.item("gemm::registers[cuda:sm_80]")
    assert registers["outcome"] == "FAIL"
    assert registers["measured"]["passes"]["BLOCK=64,num_stages=3"]["unavailable"].startswith(
        "not traced: registers is decided after the MLIR passes"
    )


def test_a_pass_is_traced_only_on_fail_with_the_run_option(tmp_path: Path) -> None:
    manifest = MANIFEST.replace('stage = "ttgir"', 'stage = "ttgir"\ntrace_passes = "never"', 1)
    refused = run_written_case(tmp_path / "refused", "transpose", REPRO, manifest, ("--target", "cuda:sm_80"))
    assert "trace_passes" in refused.output and "'always' or 'on-fail'" in refused.output, refused.output
    args = ("--target", "cuda:sm_80", "--trace-passes-on-fail")
    run = run_written_case(tmp_path / "run", "transpose", REPRO, MANIFEST, args)
    assert "passes" in run.item("transpose::no-conversion[cuda:sm_80]")["measured"]  # FAIL: traced
    assert "passes" not in run.item("transpose::no-barrier-in-ttir[cuda:sm_80]")["measured"]  # PASS: not


@needs_chromium
def test_a_traced_fail_shows_its_timeline_on_the_page(tmp_path: Path) -> None:
    """From a real traced run to the page in Chromium: the FAIL's passes, open under the item."""
    args = ("--target", "cuda:sm_80", "--trace-passes")
    run = run_written_case(tmp_path, "transpose", REPRO, MANIFEST, args)
    history = tmp_path / "history.sqlite"
    store(history, RunResults.model_validate(run.document))
    site = tmp_path / "site"
    assert main(["report", "--history", str(history), "--html", f"{site}/"]) == 0
    done = load((site / "index.html").as_uri(), "--dump-dom")
    assert done.returncode == 0 and console_messages(done.stderr) == [], done.stderr[-2000:]
    shown = re.findall(r'<details class="pass-timeline"( open(?:="")?)?>(.*?)</details>', done.stdout, re.S)
    failed = [body for opened, body in shown if opened]  # one FAIL, open; the two PASSes folded
    assert len(shown) == 3 and len(failed) == 1, shown
    assert "crosses the bound after ConvertTritonToTritonGPU (0 → 7)" in failed[0]
    assert '<span class="pass">ConvertTritonToTritonGPU</span> <b>7</b>' in failed[0]
    assert any("not traced: ptx comes from LLVM" in body for _, body in shown)
