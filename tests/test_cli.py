"""`kregress check` validates manifests with the same errors as collection; `targets` lists the matrix."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import CORPORA
from kregress.cli import main


def test_check_accepts_valid_cases(capsys) -> None:
    assert main(["check", str(CORPORA / "kinds")]) == 0
    out = capsys.readouterr().out
    assert "ok      vector_add (triton, guard): compiles-add" in out
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


def test_check_wants_each_case_to_say_how_it_catches_its_bug(tmp_path: Path, capsys) -> None:
    shutil.copytree(CORPORA / "verify" / "proven_control", tmp_path / "case_a")
    manifest = tmp_path / "case_a" / "case.toml"
    text = manifest.read_text()
    manifest.write_text(
        text.replace(
            "https://github.com/example/kernels/issues/4", "https://github.com/example/kernels/tree/main/x"
        ).split("[reproduce]")[0]
    )
    shutil.copytree(CORPORA / "verify" / "proven_control", tmp_path / "case_b")
    (tmp_path / "case_b" / "case.toml").write_text(
        text
        + '\n[[known_bad]]\nlink = "https://github.com/example/kernels/issues/4"\ntargets = ["cuda:sm_80"]\n'
        '\n[[known_bad]]\nlink = "https://github.com/example/kernels/issues/4"\n'
    )
    assert main(["check", str(tmp_path)]) == 2
    out = capsys.readouterr().out
    assert "upstream.issue must be the bug's issue or pull request" in out
    assert "no [reproduce] table" in out
    assert (
        "known_bad[0].targets has 'cuda:sm_80', where the bug cannot show (reproduce.targets: cuda:sm_90)"
        in out
    )
    assert "known_bad[1] (the case's own bug) has no targets, but the bug shows only on cuda:sm_90" in out
    assert "0 valid, 2 invalid" in out


def test_targets_lists_limits(capsys) -> None:
    assert main(["targets"]) == 0
    out = capsys.readouterr().out
    assert "shared_bytes=232448" in out
    assert "--backend cpu: cpu:interpreter, cuda:sm_80" in out
    sm_120 = next(line for line in out.splitlines() if line.startswith("cuda:sm_120 "))
    assert "shared_bytes=101376" in sm_120 and sm_120.endswith("; from triton 3.3.0")


def test_usage_error_exit_code() -> None:
    assert main(["frobnicate"]) == 64


def test_check_refuses_postponed_annotations_in_a_triton_repro(tmp_path: Path, capsys) -> None:
    """Old Triton reads a string annotation as no constexpr at all: such a repro fails on 3.0 and
    3.1 for another reason than its bug, so a bisect across them would be wrong."""
    shutil.copytree(CORPORA / "verify" / "proven_control", tmp_path / "case_a")
    repro = tmp_path / "case_a" / "repro.py"
    assert main(["check", str(tmp_path)]) == 0
    repro.write_text('"""Docstring."""\n\nfrom __future__ import annotations\n\n' + repro.read_text())
    assert main(["check", str(tmp_path)]) == 2
    out = capsys.readouterr().out
    assert "repro.py: `from __future__ import annotations` turns `tl.constexpr` annotations" in out
