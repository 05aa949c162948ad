"""Negative controls for corpus/native_binary_flags: flags that do not match the GRF mode asked
for, native code built for another device than the target's, and a cubin for another arch each
FAIL with both values shown; the case itself holds where the compiler is right."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO, run_written_case

REPRO = (REPO / "corpus" / "native_binary_flags" / "repro.py").read_text()

CONTROL = r"""
title = "native_binary_flags with expectations the compiler does not meet"
framework = "triton"
[upstream]
repo = "intel/intel-xpu-backend-for-triton"
issue = "https://github.com/intel/intel-xpu-backend-for-triton/pull/2391"
[[expect]]
name = "large-grf-gets-small-flags"
kind = "artifact"
kernel = "tile"
property = "build_flags"
targets = ["xpu"]
where = { grf_mode = "large" }
contains = "-cl-intel-128-GRF-per-thread"
[[expect]]
name = "ocloc-device-is-target"
kind = "artifact"
kernel = "tile"
property = "native_device"
targets = ["xpu"]
where = { generate_native_code = true }
equals = "{arch}"
[[expect]]
name = "cubin-for-sm80"
kind = "artifact"
kernel = "tile"
property = "binary_arch"
targets = ["cuda"]
equals = "sm_80"
"""


def xpu_item(run, name: str) -> dict:
    item = run.item(name)
    if item["outcome"] == "SKIP":
        pytest.skip(f"xpu not buildable here: {item['message']}")
    return item


@pytest.mark.slow
def test_wrong_flags_and_device_fail_with_both_values(tmp_path: Path) -> None:
    run = run_written_case(
        tmp_path, "flags_control", REPRO, CONTROL, ("--target", "xpu:dg2", "--target", "cuda:sm_90")
    )
    flags = xpu_item(run, "flags_control::large-grf-gets-small-flags[xpu:dg2]")
    assert flags["outcome"] == "FAIL", run.output[-3000:]
    assert "'-cl-intel-256-GRF-per-thread'" in flags["message"]
    assert "'-cl-intel-128-GRF-per-thread'" in flags["message"]
    # triton-xpu hard-codes `-device pvc` in its ocloc call: on an A770 target that is the bug.
    device = run.item("flags_control::ocloc-device-is-target[xpu:dg2]")
    assert device["outcome"] == "FAIL"
    assert "native_device is 'pvc', expected 'dg2'" in device["message"]
    cubin = run.item("flags_control::cubin-for-sm80[cuda:sm_90]")
    assert cubin["outcome"] == "FAIL"
    assert "binary_arch is 'sm_90', expected 'sm_80'" in cubin["message"]


@pytest.mark.slow
def test_case_holds_where_the_compiler_is_right(tmp_path: Path) -> None:
    manifest = (REPO / "corpus" / "native_binary_flags" / "case.toml").read_text()
    targets = ("--target", "xpu:pvc", "--target", "cuda:sm_90")
    run = run_written_case(tmp_path, "native_binary_flags", REPRO, manifest, targets)
    xpu_item(run, "native_binary_flags::flags-large-grf[xpu:pvc]")
    for name in (
        "flags-large-grf[xpu:pvc]",
        "flags-small-grf[xpu:pvc]",
        "flags-default-grf[xpu:pvc]",
        "ocloc-device-is-target[xpu:pvc]",
        "ocloc-options-large-grf[xpu:pvc]",
        "binary-spirv[xpu:pvc]",
        "second-compile-cache-hit[xpu:pvc]",
        "cubin-arch[cuda:sm_90]",
        "cubin-registers-match-ptxas[cuda:sm_90]",
        "second-compile-cache-hit[cuda:sm_90]",
        "binary-native[xpu:pvc]",
        "native-registers-large-grf[xpu:pvc]",
        "native-registers-small-grf[xpu:pvc]",
        "native-binary-for-target-device[xpu:pvc]",
    ):
        assert run.item(f"native_binary_flags::{name}")["outcome"] == "PASS", name
    n_regs = run.item("native_binary_flags::n-regs-large-grf[xpu:pvc]")
    assert n_regs["outcome"] == "SKIP" and "driver" in n_regs["message"]
