"""Every expectation kind PASSES on a kernel that holds it and FAILS on one that breaks it,
judged by the real plugin on real Triton compiles (cuda:sm_90, hip:gfx942) and the interpreter."""

from __future__ import annotations

import pytest

from conftest import CorpusRun, kinds_judged, run_corpus


@pytest.fixture(scope="module")
def kinds(tmp_path_factory: pytest.TempPathFactory) -> CorpusRun:
    return kinds_judged(tmp_path_factory)


@pytest.mark.parametrize(
    ("holds", "breaks", "failure_kind"),
    [
        ("vector_add::compiles-add[cuda:sm_90]", "broken::compiles-tiny_dot[cuda:sm_90]", "COMPILE_ERROR"),
        ("vector_add::compiles-add[hip:gfx942]", "broken::compiles-tiny_dot[hip:gfx942]", "COMPILE_ERROR"),
        (
            "vector_add::resource-shared_bytes-add[cuda:sm_90]",
            "broken::resource-shared_bytes-staged_dot[cuda:sm_90]",
            "OVER_LIMIT",
        ),
        (
            "vector_add::resource-shared_bytes-add[hip:gfx942]",
            "broken::resource-shared_bytes-staged_dot[hip:gfx942]",
            "OVER_LIMIT",
        ),
        ("vector_add::vectorized-loads[cuda:sm_90]", "broken::no-vector-loads[cuda:sm_90]", "IR_MISMATCH"),
        (
            "vector_add::numerics-check_add[cpu:interpreter]",
            "broken::numerics-check_off_by_one[cpu:interpreter]",
            "WRONG_RESULT",
        ),
        (
            "vector_add::perf-add_once-vs-add_once_again[cpu:interpreter]",
            "broken::perf-add_eight_times-vs-add_once[cpu:interpreter]",
            "TOO_SLOW",
        ),
        (
            "vector_add::artifact-binary_kind-add[cuda:sm_90]",
            "broken::artifact-binary_kind-off_by_one[cuda:sm_90]",
            "ARTIFACT_MISMATCH",
        ),
    ],
)
def test_kind_passes_and_fails(kinds: CorpusRun, holds: str, breaks: str, failure_kind: str) -> None:
    assert kinds.item(holds)["outcome"] == "PASS", kinds.item(holds)["message"]
    broken = kinds.item(breaks)
    assert broken["outcome"] == "FAIL", broken["message"]
    assert broken["failure_kind"] == failure_kind
    assert broken["message"].startswith(failure_kind)


def test_failure_messages_show_measured_value_and_limit(kinds: CorpusRun) -> None:
    over = kinds.item("broken::resource-shared_bytes-staged_dot[cuda:sm_90]")
    assert over["limit"] == 1024
    measured = over["measured"]["shared_bytes"]["num_warps=4,num_stages=2"]
    assert measured > 1024
    assert f"shared_bytes {measured} > limit 1024" in over["message"]
    ir = kinds.item("broken::no-vector-loads[cuda:sm_90]")
    assert "ld.global.v4" in kinds.output  # offending PTX lines are printed on FAIL
    assert ir["measured"]["count"]["default"] >= 1
    wrong = kinds.item("broken::numerics-check_off_by_one[cpu:interpreter]")
    assert wrong["measured"]["out"]["mismatched"] > 0
    assert "max abs err" in wrong["message"]


def test_every_config_is_judged(kinds: CorpusRun) -> None:
    shared = kinds.item("vector_add::resource-shared_bytes-add[cuda:sm_90]")
    assert set(shared["measured"]["shared_bytes"]) == {"num_warps=4", "num_warps=8"}


def test_records_carry_toolchain_versions_and_upstream(kinds: CorpusRun) -> None:
    item = kinds.item("vector_add::compiles-add[cuda:sm_90]")
    assert item["toolchain"]["triton"]
    assert item["upstream"] == "https://github.com/example/kernels/issues/1"
    assert item["duration"] > 0


def test_limits_come_from_the_matrix_when_the_case_sets_none(kinds: CorpusRun) -> None:
    item = kinds.item("vector_add::resource-shared_bytes-add[hip:gfx942]")
    assert item["limit"] == 65536


def test_skips_always_say_why(kinds: CorpusRun) -> None:
    skipped = [i for i in kinds.document["items"] if i["outcome"] == "SKIP"]
    assert skipped
    for item in skipped:
        assert item["message"].strip(), item
    ptx_on_hip = kinds.item("vector_add::vectorized-loads[hip:gfx942]")
    assert ptx_on_hip["message"] == "hip:gfx942 produces no ptx with this toolchain"


