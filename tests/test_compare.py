"""`kregress compare` on fixture result files (tests/results): three nights of one corpus, the
last one split over two runners plus a rerun of what failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kregress.cli import main
from kregress.record import RunResults
from kregress.results import bisect_requests, compare, flip_count, load_results, merge, render_changes

RESULTS = Path(__file__).parent / "results"
TONIGHT = [RESULTS / n for n in ("tonight-cpu.json", "tonight-cuda-h100.json", "tonight-cpu.rerun.json")]
EARLIER = [RESULTS / "night-2.json", RESULTS / "night-1.json"]  # any order: sorted by start time


def run_of(*documents: dict, started: float | None = None) -> RunResults:
    """One run of these jobs' items, as `merge` makes it (a test writes items as JSON)."""
    run = merge([RunResults.model_validate(d) for d in documents])
    return run if started is None else run.model_copy(update={"started": started})


def as_written(run: RunResults) -> dict:
    return run.model_dump(mode="json", exclude_unset=True)


def names(entries: list[dict]) -> list[str]:
    return [f"{e['case']}/{e['expectation']}[{e['target']}]" for e in entries]


@pytest.fixture
def changes(tmp_path: Path, capsys) -> tuple[int, dict, str, dict]:
    out = tmp_path / "out"
    written = {"--json": "changes.json", "--markdown": "changes.md", "--merged": "merged.json",
               "--bisect-requests": "bisect.json"}  # fmt: skip
    options = [part for flag, name in written.items() for part in (flag, str(out / name))]
    code = main(["compare", *map(str, TONIGHT), "--previous", *map(str, EARLIER), *options])
    printed = capsys.readouterr().out
    assert (out / "changes.md").read_text().strip() == printed.strip()
    found = json.loads((out / "changes.json").read_text())
    return code, found, printed, json.loads((out / "bisect.json").read_text())


def test_new_fail_exits_1_and_names_what_held_before(changes) -> None:
    code, found, printed, _ = changes
    assert code == 1
    assert names(found["new_fail"]) == [
        "native_binary_flags/compiles-grf[xpu:pvc]",
        "new_case/compiles-kernel[cuda:sm_90]",
        "scratch_overflow/compiles-dot_chain[cuda:sm_90]",
    ]
    assert [e["was"] for e in found["new_fail"]] == ["PASS", None, "PASS"]
    assert "| `new_case` | `compiles-kernel` | `cuda:sm_90` | new | OUT_OF_RESOURCES" in printed


def test_fixed_and_new_xpass_and_new_error(changes) -> None:
    _, found, printed, _ = changes
    assert names(found["fixed"]) == ["layout_conversion_smem/numerics[cpu:interpreter]"]
    assert names(found["new_xpass"]) == ["native_binary_flags/native-device[xpu:dg2]"]
    assert names(found["new_error"]) == ["broken_case/numerics[cpu:interpreter]"]
    assert "#### ✅ Fixed (FAIL → PASS): 1" in printed


def test_flaky_items_are_reported_and_not_new_failures(changes) -> None:
    _, found, _, requests = changes
    flaky = {f"{e['case']}": e["reason"] for e in found["flaky"]}
    # failed, then passed when judged again in the same run
    assert flaky["grouped_reduction"] == "attempts in this run: FAIL, PASS"
    # PASS, FAIL, PASS over three nights
    assert flaky["flaky_case"] == "last 3 runs: PASS → FAIL → PASS"
    assert "grouped_reduction" not in {e["case"] for e in found["new_fail"]}
    assert "grouped_reduction" not in {r["case"] for r in requests["include"]}


def test_bisect_requests_span_last_held_to_now_with_the_targets_package(changes) -> None:
    *_, requests = changes
    assert requests["include"] == [
        {
            "case": "native_binary_flags",
            "expectation": "compiles-grf",
            "target": "xpu:pvc",
            "good": "triton-xpu==3.3.0b1",
            "bad": "triton-xpu==3.4.0",
            "regress": "fail",
            "repository": "https://github.com/intel/intel-xpu-backend-for-triton.git",  # then its commits
            "report": "native_binary_flags.xpu-pvc.md",
        },
        {
            "case": "scratch_overflow",
            "expectation": "compiles-dot_chain",
            "target": "cuda:sm_90",
            "good": "triton==3.5.0",
            "bad": "triton==3.6.0",
            "regress": "fail",
            "repository": "https://github.com/triton-lang/triton.git",  # then its commits
            "report": "scratch_overflow.cuda-sm_90.md",
        },
    ]  # fmt: skip  (new_case has no run where it held: nothing to bisect from)


