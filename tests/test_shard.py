"""`--shard I/N`: N runners each judge one part of the corpus, split by case name alike everywhere;
together they judge every item once, and compare merges their results as one run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import REPO, copy_corpus, run_corpus
from kregress.collection import shard_of
from kregress.matrix import load_matrix, nightly_jobs

CASES = ("outcomes/known_bad", "outcomes/specialization", "kinds/vector_add", "kinds/broken")


def collected(work: Path, shard: str | None) -> set[str]:
    """The items a run given `shard` would judge: the split is made at collection (pytest's
    deselection), so collecting shows it without compiling anything."""
    command = [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "--collect-only", "-q",
               "--target", "cuda:sm_90", *(("--shard", shard) if shard else ())]  # fmt: skip
    done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=300, check=False)
    found = {line for line in done.stdout.splitlines() if line.startswith("corpus/")}
    assert done.returncode == 0 and found, done.stdout[-2000:] + done.stderr[-2000:]
    return found


def test_two_shards_judge_every_item_once(tmp_path: Path) -> None:
    work = copy_corpus(tmp_path, *CASES)
    whole = collected(work, None)
    first, second = collected(work, "1/2"), collected(work, "2/2")
    assert first | second == whole and not first & second
    assert first and second  # these four cases fall into both shards
    by_case = {name.split("/")[1] for name in first}
    assert all(shard_of(case, 2) == 1 for case in by_case)
    # and a shard judges what it collected, nothing else (the smaller one, to keep this short)
    run = run_corpus(tmp_path / "2of2", *CASES, args=("--target", "cuda:sm_90", "--shard", "2/2"))
    assert run.document, run.output[-2000:]
    judged = {f"corpus/{i['case']}/case.toml::{i['nodeid'].split('::')[-1]}" for i in run.document["items"]}
    assert judged == second, run.output[-2000:]


def test_the_split_is_by_name_alone_and_reaches_every_shard() -> None:
    """A hash of the name, not the order of collection: known values, and thirty cases over three."""
    assert [shard_of(case, 2) for case in ("known_bad", "specialization", "vector_add")] == [2, 1, 1]
    assert {shard_of(f"case_{n}", 3) for n in range(30)} == {1, 2, 3}


def test_a_bad_shard_is_a_usage_error(tmp_path: Path) -> None:
    for bad in ("0/2", "3/2", "half"):
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "corpus", "--shard", bad, "-p", "no:cacheprovider"],
            cwd=tmp_path, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 4, done.stderr
        assert "give I/N with 1 <= I <= N" in done.stderr


def test_a_runner_with_shards_is_several_jobs(tmp_path: Path) -> None:
    text = (REPO / "runner" / "matrix.toml").read_text().replace('toolchains = ["triton", "tilelang"]', "")
    (tmp_path / "matrix.toml").write_text(text.replace("hosted = true", "hosted = true\nshards = 3"))
    jobs = [job for job in nightly_jobs(load_matrix(tmp_path / "matrix.toml")) if job["runner"] == "cpu"]
    assert [job["job"] for job in jobs] == ["cpu-1of3", "cpu-2of3", "cpu-3of3"]
    assert [job["pytest-args"] for job in jobs] == [f"--backend cpu --shard {i}/3" for i in (1, 2, 3)]
    unsharded = {job["job"]: job for job in nightly_jobs(load_matrix())}
    assert "--shard" not in unsharded["cpu-triton"]["pytest-args"]
    assert json.dumps(jobs)  # the workflow's matrix is JSON
