"""Crashes and hangs are classified and the run goes on; known-bad entries give XFAIL / XPASS;
ahead-of-time compiles use the specialization of a real launch."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CorpusRun, run_once_across_workers, run_written_case


@pytest.fixture(scope="module", params=["fork-server", "fresh-interpreter"])
def crashes(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> CorpusRun:
    """Both ways a job gets its process: forked from the fork server, or a new interpreter."""
    fresh = ("--no-fork-server",) if request.param == "fresh-interpreter" else ()
    targets = ("--target", "cpu:interpreter", *fresh)
    name = f"crashes-{request.param}"
    return run_once_across_workers(tmp_path_factory, name, "outcomes/crashes", args=targets)


@pytest.mark.parametrize(
    ("check", "failure_kind", "says"),
    [
        ("check_abort", "CRASH", "killed by SIGABRT"),
        ("check_segfault", "CRASH", "killed by SIGSEGV"),
        ("check_hang", "TIMEOUT", "no result after 5 s"),
        ("check_out_of_resources", "OUT_OF_RESOURCES", "out of resource: shared memory"),
    ],
)
def test_broken_children_are_classified(crashes: CorpusRun, check: str, failure_kind: str, says: str) -> None:
    item = crashes.item(f"crashes::numerics-{check}[cpu:interpreter]")
    assert (item["outcome"], item["failure_kind"]) == ("FAIL", failure_kind)
    assert says in item["message"]


def test_the_run_goes_on_after_crashes(crashes: CorpusRun) -> None:
    assert crashes.item("crashes::numerics-check_fine[cpu:interpreter]")["outcome"] == "PASS"


def test_a_broken_case_is_an_error_not_a_compiler_failure(crashes: CorpusRun) -> None:
    item = crashes.item("crashes::numerics-check_missing[cpu:interpreter]")
    assert item["outcome"] == "ERROR"
    assert "repro.py has no attribute 'check_missing'" in item["message"]


@pytest.mark.parametrize("fresh", [(), ("--no-fork-server",)], ids=["fork-server", "fresh-interpreter"])
def test_a_crash_under_a_known_bad_release_is_xfail(corpus_runner, fresh: tuple[str, ...]) -> None:
    """The versions a child ran with survive its death, so the known_bad entry covers the crash."""
    run = corpus_runner("outcomes/crashes_known_bad", args=("--target", "cpu:interpreter", *fresh))
    for name, says in (("aborts", "killed by SIGABRT"), ("hangs", "no result after 5 s")):
        item = run.item(f"crashes_known_bad::{name}[cpu:interpreter]")
        assert item["outcome"] == "XFAIL", item["message"]
        assert "known bad (https://github.com/example/kernels/issues/6" in item["message"]
        assert says in item["message"]
        assert item["toolchain"]["triton"]


def test_timeout_option_overrides_the_manifest(corpus_runner) -> None:
    run = corpus_runner(
        "outcomes/crashes", args=("--target", "cpu:interpreter", "-k", "hang", "--case-timeout", "2")
    )
    assert "no result after 2 s" in run.item("crashes::numerics-check_hang[cpu:interpreter]")["message"]


def test_known_bad_turns_fail_into_xfail_and_pass_into_xpass(corpus_runner) -> None:
    run = corpus_runner("outcomes/known_bad", args=("--target", "cuda:sm_90"))
    still = run.item("known_bad::still-broken[cuda:sm_90]")
    assert still["outcome"] == "XFAIL"
    assert "https://github.com/example/kernels/issues/3" in still["message"]
    fixed = run.item("known_bad::looks-fixed[cuda:sm_90]")
    assert fixed["outcome"] == "XPASS"
    assert fixed["message"].startswith("looks fixed on triton ")
    assert "close the upstream issue" in fixed["message"]
    assert "looks fixed (XPASS)" in run.output  # terminal section, like glacier's "fixed" report
    # A known-bad entry for old releases only does not cover the version that ran.
    assert run.item("known_bad::bad-only-in-old-releases[cuda:sm_90]")["outcome"] == "FAIL"
    assert run.returncode == 1


def test_xpass_fails_the_run_under_xfail_strict(corpus_runner) -> None:
    run = corpus_runner(
        "outcomes/known_bad", args=("--target", "cuda:sm_90", "-k", "looks", "-o", "xfail_strict=true")
    )
    assert run.item("known_bad::looks-fixed[cuda:sm_90]")["outcome"] == "XPASS"
    assert run.returncode == 1


def test_aot_compiles_use_the_launch_specialization(corpus_runner) -> None:
    run = corpus_runner("outcomes/specialization", args=("--target", "cuda:sm_90"))
    # Same kernel, same arguments: with the launch's divisibility facts the loads vectorize...
    assert run.item("specialization::vectorized-as-launched[cuda:sm_90]")["outcome"] == "PASS"
    # ...and compiled without them they do not, so the runner must (and does) use the first form.
    unspecialized = run.item("specialization::vectorized-unspecialized[cuda:sm_90]")
    assert unspecialized["outcome"] == "FAIL"
    assert unspecialized["measured"]["count"]["default"] == 0


def test_no_outcome_is_spelled_as_a_string_outside_its_enum() -> None:
    """An outcome compared or written as "FAIL" drifts from the enum unnoticed (a new outcome, a
    renamed one); every module reads kregress.judge.Outcome instead."""
    import ast

    from conftest import REPO
    from kregress.judge import Outcome

    words = {o.value for o in Outcome}
    found = []
    for path in sorted([*(REPO / "runner").rglob("*.py"), *(REPO / "bisect").rglob("*.py")]):
        if path == REPO / "runner" / "judge.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in words:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value!r}")
    assert found == []


def test_a_hung_child_is_stopped_with_its_python_stacks_in_the_record(corpus_runner) -> None:
    """Before it is killed, a child past its time writes where it was: the record says the frame."""
    run = corpus_runner(
        "outcomes/crashes", args=("--target", "cpu:interpreter", "-k", "hang", "--case-timeout", "2")
    )
    message = run.item("crashes::numerics-check_hang[cpu:interpreter]")["message"]
    assert "no result after 2 s; killed; it was at repro.py:" in message and "in check_hang" in message


def test_a_device_job_is_stopped_at_five_times_its_usual_duration_never_under_thirty_seconds() -> None:
    from kregress.job_durations import watchdog_timeout

    known = {"a::x[cuda:device]": 9.0, "b::y[cuda:device]": 2.0, "c::z[cuda:sm_90]": 20.0}
    assert watchdog_timeout(600, known, "a::x[cuda:device]") == (
        45.0,
        "5x its usual 9.0 s on this machine, at least 30 s",
    )
    assert watchdog_timeout(600, known, "b::y[cuda:device]")[0] == 30.0
    assert watchdog_timeout(600, known, "new::n[cuda:device]") == (30.0, "never timed on this machine: 30 s")
    assert watchdog_timeout(20, known, "a::x[cuda:device]") == (20, "")  # the case's timeout comes first
    assert watchdog_timeout(600, {}, "a::x[cuda:device]") == (600, "")  # a first run: the case's


def test_a_timeout_names_the_cases_own_frame_beneath_a_library_call() -> None:
    from kregress.jobs import last_frame

    stacks = (
        "Current thread 0x00007f (most recent call first):\n"
        '  File "/venv/lib/python3.12/site-packages/torch/cuda/__init__.py", line 1162 in synchronize\n'
        '  File "/tmp/c/spinning_kernel/repro.py", line 19 in check_spins\n'
        '  File "/venv/lib/python3.12/site-packages/kregress/worker.py", line 118 in run_job\n'
    )
    case = Path("/tmp/c/spinning_kernel")
    assert last_frame(stacks, case) == "repro.py:19 in check_spins (in __init__.py:1162 in synchronize)"
    # Written after the child's own output, a torch thread first: the case's thread is the one shown.
    other = (
        "Thread 0x00007e (most recent call first):\n"
        '  File "/venv/lib/python3.12/threading.py", line 359 in wait\n'
    )
    assert last_frame("a warning\n\n" + other + "\n" + stacks, case) == last_frame(stacks, case)
    assert last_frame("no stacks here", case) is None


NUMPY_ONLY = """
import numpy as np