def test_merge_keeps_every_attempt_and_the_worst_outcome() -> None:
    merged = merge([load_results(p) for p in TONIGHT])
    grouped = next(i for i in merged.items if i.case == "grouped_reduction")
    assert grouped.outcome == "FAIL" and grouped.attempts == ["FAIL", "PASS"]
    assert {run.runner for run in merged.jobs()} == {"cpu", "cuda-h100"}


def test_the_same_run_twice_changes_nothing(tmp_path: Path, capsys) -> None:
    night = str(RESULTS / "night-2.json")
    assert main(["compare", night, "--previous", night]) == 0
    printed = capsys.readouterr().out
    assert "Nothing changed." in printed and "Still failing as before: 2." in printed


def test_first_run_without_history_counts_every_fail_as_new() -> None:
    found = compare(merge([load_results(RESULTS / "night-2.json")]), [])
    assert names([c.as_dict() for c in found.new_fail]) == [
        "flaky_case/numerics[cpu:interpreter]",
        "layout_conversion_smem/numerics[cpu:interpreter]",
    ]


def test_window_limits_how_far_back_flakiness_looks() -> None:
    current = merge([load_results(RESULTS / "night-1.json")])  # flaky_case PASS again
    earlier = [load_results(RESULTS / n) for n in ("night-1.json", "night-2.json")]
    assert [c.key[0] for c in compare(current, earlier, window=2).flaky] == ["flaky_case"]
    assert [c.key[0] for c in compare(current, earlier, window=1).fixed] == ["flaky_case"]


def test_flip_count_ignores_skips_and_errors() -> None:
    assert flip_count(["PASS", "SKIP", "FAIL", "ERROR", "FAIL"]) == 1
    assert flip_count(["XFAIL", "FAIL", "PASS"]) == 2


def test_unreadable_results_exit_2_naming_the_file(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"items": []}))
    assert main(["compare", str(bad)]) == 2
    assert f"{bad}: not a kregress results file" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"kregress": 1, "items": [{"case": "a", "outcome": "PASS"}]}))
    assert main(["compare", str(broken)]) == 2
    assert "items[0] lacks expectation, target" in capsys.readouterr().err


def test_regressions_comment_lists_only_new_failures(changes, tmp_path: Path, capsys) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "scratch_overflow.cuda-sm_90.md").write_text("First bad: **triton==3.6.0** (#4242)")
    code = main(["comment", "regressions", str(tmp_path / "out" / "changes.json"), "--reports", str(reports),
                 "--on", "7", "--repo", "example/kregress", "--dry-run"])  # fmt: skip
    body = capsys.readouterr().out
    assert code == 0
    assert "kregress nightly: new failures" in body
    assert "`scratch_overflow` | `compiles-dot_chain` | `cuda:sm_90`" in body
    assert "First bad: **triton==3.6.0** (#4242)" in body
    assert "layout_conversion_smem" not in body  # fixed, not failing
    assert "grouped_reduction" not in body  # flaky


def test_earlier_runs_can_come_from_the_history(tmp_path: Path, capsys) -> None:
    """The nightly keeps its nights in a history file: the comparison is the same."""
    history = tmp_path / "history.sqlite"
    tonight = [str(p) for p in TONIGHT]
    assert main(["compare", *tonight, "--history", str(history)]) == 1  # no history yet: all FAILs new
    assert "does not exist yet" in capsys.readouterr().err
    for night in EARLIER:
        assert main(["history", "add", str(night), "--history", str(history)]) == 0
    capsys.readouterr()
    out = tmp_path / "from-history.json"
    assert main(["compare", *tonight, "--history", str(history), "--json", str(out)]) == 1
    from_files = tmp_path / "from-files.json"
    assert main(["compare", *tonight, "--previous", *map(str, EARLIER), "--json", str(from_files)]) == 1
    assert json.loads(out.read_text()) == json.loads(from_files.read_text())


