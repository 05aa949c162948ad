"""`kregress check` validates manifests with the same errors as collection; `targets` lists the matrix."""

from __future__ import annotations

from pathlib import Path

from conftest import CORPORA
from kregress.cli import main


def test_check_accepts_valid_cases(capsys) -> None:
    assert main(["check", str(CORPORA / "kinds")]) == 0
    out = capsys.readouterr().out
    assert "ok      vector_add (triton): compiles-add" in out
    assert "2 valid, 0 invalid" in out


def test_check_names_file_and_field_of_a_bad_case(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "bad_case"
    folder.mkdir()
    (folder / "repro.py").write_text("")
    (folder / "case.toml").write_text('title = "t"\nframework = "triton"\n')
    assert main(["check", str(tmp_path)]) == 2
    out = capsys.readouterr().out
    assert f"INVALID {folder / 'case.toml'}:" in out
    assert "upstream: required field is missing" in out


def test_targets_lists_limits(capsys) -> None:
    assert main(["targets"]) == 0
    out = capsys.readouterr().out
    assert "shared_bytes=232448" in out
    assert "--backend cpu: cpu:interpreter, cuda:sm_80" in out


def test_usage_error_exit_code() -> None:
    assert main(["frobnicate"]) == 64
