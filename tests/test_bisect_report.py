"""The bisect report at the boundary: whether the last good and the first bad point generate
different code for each item, and a culprit that changes an outcome without changing the code is
reported as suspect, never named plainly."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from kregress.bisect.bisect_report import markdown
from kregress.bisect.bisection import Bisection, Level, Point
from kregress.bisect.candidates import Candidate
from kregress.bisect.search import PointVerdict, SearchResult
from kregress.judging_service import CaseRun, Memo, Observation

GOOD_CODE = {"num_warps=4": {"ttir": "a1", "ttgir": "b1", "llir": "c1", "ptx": "d1", "cubin": "e1"}}
NEW_LAYOUT = {"num_warps=4": {"ttir": "a1", "ttgir": "b2", "llir": "c2", "ptx": "d2", "cubin": "e2"}}
CONTROL = {"num_warps=4": {"ttir": "f1", "ttgir": "g1", "llir": "h1", "ptx": "i1", "cubin": "j1"}}


def observation(shared: str, shared_code: dict) -> Observation:
    items = {
        "shared[cuda:sm_90]": shared,
        "compiles-control[cuda:sm_90]": "PASS",
        "numerics[cpu:interpreter]": "PASS",
    }
    return Observation.from_parts(
        outcomes=items,
        failure_kinds={"shared[cuda:sm_90]": "OVER_LIMIT" if shared == "FAIL" else None},
        code={"shared[cuda:sm_90]": shared_code, "compiles-control[cuda:sm_90]": CONTROL},
    )


def report(tmp_path: Path, bad_code: dict) -> str:
    candidates = [
        Candidate("triton==3.7.0", toolchain="triton==3.7.0"),
        Candidate("triton==3.8.0", toolchain="triton==3.8.0"),
    ]
    run = CaseRun(corpus=tmp_path, case="smem", expectation=None, target=None)
    bisection = Bisection(run, "fail", 1, None, Memo(tmp_path / "memo.json"), Console(quiet=True))
    ends = (
        (PointVerdict.GOOD, observation("PASS", GOOD_CODE)),
        (PointVerdict.BAD, observation("FAIL", bad_code)),
    )
    for candidate, (verdict, seen) in zip(candidates, ends, strict=True):
        bisection.points[candidate.key] = Point(candidate, verdict, [verdict], [seen])
    result = SearchResult(last_good=0, first_bad=1, tested={0: PointVerdict.GOOD, 1: PointVerdict.BAD})
    return markdown("smem", None, None, "fail", [Level("Releases", candidates, bisection, result)])


def test_the_first_stage_whose_code_differs_is_shown_per_item(tmp_path: Path) -> None:
    text = report(tmp_path, NEW_LAYOUT)
    assert "First bad (fail): **triton==3.8.0**; last good: triton==3.7.0." in text
    assert "Generated code, triton==3.7.0 → triton==3.8.0:" in text
    assert "- shared[cuda:sm_90] (its outcome changed): differs (num_warps=4: from ttgir on)" in text
    assert "- compiles-control[cuda:sm_90] (same outcome): identical at every stage" in text
    assert "numerics[cpu:interpreter]" not in text.split("Generated code")[1]  # no code: not listed


def test_an_outcome_that_changes_with_the_same_code_makes_the_culprit_suspect(tmp_path: Path) -> None:
    text = report(tmp_path, GOOD_CODE)
    assert "First bad" not in text
    assert text.splitlines()[2].startswith(
        "Suspect culprit: **triton==3.8.0** changes the outcome of shared[cuda:sm_90]"
    )
    assert "generates the same code as triton==3.7.0 at every stage" in text
    assert (
        "- shared[cuda:sm_90] (its outcome changed): identical at every stage (ttir, ttgir, llir, ptx, cubin)"
        in text
    )


def test_an_item_that_stopped_compiling_differs(tmp_path: Path) -> None:
    text = report(tmp_path, {})
    assert "First bad (fail): **triton==3.8.0**" in text
    assert "differs: no code at the first bad point (it did not compile)" in text


def fix_search_report(tmp_path: Path) -> str:
    """A fix search: 3.4.0 broken (the kernel raised, nothing measured), 3.5.0 fixed (figures)."""
    candidates = [
        Candidate("triton==3.4.0", toolchain="triton==3.4.0"),
        Candidate("triton==3.5.0", toolchain="triton==3.5.0"),
    ]
    run = CaseRun(corpus=tmp_path, case="stack", expectation=None, target=None)
    bisection = Bisection(run, "pass", 1, None, Memo(tmp_path / "memo.json"), Console(quiet=True))
    item = "no-stack[cuda:sm_90]"
    broken = Observation.from_parts(
        outcomes={item: "FAIL"}, failure_kinds={item: "RUNTIME_ERROR"}, measured={item: {}},
        messages={item: "RUNTIME_ERROR: IndexError: list index out of range"},
    )  # fmt: skip
    fixed = Observation.from_parts(
        outcomes={item: "PASS"}, failure_kinds={item: None},
        measured={item: {"stack_bytes": {"num_warps=4": 0}}}, messages={item: "stack_bytes 0 ≤ 0"},
    )  # fmt: skip
    for candidate, verdict, seen in zip(
        candidates, (PointVerdict.GOOD, PointVerdict.BAD), (broken, fixed), strict=True
    ):
        bisection.points[candidate.key] = Point(candidate, verdict, [verdict], [seen])
    result = SearchResult(last_good=0, first_bad=1, tested={0: PointVerdict.GOOD, 1: PointVerdict.BAD})
    return markdown("stack", None, None, "pass", [Level("Releases", candidates, bisection, result)])


def test_a_fix_search_reads_broken_and_fixed_and_shows_the_error_where_it_was_broken(tmp_path: Path) -> None:
    text = fix_search_report(tmp_path)
    assert "| triton==3.4.0 | broken |" in text and "| triton==3.5.0 | fixed |" in text
    assert "| good |" not in text and "| bad |" not in text
    assert "Outcome at the last broken point, triton==3.4.0:" in text
    assert "IndexError: list index out of range" in text
    assert "- no-stack[cuda:sm_90]: not measured (RUNTIME_ERROR) → stack_bytes 0 [num_warps=4]" in text
    assert "{}" not in text and "{'" not in text