def test_a_compiler_that_stops_importing_is_lost_coverage_not_a_quiet_night(tmp_path: Path, capsys) -> None:
    night = load_results(RESULTS / "night-2.json")
    tonight = as_written(night)
    tonight["started"] = night.started + 86400
    message = "the compiler does not work here: triton in this toolchain does not import here: ImportError"
    for item in tonight["items"]:
        item.update(outcome="ERROR", message=message, failure_kind=None)
    held = [i for i in night.items if i.outcome in ("PASS", "XFAIL")]
    found = compare(run_of(tonight), [night])
    assert len(found.lost_coverage) == len(held) > 0
    assert not found.new_error or all(c.was not in ("PASS", "XFAIL") for c in found.new_error)
    (tmp_path / "tonight.json").write_text(json.dumps(tonight))
    changes = tmp_path / "changes.json"
    code = main(["compare", str(tmp_path / "tonight.json"), "--previous", str(RESULTS / "night-2.json"),
                 "--json", str(changes)])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 1
    assert f"Lost coverage (held before, now SKIP or ERROR: judged no more): {len(held)}" in printed
    assert main(["comment", "regressions", str(changes), "--on", "7", "--repo", "example/kregress",
                 "--dry-run"]) == 0  # fmt: skip
    body = capsys.readouterr().out
    assert f"**Lost coverage: {len(held)}** item(s)" in body and "does not import here" in body


def test_unstable_perf_is_reported_like_flaky_never_as_a_new_fail(tmp_path: Path, capsys) -> None:
    night = load_results(RESULTS / "night-2.json")
    tonight = as_written(night)
    tonight["started"] = night.started + 86400
    held = next(i for i in tonight["items"] if i["outcome"] == "PASS")
    message = "UNSTABLE: bench 1 ms vs eager 1 ms: throughput ratio median of 10 rounds 0.80 straddles 0.8"
    held.update(outcome="UNSTABLE", message=message, failure_kind=None)
    found = compare(run_of(tonight), [night])
    held_key = (held["case"], held["expectation"], held["target"])
    assert [c.key for c in found.flaky] == [held_key]
    assert found.flaky[0].reason == "UNSTABLE: its timings cannot tell PASS from FAIL"
    assert held_key not in {c.key for c in [*found.new_fail, *found.lost_coverage, *found.new_error]}
    rerun = {**tonight, "items": [{**held, "outcome": "FAIL", "failure_kind": "TOO_SLOW"}]}
    merged = run_of(tonight, rerun)  # UNSTABLE, then a rerun that FAILs: still not a new FAIL
    assert held_key in {c.key for c in compare(merged, [night]).flaky}
    (tmp_path / "tonight.json").write_text(json.dumps(tonight))
    code = main(["compare", str(tmp_path / "tonight.json"), "--previous", str(RESULTS / "night-2.json")])
    assert code == 0
    assert "Flaky or UNSTABLE (reported, not bisected): 1" in capsys.readouterr().out


def head_item(outcome: str, commit: str, **more) -> dict:
    return {"case": "c", "expectation": "e", "target": "cuda:sm_90", "outcome": outcome,
            "toolchain_spec": f"/cache/builds/triton/{commit}/out/triton-3.7.0-cp311.whl",
            "toolchain": {"triton": "3.7.0", "triton commit": commit}, **more}  # fmt: skip


def release_item(outcome: str, version: str) -> dict:
    return {"case": "c", "expectation": "e", "target": "cuda:sm_90", "outcome": outcome,
            "toolchain_spec": f"triton=={version}", "toolchain": {"triton": version}}  # fmt: skip


def test_a_release_and_a_head_on_one_target_are_two_lines_not_two_attempts() -> None:
    """A runner judging the newest release and main: each compares with its own past, so a FAIL on
    main beside a PASS on the release is a new FAIL of main, not a flaky item."""
    last_night = run_of({"items": [release_item("PASS", "3.6.0")]}, {"items": [head_item("PASS", "a" * 40)]})
    tonight = run_of({"items": [release_item("PASS", "3.6.0")]}, {"items": [head_item("FAIL", "b" * 40)]})
    assert all(item.attempts is None for item in tonight.items)
    changes = compare(tonight, [last_night])
    assert not changes.flaky
    (new,) = changes.new_fail
    assert new.item.toolchain["triton commit"] == "b" * 40
    assert new.as_dict()["line"] == "triton@"
    assert f"`cuda:sm_90` · triton@{'b' * 12}" in render_changes(changes)


