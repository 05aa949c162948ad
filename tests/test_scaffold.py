"""`kregress new` writes a case that passes `kregress check` and PASSes when judged for real."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import run_corpus
from kregress.cli import main

ISSUE = "https://github.com/triton-lang/triton/issues/6200"


def new(tmp_path: Path, *args: str) -> int:
    return main(["new", *args, "--corpus", str(tmp_path / "work" / "corpus")])


def test_a_new_triton_case_is_a_valid_draft_that_runs(tmp_path: Path, capsys) -> None:
    assert new(tmp_path, "int1_full", "--framework", "triton", "--issue", ISSUE) == 0
    assert "pytest" in capsys.readouterr().out  # says what to run next
    folder = tmp_path / "work" / "corpus" / "int1_full"
    manifest = (folder / "case.toml").read_text()
    assert 'issue = "https://github.com/triton-lang/triton/issues/6200"' in manifest
    assert 'repo = "triton-lang/triton"' in manifest
    assert main(["check", str(folder.parent)]) == 0
    checked = capsys.readouterr().out
    assert "draft   int1_full (triton): not shown to catch its bug yet" in checked
    assert "1 valid (1 drafts), 0 invalid" in checked
    run = run_corpus(tmp_path, args=("--target", "cpu:interpreter"))
    assert run.item("int1_full::numerics[cpu:interpreter]")["outcome"] == "PASS", run.output[-3000:]


def test_named_releases_make_it_a_reproduced_case(tmp_path: Path, capsys) -> None:
    args = ("--framework", "triton", "--issue", ISSUE, "--title", 'tl.full of "int1"')
    assert new(tmp_path, "int1_full", *args, "--bad", "triton==3.2.0", "--good", "triton==3.3.0") == 0
    assert main(["check", str(tmp_path / "work" / "corpus")]) == 0
    assert "ok      int1_full (triton, reproduced)" in capsys.readouterr().out
    manifest = (tmp_path / "work" / "corpus" / "int1_full" / "case.toml").read_text()
    assert 'title = "tl.full of \\"int1\\""' in manifest
    assert 'bad = ["triton==3.2.0"]\ngood = ["triton==3.3.0"]' in manifest


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("Bad-Name", "--framework", "triton", "--issue", ISSUE), "case name 'Bad-Name' must match"),
        (
            ("x", "--framework", "triton", "--issue", "https://github.com/a/b/tree/main"),
            "issue or pull request",
        ),
        (("x", "--framework", "triton", "--issue", ISSUE, "--good", "triton==3.3.0"), "--good needs --bad"),
    ],
)
def test_what_cannot_be_written_is_a_usage_error_saying_why(
    tmp_path: Path, capsys, args: tuple[str, ...], message: str
) -> None:
    assert new(tmp_path, *args) == 64
    assert message in capsys.readouterr().err
    assert not (tmp_path / "work" / "corpus" / "x").exists()


def test_an_existing_case_is_never_overwritten(tmp_path: Path, capsys) -> None:
    assert new(tmp_path, "int1_full", "--framework", "triton", "--issue", ISSUE) == 0
    repro = tmp_path / "work" / "corpus" / "int1_full" / "repro.py"
    repro.write_text("# mine")
    assert new(tmp_path, "int1_full", "--framework", "triton", "--issue", ISSUE) == 64
    assert "already exists" in capsys.readouterr().err
    assert repro.read_text() == "# mine"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="TileLang builds CUDA with nvcc")
def test_a_new_tilelang_case_compiles_for_sm_90(tmp_path: Path) -> None:
    issue = "https://github.com/tile-ai/tilelang/pull/1676"
    assert new(tmp_path, "tl_case", "--framework", "tilelang", "--issue", issue) == 0
    run = run_corpus(tmp_path, args=("--target", "cuda:sm_90"))
    for name in ("compiles", "vector-copies"):
        item = run.item(f"tl_case::{name}[cuda:sm_90]")
        assert item["outcome"] == "PASS", (item["message"], run.output[-3000:])
