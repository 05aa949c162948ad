"""TileLang cases: CUDA source generated and built with nvcc for sm_90, judged like Triton ones."""

from __future__ import annotations

import shutil

import pytest

from conftest import run_corpus

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="TileLang builds CUDA with nvcc")


def test_tilelang_ir_and_resources_on_sm_90(tmp_path) -> None:
    run = run_corpus(
        tmp_path,
        "tilelang/atomic_accumulate",
        args=("--target", "cuda:sm_90", "--target", "hip:gfx942", "--target", "cpu:interpreter"),
    )
    assert run.item("atomic_accumulate::uses-atomics[cuda:sm_90]")["outcome"] == "PASS", run.output[-3000:]
    no_atomics = run.item("atomic_accumulate::no-atomics[cuda:sm_90]")
    assert no_atomics["outcome"] == "FAIL"
    assert "AtomicAdd(" in run.output  # the offending CUDA source line is shown
    registers = run.item("atomic_accumulate::resource-registers-accumulate[cuda:sm_90]")
    assert registers["outcome"] == "PASS"
    assert 0 < registers["measured"]["registers"]["default"] <= 255
    assert run.item("atomic_accumulate::uses-atomics[hip:gfx942]")["message"] == (
        "the TileLang adapter builds CUDA targets only, not hip:gfx942"
    )
    assert run.document["not_applicable"]["by_reason"]["TileLang has no CPU interpreter"] >= 1


@pytest.mark.slow
def test_old_tilelang_loads_without_a_gpu_and_is_judged(tmp_path) -> None:
    """TileLang 0.1.6.post2 links against libcuda.so.1 and CUDA 12 libraries: its environment
    gets the CUDA 12 runtime wheels and a driver stub, and its generated source is judged."""
    run = run_corpus(
        tmp_path,
        "tilelang/atomic_accumulate",
        args=("--toolchain", "tilelang==0.1.6.post2", "--target", "cuda:sm_90"),
    )
    uses = run.item("atomic_accumulate::uses-atomics[cuda:sm_90]")
    assert uses["outcome"] == "PASS", run.output[-3000:]
    assert uses["toolchain"]["tilelang"] == "0.1.6.post2"
    assert run.item("atomic_accumulate::no-atomics[cuda:sm_90]")["outcome"] == "FAIL"
    registers = run.item("atomic_accumulate::resource-registers-accumulate[cuda:sm_90]")
    assert registers["outcome"] == "SKIP"  # that release exposes no PTX: reported, never passed
