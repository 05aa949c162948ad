"""`kregress reduce`: the edits (pure), the search over them (a predicate in the test), and real
reductions of a real compile failure through the runner."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPORA
from kregress.bisect.triage.ast_edits import candidates, chunks, normalized, size
from kregress.bisect.triage.reduce import Judged, SameFailure, reduce_text

FIXTURE = CORPORA / "reduce_dot_k8"


def test_chunks_go_from_the_whole_to_single_elements() -> None:
    assert list(chunks(4)) == [(0, 4), (0, 2), (2, 4), (0, 1), (1, 2), (2, 3), (3, 4)]
    assert list(chunks(1)) == [(0, 1)]


def test_every_edit_parses_and_the_list_is_the_same_for_the_same_text() -> None:
    source = normalized((FIXTURE / "repro.py").read_text())
    first, again = candidates(source), candidates(source)
    assert [e.describe for e in first] == [e.describe for e in again]
    made = [edit.apply(source) for edit in first[:300]]
    assert all(text is None or compile(text, "x", "exec") for text in made)
    assert sum(1 for text in made if text is not None and size(text) < size(source)) > 200


def test_a_dropped_parameter_takes_its_argument_with_it() -> None:
    source = normalized("def k(x, unused, y):\n    return x + y\n\nargs = {'x': 1, 'unused': 2, 'y': 3}\n")
    edit = next(e for e in candidates(source) if e.describe == "drop parameter unused of k")
    assert edit.apply(source) == "def k(x, y):\n    return x + y\nargs = {'x': 1, 'y': 3}\n"


def marked(text: str) -> Judged:
    """A stand-in compiler for the search alone: fails while the text keeps both BUG lines."""
    broken = "bug_one = 1" in text and "bug_two = 2" in text
    return Judged("FAIL" if broken else "PASS", "COMPILE_ERROR" if broken else None, "CompilationError: x")


SEARCHED = """
import os


def helper(a, b):
    return a * b + 7


def kernel(x, y, z):
    total = 0
    for i in range(0, 64, 16):
        total += helper(i, x)
        bug_one = 1
        if total > 100:
            total -= y
        else:
            total += z
    bug_two = 2
    return total + bug_one + bug_two


configs = [{"BLOCK": 64, "num_stages": 3}, {"BLOCK": 128, "num_stages": 2}]
"""


@pytest.mark.parametrize("jobs", [1, 3, 8])
def test_the_search_keeps_the_failure_and_does_not_depend_on_jobs(jobs: int) -> None:
    holds = SameFailure(marked(SEARCHED))
    one = reduce_text(SEARCHED, holds, lambda texts: [marked(t) for t in texts], 1, log=lambda _: None)
    many = reduce_text(SEARCHED, holds, lambda texts: [marked(t) for t in texts], jobs, log=lambda _: None)
    assert many.current == one.current and many.kept == one.kept
    assert holds.holds(marked(one.current))
    assert one.current == "def kernel():\n    bug_one = 1\n    bug_two = 2\n", one.current


def test_a_failure_that_is_not_the_original_one_is_not_kept() -> None:
    head = "COMPILE_ERROR: 1 of 1 configs did not compile\n[cfg] CompilationError: "
    original = Judged("FAIL", "COMPILE_ERROR", head + "K >= 16")
    holds = SameFailure(original)
    other = Judged("FAIL", "COMPILE_ERROR", head + "name 'a' is not defined")
    assert holds.holds(original) and not holds.holds(other)
    assert not holds.holds(Judged("FAIL", "CRASH", "CRASH: signal 11"))
    assert not holds.holds(Judged("PASS", None, "compiles"))


def reduce_command(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "kregress.cli", "reduce", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=1800, check=False)


def test_a_predicate_that_never_holds_is_refused_at_the_start(tmp_path: Path) -> None:
    shutil.copytree(FIXTURE, tmp_path / "corpus" / "dot_k8")
    done = reduce_command("dot_k8", "-e", "compiles", "-t", "cuda:sm_80", "--error-matches", "no such words",
                          cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "does not fail (--error-matches /no such words/)" in done.stderr
    assert not (tmp_path / "corpus" / "dot_k8_reduced").exists()
    wrong = reduce_command("dot_k8", "-e", "nope", "-t", "cuda:sm_80", cwd=tmp_path)
    assert wrong.returncode == 64 and "no expectation 'nope' (names: compiles)" in wrong.stderr


def test_a_candidate_judged_once_is_read_back_from_the_memo_bisect_and_verify_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same text judged again (a reduce run twice) is read from the shared memo, not compiled."""
    import json

    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    shutil.copytree(FIXTURE, tmp_path / "corpus" / "dot_k8")
    memo = tmp_path / "cache" / "bisect" / "memo.json"
    for _ in range(2):
        asked = ("dot_k8", "-e", "compiles", "-t", "cuda:sm_80", "--error-matches", "no such words")
        done = reduce_command(*asked, cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        kept = json.loads(memo.read_text())
        assert len(kept) == 1 and [len(observations) for observations in kept.values()] == [1], kept.keys()
    (key,) = kept
    assert json.loads(key)["case"] == "dot_k8" and json.loads(key)["target"] == "cuda:sm_80"


@pytest.mark.slow
def test_a_pasted_kernel_becomes_a_minimal_case_that_fails_the_same_way(tmp_path: Path) -> None:
    """The 116-line fixture (autotune list, loop, masks, two dots, helpers) given as a file: it
    shrinks to at most a quarter, and the case it writes is accepted and FAILs the same way."""
    pasted = tmp_path / "dot_k8.py"
    shutil.copy(FIXTURE / "repro.py", pasted)
    issue = "https://github.com/example/kernels/issues/11"
    done = reduce_command(str(pasted), "-t", "cuda:sm_80", "-j", "2", "--error-matches", r"K >= 16",
                          "--issue", issue, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "dot_k8_reduced"
    reduced = (out / "repro.py").read_text()
    before, after = size(normalized(pasted.read_text())), size(reduced)
    assert after[0] * 4 <= before[0], reduced
    assert len(reduced.splitlines()) * 4 <= len(pasted.read_text().splitlines()), reduced
    lines = len(pasted.read_text().splitlines())
    assert (
        "tl.dot" in reduced
        and f"| lines | {lines} | {len(reduced.splitlines())} |" in (out / "REDUCED.md").read_text()
    )
    assert (out / "reduce.diff").read_text().startswith("--- dot_k8/repro.py")
    check = subprocess.run([sys.executable, "-m", "kregress.cli", "check", str(tmp_path)],
                           capture_output=True, text=True, check=False)  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    command = [
        sys.executable,
        "-m",
        "pytest",
        str(out),
        "--target",
        "cuda:sm_80",
        "-q",
        "-p",
        "no:cacheprovider",
    ]
    judged = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, check=False)
    assert judged.returncode == 1 and "K >= 16" in judged.stdout, judged.stdout[-3000:]
