"""TileLang cases: CUDA source generated and built with nvcc for sm_90, judged like Triton ones."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import CORPORA, run_corpus, run_written_case

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


COMPILES_MANIFEST = """
title = "TileLang: atomic accumulation, built to a cubin"
framework = "tilelang"

[upstream]
repo = "example/kernels"
issue = "https://github.com/example/kernels/issues/7"

[[expect]]
name = "builds"
kind = "compiles"
kernel = "accumulate"
"""


@pytest.mark.slow
def test_an_old_tilelang_release_links_what_it_builds_against_the_driver_stub(tmp_path) -> None:
    """TileLang 0.1.6.post2 links the host code it generates with `-lcuda`: with no driver on this
    machine every kernel failed to link ("cannot find -lcuda") and SKIPped as a fault of the
    toolkit. Its environment's driver stub is on LIBRARY_PATH too: the kernel is built."""
    repro = (CORPORA / "tilelang" / "atomic_accumulate" / "repro.py").read_text()
    run = run_written_case(
        tmp_path, "accumulate_built", repro, COMPILES_MANIFEST,
        args=("--toolchain", "tilelang==0.1.6.post2", "--target", "cuda:sm_90"),
    )  # fmt: skip
    built = run.item("accumulate_built::builds[cuda:sm_90]")
    assert built["outcome"] == "PASS", run.output[-3000:]
    assert built["toolchain"]["tilelang"] == "0.1.6.post2"


STAGED_REPRO = """import tilelang.language as T

from kregress.case import TileLangKernel


def build(n: int = 128):
    @T.prim_func
    def staged(src: T.Tensor((n,), "float32"), dst: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=n) as bx:
            shared = T.alloc_shared((n,), "float32")
            T.copy(src, shared)
            for i in T.Parallel(n):
                dst[i] = shared[i] * 2.0

    return staged


staged = TileLangKernel(build)
"""


@pytest.mark.slow
def test_a_built_kernel_whose_initialization_needs_a_gpu_is_never_the_compilers_failure(tmp_path) -> None:
    """Built and linked, TileLang 0.1.6.post2 initializes the kernel's library at once: a kernel
    with shared memory sets its dynamic size through the CUDA runtime, which fails where there is
    no GPU ("CUDA driver version is insufficient"). That had been judged a COMPILE_ERROR FAIL: it
    is a SKIP saying a GPU is needed to tell."""
    manifest = COMPILES_MANIFEST.replace('kernel = "accumulate"', 'kernel = "staged"')
    run = run_written_case(
        tmp_path, "staged_built", STAGED_REPRO, manifest,
        args=("--toolchain", "tilelang==0.1.6.post2", "--target", "cuda:sm_90"),
    )  # fmt: skip
    built = run.item("staged_built::builds[cuda:sm_90]")
    assert built["outcome"] == "SKIP", run.output[-3000:]
    assert "needs a GPU to tell" in built["message"]


@pytest.mark.slow
def test_a_tilelang_release_linked_against_cuda_13_loads_and_is_judged(tmp_path) -> None:
    """TileLang 0.1.7.post2 links libnvrtc.so.13: its environment gets CUDA 13's NVRTC wheel (whose
    libraries sit in nvidia/cu13/lib) and is judged, where it once could only SKIP ("cannot load
    here: libnvrtc.so.13")."""
    run = run_corpus(
        tmp_path,
        "tilelang/atomic_accumulate",
        args=("--toolchain", "tilelang==0.1.7.post2", "--target", "cuda:sm_90"),
    )
    uses = run.item("atomic_accumulate::uses-atomics[cuda:sm_90]")
    assert uses["outcome"] == "PASS", run.output[-3000:]
    assert uses["toolchain"]["tilelang"] == "0.1.7.post2"
    assert run.item("atomic_accumulate::no-atomics[cuda:sm_90]")["outcome"] == "FAIL"


TRACED_MANIFEST = """
title = "TileLang: a parallel loop lowered to threads"
framework = "tilelang"
[upstream]
repo = "example/kernels"
issue = "https://github.com/example/kernels/issues/7"
[[expect]]
name = "no-parallel-loop"
kind = "ir"
kernel = "accumulate"
stage = "cuda_source"
pattern = 'T\\.parallel\\('
max_count = 0
[[expect]]
name = "no-atomics"
kind = "ir"
kernel = "accumulate"
stage = "cuda_source"
pattern = 'AtomicAdd'
max_count = 0
"""


@pytest.mark.parametrize(
    ("toolchain", "lowered_by", "atomics"),
    [
        (None, "tl.LowerTileOp", "crosses the bound after CUDA codegen (0 → 1)"),
        # An older TVM: other passes, and the atomic already spelled AtomicAdd in its TIR, so it is
        # there from the start; the host module's pipeline filters the device function out (0) and
        # the device pipeline's tir.Filter keeps it (1): the last entry outside the bound.
        pytest.param("tilelang==0.1.6.post2", "tl.LayoutInference",
                     "crosses the bound after tir.Filter (0 → 1)", marks=pytest.mark.slow),
    ],
    ids=["installed", "tilelang-0.1.6.post2"],
)  # fmt: skip
def test_tilelang_passes_are_traced_in_tir(tmp_path, toolchain, lowered_by, atomics) -> None:
    """TVM's pass instrumentation: the TIR after every pass. A loop that only TIR has is followed
    to the pass that lowers it; a CUDA spelling TIR never prints shows up at code generation."""
    repro = (CORPORA / "tilelang" / "atomic_accumulate" / "repro.py").read_text()
    args = ("--target", "cuda:sm_90", "--trace-passes", *(("--toolchain", toolchain) if toolchain else ()))
    run = run_written_case(tmp_path, "accumulate", repro, TRACED_MANIFEST, args)
    loop = run.item("accumulate::no-parallel-loop[cuda:sm_90]")
    assert loop["outcome"] == "PASS", run.output[-3000:]
    traced = loop["measured"]["passes"]["default"]
    assert traced["steps"][0] == ["input", 1] and traced["steps"][-1] == ["CUDA codegen", 0], traced
    assert traced["crossing"] == (
        "outside the bound from the start (1 in the input to the first pass), "
        f"back inside after {lowered_by} (1 → 0)"
    )
    atomics_item = run.item("accumulate::no-atomics[cuda:sm_90]")
    assert atomics_item["outcome"] == "FAIL"
    assert atomics in atomics_item["message"], atomics_item["message"]


