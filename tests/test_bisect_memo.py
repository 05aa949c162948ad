"""The bisect memo answers only for the same case files and the same environment: an edited
manifest or repro, or a release installed with other companions, is judged afresh."""

from __future__ import annotations

from pathlib import Path

from kregress.bisect.judging import CaseRun, Memo, Observation


def test_memo_is_keyed_by_the_case_files_and_the_environment(tmp_path: Path) -> None:
    case = tmp_path / "corpus" / "scalar_mask"
    case.mkdir(parents=True)
    (case / "case.toml").write_text("title = 'x'\n")
    (case / "repro.py").write_text("X = 1\n")
    run = CaseRun(tmp_path / "corpus", "scalar_mask", "numerics", "cpu:interpreter")
    memo = Memo(tmp_path / "memo.json")
    seen = Observation({"numerics[cpu:interpreter]": "ERROR"})
    memo.add(run, "tilelang==0.1.9", "env-a", seen)
    assert memo.get(run, "tilelang==0.1.9", "env-a") == [seen]
    assert memo.get(run, "tilelang==0.1.9", "env-b") == []  # rebuilt with another companion
    assert memo.get(run, "tilelang==0.1.8", "env-a") == []
    (case / "case.toml").write_text("title = 'x'\n[[known_bad]]\n")
    assert memo.get(run, "tilelang==0.1.9", "env-a") == []  # the manifest changed