def check(device):
    return np.ones(4), np.ones(4)
"""

PRELOAD_CASE = """
title = "The fork server imports what the case imports"
framework = "triton"

[upstream]
repo = "example/kernels"
issue = "https://github.com/example/kernels/issues/8"

[[expect]]
kind = "numerics"
check = "check"
rtol = 0
atol = 0
"""


@pytest.mark.parametrize(
    ("repro", "loaded"),
    [
        (NUMPY_ONLY, False),
        (NUMPY_ONLY.replace("import numpy as np", "import numpy as np\nimport torch"), True),
    ],
    ids=["numpy-only", "imports-torch"],
)
def test_the_fork_server_imports_torch_only_for_a_case_that_does(
    tmp_path: Path, repro: str, loaded: bool
) -> None:
    """A child reports torch among its versions when torch is loaded in it: forked from a server that
    imported torch for every case, a numpy-only case paid torch's import (4 s here) per server."""
    run = run_written_case(tmp_path, "preload", repro, PRELOAD_CASE, ("--target", "cpu:interpreter"))
    item = run.item("preload::numerics-check[cpu:interpreter]")
    assert item["outcome"] == "PASS", run.output[-3000:]
    assert ("torch" in item["toolchain"]) is loaded, item["toolchain"]


def test_a_failures_record_keeps_the_compilers_diagnostics_from_its_output_and_its_errors() -> None:
    """MLIR prints its diagnostic (the exception says "PassManager::run failed"); Triton puts ptxas's
    stderr in the middle of "Internal Triton PTX codegen error", whose last line the message keeps.
    Both are what a reporter quotes: a failed item's record keeps them, a passing one's nothing."""
    from kregress.child_results import ConfigResult, ConfigStatus, JobStatus
    from kregress.jobs import JobOutcome, diagnostics
    from kregress.judge import Outcome, Verdict, diagnostics_of_failure

    printed = "x.py:3:4: error: 'tt.load' op operand #0 must be ptr\nsome chatter\nnote: Pipeline failed"
    assert (
        diagnostics(printed) == "x.py:3:4: error: 'tt.load' op operand #0 must be ptr\nnote: Pipeline failed"
    )
    ptxas = (
        "Internal Triton PTX codegen error\n`ptxas` stderr:\n"
        "ptxas /tmp/a.ptx, line 47; error   : Feature 'cvt with .bf16.f16' requires .target sm_90\n"
        "ptxas fatal   : Ptx assembly aborted due to errors\n\nRepro command: ptxas -lineinfo a.ptx"
    )
    config = ConfigResult(
        "default", status=ConfigStatus.COMPILE_ERROR, error_type="RuntimeError", message=ptxas
    )
    outcome = JobOutcome(JobStatus.OK, configs=[config], diagnostics=diagnostics(printed))
    kept = diagnostics_of_failure(Verdict(Outcome.FAIL, "COMPILE_ERROR: ptxas fatal"), outcome)
    assert kept is not None and "Feature 'cvt with .bf16.f16' requires .target sm_90" in kept
    assert "'tt.load' op operand #0 must be ptr" in kept and "some chatter" not in kept
    assert diagnostics_of_failure(Verdict(Outcome.PASS, "compiled"), outcome) is None
