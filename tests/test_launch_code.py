"""Compiling first: the code a device check would launch, known on the CPU (kregress.launch_code),
and a bisect point that launches the same code as one judged takes its verdict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

from kregress.adapters.triton_aot import gpu_target
from kregress.launch_code import CodeUnknown, launch_code

SM90 = gpu_target("cuda", "sm_90", 32)


@triton.jit
def scale_kernel(x_ptr, out_ptr, factor, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * factor)


def check_scale(device: str, block: int = 64) -> tuple:
    x = torch.arange(block, dtype=torch.float32, device=device)
    out = torch.zeros_like(x)
    scale_kernel[(1,)](x, out, 2.0, BLOCK=block)
    scale_kernel[(1,)](out, out, 0.5, BLOCK=block)
    return out, x


def test_each_launch_is_compiled_for_the_device_and_nothing_runs() -> None:
    code = launch_code(check_scale, SM90)
    assert list(code) == ["scale_kernel#0", "scale_kernel#1"]
    assert {"ttir", "ttgir", "llir", "ptx", "cubin"} <= set(code["scale_kernel#0"])
    assert launch_code(check_scale, SM90) == code  # the same code, hashed alike
    wider = launch_code(lambda device: check_scale(device, block=128), SM90)
    assert wider["scale_kernel#0"]["ttir"] != code["scale_kernel#0"]["ttir"]
    sm80 = launch_code(check_scale, gpu_target("cuda", "sm_80", 32))
    assert sm80["scale_kernel#0"]["ptx"] != code["scale_kernel#0"]["ptx"]


def test_code_that_cannot_be_known_without_the_device_says_why() -> None:
    def uses_inductor(device: str) -> None:
        torch.compile(lambda x: x * 2)(torch.ones(4))

    def reads_outputs(device: str) -> None:
        out, _ = check_scale(device)
        if out.sum() == 0:  # never computed: a compile-first run cannot follow this
            raise AssertionError("the outputs were not computed")

    for check, why in ((uses_inductor, "torch.compile"), (reads_outputs, "stopped before its end"),
                       (lambda device: None, "launched no Triton kernel")):  # fmt: skip
        with pytest.raises(CodeUnknown, match=why):
            launch_code(check, SM90)


def test_a_device_item_compiled_first_skips_saying_how_many_launches() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus/grouped_reduction", "corpus/cas_loop_int64", "-p",
         "no:cacheprovider", "--backend", "cuda", "--compile-first", "cuda:sm_90", "-k", "numerics", "-q",
         "-rs"],
        cwd=Path(__file__).parents[1], capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    said = done.stdout
    assert done.returncode == 0, said[-3000:]
    assert (
        "compiled first, not run on a device: 8 launches compiled for cuda:sm_90" in said
    )  # 4 sizes, 2 kernels
    assert "1 launch compiled for cuda:sm_90" in said
    assert "code unknown: torch.compile builds its kernels on the device" in said


def test_a_point_launching_the_code_of_a_judged_point_takes_its_verdict() -> None:
    from rich.console import Console

    from kregress.bisect.bisection import Bisection, Point
    from kregress.bisect.candidates import Candidate
    from kregress.bisect.search import PointVerdict
    from kregress.judging_service import CaseRun, Memo

    bisection = Bisection(
        CaseRun(Path("corpus"), "c", None, "cuda:device"), "fail", 1, None, Memo(Path("/nonexistent")),
        Console(quiet=True), compile_first="cuda:sm_90",
    )  # fmt: skip
    code = {"numerics[cuda:device]": {"k#0": {"ptx": "a"}}}
    judged = Point(Candidate("triton==3.3.0", toolchain="triton==3.3.0"), PointVerdict.BAD, launch_code=code)
    bisection.report_point(judged)
    assert bisection.same_code(code) is judged
    assert bisection.same_code({"numerics[cuda:device]": {"k#0": {"ptx": "b"}}}) is None
    assert bisection.same_code(None) is None  # unknown code never inherits
    skipped = Point(
        Candidate("triton==3.4.0", toolchain="triton==3.4.0"), PointVerdict.SKIP, launch_code=code
    )
    bisection.points = {"x": skipped}
    assert bisection.same_code(code) is None  # a skip is no verdict to take


def test_compile_first_auto_picks_the_compile_target_of_this_machine_s_device() -> None:
    from kregress.matrix import load_matrix

    matrix = load_matrix(None)
    found = matrix.compile_target_for("cuda", "sm_90")  # an H100 or H200
    assert found is not None and found.name == "cuda:sm_90"
    found = matrix.compile_target_for("hip", "gfx942")
    assert found is not None and found.name == "hip:gfx942"
    assert matrix.compile_target_for("cuda", "sm_86") is None  # no compile target builds for it
    assert matrix.compile_target_for("cuda", None) is None  # no device seen


def test_bisect_refuses_a_compile_first_target_that_is_not_a_compile_target() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kregress.cli", "bisect", "cas_loop_int64", "--target", "cuda:device",
         "--good", "triton==3.5.1", "--bad", "triton==3.6.0", "--compile-first", "cuda:device"],
        cwd=Path(__file__).parents[1], capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 64, done.stdout + done.stderr
    assert "--compile-first 'cuda:device' is not a compile target of the matrix" in done.stderr


@pytest.mark.slow  # the two releases' environments
def test_a_posterior_run_of_a_point_that_launches_a_judged_points_code_is_a_run_of_that_point(
    tmp_path: Path,
) -> None:
    """The posterior search asks for one run at a time: a point whose compiled launches equal a judged
    point's is not run on the device; the run goes to the twin and counts for both."""
    from rich.console import Console

    from kregress.bisect.bisection import Bisection, Point
    from kregress.bisect.candidates import Candidate
    from kregress.bisect.search import PointVerdict
    from kregress.judging_service import CaseRun, Memo, Observation, judgement_key

    memo = Memo(tmp_path / "memo.json")
    run = CaseRun(
        Path(__file__).parents[1] / "corpus", "grouped_reduction", "numerics-triton-fp32", "cuda:device"
    )
    bisection = Bisection(run, "fail", 1, None, memo, Console(quiet=True), compile_first="cuda:sm_90")
    judged, twin = (Candidate(spec, toolchain=spec) for spec in ("triton==3.5.0", "triton==3.6.0"))
    code = {"numerics-triton-fp32[cuda:device]": {"k#0": {"ptx": "a"}}}
    _, environment = bisection.environment(judged)  # what the device's runs were made with
    failed = Observation.from_parts(
        {"numerics-triton-fp32[cuda:device]": "FAIL"}, {"numerics-triton-fp32[cuda:device]": "WRONG_RESULT"},
        installed=environment.installed,
    )  # fmt: skip
    for _ in range(2):  # what the device said of the judged point, twice
        memo.add(judgement_key(run, judged.toolchain), failed)
    bisection.report_point(Point(judged, PointVerdict.BAD, [PointVerdict.BAD], [failed], launch_code=code))
    bisection.report_point(
        Point(
            twin, PointVerdict.BAD, [PointVerdict.BAD], [failed], launch_code=code, same_code_as=judged.label
        )
    )
    assert bisection.judge_run(twin) == PointVerdict.BAD
    assert bisection.points[judged.key].votes == [PointVerdict.BAD, PointVerdict.BAD]  # its second run
    assert bisection.points[twin.key].same_code_as == judged.label
    assert memo.get(run, twin.toolchain) == []  # never run as itself
