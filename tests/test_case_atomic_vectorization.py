"""Negative controls for corpus/atomic_vectorization (TileLang) and its Triton twin: the
no-vector-atomics check FAILs, printing the offending lines, on a kernel whose atomics are
vectorized (the contiguous twin today; the custom layout itself under TileLang 0.1.6.post2, the
upstream bad release), and PASSes on the custom-layout kernel with today's compilers."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO, run_written_case

CONTROL = """
title = "atomic_vectorization: the no-vector check held against both kernels"
framework = "{framework}"
timeout = 900
[upstream]
repo = "tile-ai/tilelang"
issue = "https://github.com/tile-ai/tilelang/issues/1366"
[[expect]]
name = "custom-layout"
kind = "ir"
kernel = "dq_accumulate"
stage = "{stage}"
pattern = '{pattern}'
max_count = 0
[[expect]]
name = "contiguous"
kind = "ir"
kernel = "contiguous_accumulate"
stage = "{stage}"
pattern = '{pattern}'
max_count = 0
"""
TILELANG = {"framework": "tilelang", "stage": "cuda_source", "pattern": r"AtomicAddx[24]\b"}
TRITON = {"framework": "triton", "stage": "ptx", "pattern": r"(atom|red)\.global\S*\.v[248]\."}


def judge(tmp_path: Path, case: str, fields: dict, *args: str):
    repro = (REPO / "corpus" / case / "repro.py").read_text()
    return run_written_case(tmp_path, "atomic_control", repro, CONTROL.format(**fields), args)


def test_triton_vector_atomics_fail_the_check_and_are_shown(tmp_path: Path) -> None:
    run = judge(tmp_path, "atomic_vectorization_triton", TRITON, "--target", "cuda:sm_90")
    assert run.item("atomic_control::custom-layout[cuda:sm_90]")["outcome"] == "PASS", run.output[-3000:]
    contiguous = run.item("atomic_control::contiguous[cuda:sm_90]")
    assert contiguous["outcome"] == "FAIL"
    assert "atom.global.gpu.acq_rel.add.v4.f32" in run.output  # the offending PTX line is printed


@pytest.mark.slow
def test_tilelang_vector_atomics_fail_the_check_and_are_shown(tmp_path: Path) -> None:
    run = judge(tmp_path, "atomic_vectorization", TILELANG, "--target", "cuda:sm_90")
    custom = run.item("atomic_control::custom-layout[cuda:sm_90]")
    if custom["outcome"] == "SKIP":
        pytest.skip(f"TileLang cannot build here: {custom['message']}")
    assert custom["outcome"] == "PASS", run.output[-3000:]
    assert run.item("atomic_control::contiguous[cuda:sm_90]")["outcome"] == "FAIL"
    assert "AtomicAddx2((&(dQ[" in run.output  # the GEMM fragment holds pairs: x2


@pytest.mark.slow
def test_the_upstream_bad_release_fails_on_the_custom_layout(tmp_path: Path) -> None:
    """TileLang 0.1.6.post2 emits AtomicAddx2 into the permuted dQ: the upstream bug, reproduced."""
    run = judge(tmp_path, "atomic_vectorization", TILELANG, "--target", "cuda:sm_90",
                "--toolchain", "tilelang==0.1.6.post2")  # fmt: skip
    custom = run.item("atomic_control::custom-layout[cuda:sm_90]")
    if custom["outcome"] == "SKIP":
        pytest.skip(f"tilelang 0.1.6.post2 cannot be set up here: {custom['message']}")
    assert custom["outcome"] == "FAIL", run.output[-3000:]
    assert "AtomicAddx2((&(dQ[" in run.output