def test_exit_code_is_nonzero_when_anything_fails(kinds: CorpusRun) -> None:
    assert kinds.returncode == 1


def test_perf_reports_the_median_ratio_and_its_interval(kinds: CorpusRun) -> None:
    held = kinds.item("vector_add::perf-add_once-vs-add_once_again[cpu:interpreter]")
    measured = held["measured"]
    # up to 10 rounds, fewer when the interval clears the floor early; the record says which
    assert 6 <= measured["rounds"] <= 10 and len(measured["ratios"]) == measured["rounds"]
    assert measured["stopped"] == "all 10 rounds" or measured["stopped"].startswith("clear after")
    assert measured["ratio_low"] <= measured["ratio"] <= measured["ratio_high"]
    assert measured["ratio_low"] >= 0.5  # PASS means the whole interval clears the floor
    assert measured["timing"] == {"subject": "thread CPU time", "baseline": "thread CPU time"}
    slow = kinds.item("broken::perf-add_eight_times-vs-add_once[cpu:interpreter]")
    assert slow["measured"]["ratio_high"] < 0.9


def test_noisy_timings_are_unstable_and_do_not_fail_the_run(kinds: CorpusRun) -> None:
    noisy = kinds.item("broken::perf-noisy[cpu:interpreter]")
    assert noisy["outcome"] == "UNSTABLE", noisy["message"]
    assert noisy["failure_kind"] is None
    assert noisy["message"].startswith("UNSTABLE: ")
    assert noisy["measured"]["spread"] > 0.1
    assert kinds.document["counts"]["UNSTABLE"] == 1
    assert "1 unstable" in kinds.output  # pytest's own summary line names it


def test_one_round_turns_the_noise_model_off(tmp_path) -> None:
    once = run_corpus(tmp_path, "kinds/broken", args=("-k", "noisy", "--perf-rounds", "1"))
    item = once.item("broken::perf-noisy[cpu:interpreter]")
    assert item["outcome"] in ("PASS", "FAIL"), item["message"]  # one timing: noise decides
    assert item["measured"]["rounds"] == 1
    refused = run_corpus(tmp_path / "zero", "kinds/broken", args=("-k", "noisy", "--perf-rounds", "0"))
    assert refused.returncode == 4
    assert "--perf-rounds must be at least 1 (got 0)" in refused.output


def test_ir_counts_inside_branches_or_loops_only_where_asked() -> None:
    """A barrier in a block only some threads enter (an `if` on the thread index, its `else`, or a
    loop whose trip count reads it) is counted; one every thread reaches (the kernel's own block, a
    uniform loop), a preprocessor line or a comment is not."""
    import re

    from kregress.kinds.ir import lines_inside_branches

    source = [
        "#if defined(__CUDA_ARCH__)",
        "#define SYNC() do { \\",
        "  __syncthreads(); \\",
        "} while (0)",
        "#endif",
        'extern "C" __global__ void __launch_bounds__(64, 1) k(int* __restrict__ a) {',
        "  __syncthreads();  // not in { any block",
        "  for (int i = 0; i < (((32 - ((int)threadIdx.x)) >> 6) + 1); ++i) {",
        "    a[i] = 1;",
        "    __syncthreads();",
        "  }",
        "  for (int k = 0; k < 4; ++k) {",
        "    __syncthreads();",
        "  }",
        "  if (((int)threadIdx.x) < 32) {",
        "    a[0] = 2;",
        "    tl::__sync_thread_partial<3, 32>();",
        "  } else if (a[0] > 0) {",
        "    __syncthreads();",
        "  }",
        "  if constexpr (((int)threadIdx.x) > 1)",
        "  {",
        "    __syncthreads();",
        "  }",
        "  if (a[1] > 0) { a[1] = 3; } else { __syncthreads(); }",
        "  if (threadIdx.x == 0) { a[2] = 4; } else { __syncthreads(); }",
        "  int v[2] = {0, 1};",
        "  __syncthreads();",
        "}",
    ]
    synced = lines_inside_branches(source, re.compile(r"__syncthreads\(\)"))
    # in the thread-dependent loop, the else-if and the next-line block of thread-dependent ifs, the
    # else of one; not the uniform loop, the else of a uniform if, the kernel's own block or the macro
    assert [n for n, _ in synced] == [10, 19, 23, 26]
    partial = lines_inside_branches(source, re.compile(r"__sync_thread_partial"))
    assert [n for n, _ in partial] == [17]
    assert lines_inside_branches([*source[5:7], "}"], re.compile(r"__syncthreads")) == []