def test_a_new_fail_on_a_head_bisects_the_commits_between_the_two_nights_builds() -> None:
    tonight = run_of({"items": [head_item("FAIL", "b" * 40)]})
    nights = [
        run_of({"items": [head_item("PASS", "9" * 40)]}),
        run_of({"items": [head_item("PASS", "a" * 40)]}, started=2),
    ]
    changes = compare(tonight, nights)
    (request,) = bisect_requests(changes, nights, {}, {"triton": "https://x/triton.git"})
    assert (request["good"], request["bad"], request["repository"]) == (
        f"triton@{'a' * 40}", f"triton@{'b' * 40}", "https://x/triton.git",
    )  # fmt: skip
    # Without the repository there is nothing to build the commits from.
    assert bisect_requests(changes, nights, {}, {}) == []


def test_a_head_that_passes_again_is_fixed_between_the_two_builds() -> None:
    """The commits that fixed it: from the last build where it failed to tonight's."""
    changes = compare(
        run_of({"items": [head_item("PASS", "c" * 40)]}), [run_of({"items": [head_item("FAIL", "b" * 40)]})]
    )
    (fixed,) = changes.fixed
    assert fixed.as_dict()["was_toolchain"]["triton commit"] == "b" * 40
    assert fixed.as_dict()["toolchain"]["triton commit"] == "c" * 40
    # the fixing commit is searched for as a culprit is: the same commits, --regress pass
    (request,) = bisect_requests(changes, [], {}, {"triton": "https://github.com/triton-lang/triton"})
    ends = (request["good"], request["bad"], request["regress"])
    assert ends == ("triton@" + "b" * 40, "triton@" + "c" * 40, "pass")
    assert request["report"].endswith(".fix.md")
    assert bisect_requests(changes, [], {}, {}) == []  # no repository to search: the range is said instead


def test_a_head_that_regressed_and_was_fixed_is_no_flake_but_one_compiler_flipping_is() -> None:
    """On a head's line flips count within one build: two commits that broke and mended an item are
    a new FAIL and a fix, while the same build passing, failing and passing again is flaky."""
    nights = [
        run_of({"items": [head_item(outcome, sha)]}, started=index)
        for index, (outcome, sha) in enumerate((("PASS", "a" * 40), ("FAIL", "b" * 40)))
    ]
    fixed = compare(run_of({"items": [head_item("PASS", "c" * 40)]}), nights)
    assert len(fixed.fixed) == 1 and not fixed.flaky
    same = [run_of({"items": [head_item(o, "a" * 40)]}, started=i) for i, o in enumerate(("PASS", "FAIL"))]
    flaky = compare(run_of({"items": [head_item("PASS", "a" * 40)]}), same)
    assert len(flaky.flaky) == 1 and not flaky.fixed


def test_the_merged_run_compare_writes_is_a_results_file_history_reads(tmp_path: Path) -> None:
    """The nightly stores tonight's merged run from `compare --merged`: it once lacked the field that
    marks a kregress results file, and `history add` refused it."""
    merged = tmp_path / "tonight.json"
    assert main(["compare", *map(str, TONIGHT), "--merged", str(merged)]) in (0, 1)
    assert main(["history", "add", str(merged), "--history", str(tmp_path / "h.sqlite")]) == 0


def test_the_readmes_sequence_never_compares_a_run_with_itself(tmp_path: Path) -> None:
    """`pytest corpus/ --history H --kregress-json tonight.json`, then `kregress compare tonight.json
    --history H`: tonight is already stored when it is compared, and a regression planted in it
    (an item that held last night FAILs tonight) is a new FAIL, never "still failing as before"."""
    import shutil
    import subprocess
    import sys

    from conftest import CORPORA

    work = tmp_path / "work"
    shutil.copytree(CORPORA / "kinds" / "vector_add", work / "corpus" / "vector_add")
    history = tmp_path / "history.sqlite"

    def night(name: str) -> Path:
        results = tmp_path / f"{name}.json"
        command = [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "-q", "--target",
                   "cuda:sm_90", "--history", str(history), "--kregress-json", str(results)]  # fmt: skip
        subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=600, check=False)
        return results

    night("last")
    manifest = work / "corpus" / "vector_add" / "case.toml"
    manifest.write_text(manifest.read_text().replace("min_count = 1", "min_count = 100000"))  # planted
    tonight = night("tonight")
    done = subprocess.run(
        [sys.executable, "-m", "kregress.cli", "compare", str(tonight), "--history", str(history)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "vectorized-loads" in done.stdout.split("Still failing")[0]  # listed among the new
    assert "1 earlier run(s) are this run itself, stored already: left out" in done.stderr