HALF_TAN_MANIFEST = """
title = "TileLang: 16-bit tan"
framework = "tilelang"
[upstream]
repo = "example/kernels"
issue = "https://github.com/example/kernels/issues/8"
[[expect]]
name = "compiles-f16"
kind = "compiles"
kernel = "slopes_f16"
targets = ["cuda:sm_90"]
[[expect]]
name = "compiles-f32"
kind = "compiles"
kernel = "slopes_f32"
targets = ["cuda:sm_90"]
"""


@pytest.mark.slow
def test_a_release_that_takes_no_dict_target_is_judged_and_its_bad_source_fails(tmp_path) -> None:
    """tilelang 0.1.7.post3 reads a dict target's `.kind` and raised AttributeError, which was
    reported as this machine's toolkit failing. Given a TVM Target it compiles; its 16-bit tan calls
    htan(), which nvcc refuses in the generated kernel file: the compiler's FAIL, not a SKIP."""
    repro = (CORPORA.parent.parent / "corpus" / "tilelang_half_tan" / "repro.py").read_text()
    run = run_written_case(
        tmp_path, "half_tan", repro, HALF_TAN_MANIFEST,
        args=("--toolchain", "tilelang==0.1.7.post3", "--target", "cuda:sm_90"),
    )  # fmt: skip
    assert "has no attribute 'kind'" not in run.output
    half = run.item("half_tan::compiles-f16[cuda:sm_90]")
    assert half["outcome"] == "FAIL", run.output[-3000:]
    assert half["failure_kind"] == "COMPILE_ERROR" and "htan" in half["message"]
    assert run.item("half_tan::compiles-f32[cuda:sm_90]")["outcome"] == "PASS"


@pytest.mark.slow
def test_a_release_fix_search_tells_an_item_whose_code_changed_from_one_whose_did_not(tmp_path) -> None:
    """tilelang 0.1.14 fixed 16-bit tan in its own headers: the float16 kernel's generated source is
    the same on both sides, but only 0.1.14 builds it to PTX; the float32 control generates the same
    source and PTX under both. The report tells the two apart, and does not call the fix suspect."""
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPORA.parent.parent / "corpus" / "tilelang_half_tan", corpus / "half_tan")
    report = tmp_path / "report.md"
    command = [sys.executable, "-m", "kregress.cli", "bisect", "half_tan", "--corpus", str(corpus),
               "--target", "cuda:sm_90", "--good", "tilelang==0.1.13", "--bad", "tilelang==0.1.14",
               "--regress", "pass", "--markdown", str(report)]  # fmt: skip
    env = {**os.environ, "KREGRESS_CACHE_DIR": str(tmp_path / "cache")}  # judged now, not from a memo
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, env=env, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    text = report.read_text()
    assert "First fixed (the whole case holds): **tilelang==0.1.14**" in text
    assert "Generated code, tilelang==0.1.13 → tilelang==0.1.14:" in text
    changed = "- compiles-f16[cuda:sm_90] (its outcome changed): differs (default: ptx only at the first bad"
    assert changed in text
    assert "- compiles-f32[cuda:sm_90] (same outcome): identical at every stage (cuda_source, ptx)" in text
    assert "https://github.com/tile-ai/tilelang/compare/v0.1.13...v0.1.14" in text


def test_generated_ptx_is_kept_by_release_configs_nvcc_arch_and_source(tmp_path, monkeypatch) -> None:
    """nvcc runs once for the same source, arch, release, pass configs and nvcc; any of them
    changing asks it again, and without an nvcc on PATH nothing is kept."""
    from types import SimpleNamespace

    from kregress.adapters.tilelang_aot import kept_ptx

    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "bin").mkdir()
    nvcc = tmp_path / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\n")
    nvcc.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    calls: list[int] = []

    def get_ptx() -> str:
        calls.append(1)
        return f"// ptx {len(calls)}"

    plain, configured = SimpleNamespace(pass_configs={}), SimpleNamespace(pass_configs={"tl.x": True})
    assert kept_ptx(get_ptx, "0.1.15", plain, "src", "sm_90") == "// ptx 1"
    assert kept_ptx(get_ptx, "0.1.15", plain, "src", "sm_90") == "// ptx 1"
    for version, kernel, source, arch in [
        ("0.1.14", plain, "src", "sm_90"),
        ("0.1.15", configured, "src", "sm_90"),
        ("0.1.15", plain, "other src", "sm_90"),
        ("0.1.15", plain, "src", "sm_80"),
    ]:
        kept_ptx(get_ptx, version, kernel, source, arch)
    assert len(calls) == 5
    nvcc.write_text("#!/bin/sh\n# another nvcc\n")
    assert kept_ptx(get_ptx, "0.1.15", plain, "src", "sm_90") == "// ptx 6"
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    kept_ptx(get_ptx, "0.1.15", plain, "src", "sm_90")
    kept_ptx(get_ptx, "0.1.15", plain, "src", "sm_90")
    assert len(calls) == 8
