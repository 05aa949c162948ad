"""`kregress verify`: a case is proven only when its bad end or its control FAILs and the case
itself holds; each way it can fall short is NOT PROVEN with the reason, exit 1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import CORPORA
from kregress.cli import main


def corpus(tmp_path: Path) -> Path:
    shutil.copytree(CORPORA / "verify", tmp_path / "corpus")
    return tmp_path / "corpus"


def test_a_control_that_fails_while_the_case_holds_is_proven(tmp_path: Path, capsys) -> None:
    report = tmp_path / "verify.json"
    assert main(["verify", "--corpus", str(corpus(tmp_path)), "proven_control", "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "vector-loads: FAIL with strided, PASS as written" in out
    assert "PROVEN      proven_control (control," in out
    (verdict,) = json.loads(report.read_text())
    assert verdict["proven"] and verdict["levels"] == ["control"]
    assert [(c["role"], c["target"], c["ok"]) for c in verdict["checks"]] == [("control", "cuda:sm_90", True)]


def test_a_control_that_passes_is_not_proven(tmp_path: Path, capsys) -> None:
    assert main(["verify", "--corpus", str(corpus(tmp_path)), "control_holds"]) == 1
    out = capsys.readouterr().out
    assert "NOT PROVEN  control_holds (control," in out
    assert "the control must FAIL (it is PASS) while the case's own PASSes (it is PASS)" in out


def test_a_known_bad_entry_covering_a_passing_item_is_reported(tmp_path: Path, capsys) -> None:
    folder = corpus(tmp_path)
    manifest = folder / "proven_control" / "case.toml"
    manifest.write_text(
        manifest.read_text() + '\n[[known_bad]]\nlink = "https://github.com/example/kernels/issues/4"\n'
        'targets = ["cuda:sm_90"]\nexpect = ["vector-loads"]\n'
    )
    assert main(["verify", "--corpus", str(folder), "proven_control"]) == 1
    out = capsys.readouterr().out
    assert "NOT PROVEN  proven_control (control, " in out
    problem = "vector-loads[cuda:sm_90] is XPASS: a known_bad entry covers an item that passes"
    assert f"under the matrix's toolchain, {problem}" in out


def test_unknown_case_and_missing_reproduce_are_said(tmp_path: Path, capsys) -> None:
    folder = corpus(tmp_path)
    assert main(["verify", "--corpus", str(folder), "nope"]) == 64
    assert "no case 'nope'" in capsys.readouterr().err
    shutil.copytree(CORPORA / "kinds" / "vector_add", folder / "plain")
    manifest = folder / "plain" / "case.toml"
    manifest.write_text(manifest.read_text().split("[reproduce]")[0])
    assert main(["verify", "--corpus", str(folder), "plain"]) == 1
    captured = capsys.readouterr()
    assert "plain: no [reproduce] table" in captured.err
    assert "NOT PROVEN  plain" in captured.out


@pytest.mark.slow
def test_a_bad_release_under_which_the_bug_does_not_show_is_not_proven(tmp_path: Path, capsys) -> None:
    """Judged in a real release's environment (triton 3.6.0), as bisect judges its points."""
    report = tmp_path / "verify.json"
    assert main(["verify", "--corpus", str(corpus(tmp_path)), "bad_end_holds", "--json", str(report)]) == 1
    out = capsys.readouterr().out
    assert "vector-loads[cuda:sm_90] did not FAIL under the compiler that has the bug" in out
    (verdict,) = json.loads(report.read_text())
    checks = [(c["role"], c["toolchain"], c["outcome"], c["ok"]) for c in verdict["checks"]]
    assert checks == [("bad", "triton==3.6.0", "vector-loads PASS", False),
                      ("good", "triton==3.6.0", "vector-loads PASS", True)]  # fmt: skip


def test_an_unchanged_case_is_not_judged_again(tmp_path: Path, capsys, monkeypatch) -> None:
    """The memo keys on the case's files, its specs, the target, the environment and the judging
    code: a second run judges nothing, an edited repro is judged again, and --fresh judges everything."""
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    folder = corpus(tmp_path)
    args = ["verify", "--corpus", str(folder), "proven_control"]

    def judged_now(*extra: str) -> str:
        assert main([*args, *extra]) == 0
        return next(line for line in capsys.readouterr().err.splitlines() if "judgements" in line)

    assert judged_now().endswith(
        "1 of 1 judgements made now, 0 reused from the ledger or the memo (same case files, target, "
        "toolchain, environment and judging code)"
    )
    assert "0 of 1 judgements made now, 1 reused" in judged_now()
    repro = folder / "proven_control" / "repro.py"
    repro.write_text(repro.read_text() + "\n# edited\n")
    assert "1 of 1 judgements made now, 0 reused" in judged_now()
    assert "1 of 1 judgements made now, 0 reused" in judged_now("--fresh")
    # what --fresh judged replaces what was remembered: one judgement per key, the newest
    memo = json.loads((tmp_path / "cache" / "bisect" / "memo.json").read_text())
    assert all(len(observations) == 1 for observations in memo.values())
    assert "0 of 1 judgements made now, 1 reused" in judged_now()
