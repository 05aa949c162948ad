"""A bad case.toml is one clear collection error naming the file, the field and what is allowed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kregress.manifest import load_case
from kregress.matrix import load_matrix
from kregress.schema import SchemaError

GOOD = """
title = "t"
framework = "triton"
[upstream]
repo = "o/r"
issue = "https://github.com/o/r/issues/1"
[[expect]]
kind = "compiles"
kernel = "k"
"""


def write_case(tmp_path: Path, text: str, name: str = "some_case") -> Path:
    folder = tmp_path / name
    folder.mkdir(parents=True)
    (folder / "repro.py").write_text("")
    (folder / "case.toml").write_text(text)
    return folder / "case.toml"


def problems(tmp_path: Path, text: str, name: str = "some_case") -> str:
    targets = set(load_matrix().targets)
    with pytest.raises(SchemaError) as caught:
        load_case(write_case(tmp_path, text, name), targets)
    message = str(caught.value)
    assert str(tmp_path / name / "case.toml") in message
    return message


def test_a_good_manifest_loads(tmp_path: Path) -> None:
    case = load_case(write_case(tmp_path, GOOD), set(load_matrix().targets))
    assert case.id == "some_case"
    assert case.expectations()[0][0] == "compiles-k"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD.replace('title = "t"\n', ""), "title: required field is missing"),
        (GOOD.replace('kernel = "k"', ""), "expect[0].kernel: required field is missing"),
        (
            GOOD.replace('framework = "triton"', "framework = 3"),
            "framework: must be 'triton', 'gluon', 'nvfuser' or 'tilelang' (got 3)",
        ),
        (
            GOOD.replace('framework = "triton"', 'framework = "cuda"'),
            "framework: must be 'triton', 'gluon', 'nvfuser' or 'tilelang' (got 'cuda')",
        ),
        ("colour = 1\n" + GOOD, "case.toml: colour: unknown key"),
        (GOOD.replace('kernel = "k"', 'kernel = "k"\nlimit = 3'), "expect[0].limit: unknown key"),
        (
            GOOD.replace('kind = "compiles"', 'kind = "speed"'),
            "expect[0].kind: must be one of 'artifact', "
            "'compiles', 'ir', 'numerics', 'perf', 'resource' (got 'speed')",
        ),
        (
            GOOD + 'targets = ["cuda:sm_75"]\n',
            "expect[0].targets: unknown target or backend 'cuda:sm_75'; allowed: cpu, cpu:interpreter",
        ),
        (GOOD + 'targets = ["tpu"]\n', "unknown target or backend 'tpu'"),
        (
            GOOD + '[[expect]]\nkind = "resource"\nkernel = "k"\nmetric = "shared_bytes"\nmax = "lots"\n',
            "expect[1].max: input should be a valid integer (got 'lots')",
        ),
        (
            GOOD + '[[expect]]\nkind = "ir"\nkernel = "k"\nstage = "ptx"\npattern = "("\nmax_count = 0\n',
            "expect[1].pattern: not a valid regular expression",
        ),
        (
            GOOD + '[[expect]]\nkind = "ir"\nkernel = "k"\nstage = "ptx"\npattern = "x"\n',
            "an ir expectation needs max_count or min_count",
        ),
        (
            GOOD + '[[expect]]\nkind = "ir"\nkernel = "k"\nstage = "ptx"\npattern = "bar"\nmax_count = 0\n'
            'inside = "branch_or_loop"\n',
            "reads the blocks of C-like code (cuda_source), not ptx",
        ),
        (GOOD + '[[expect]]\nkind = "compiles"\nkernel = "k"\n', "share the name 'compiles-k'"),
        (
            GOOD + '[[known_bad]]\nlink = "x"\nversions = "three"\n',
            "known_bad[0].versions: not a version specifier",
        ),
        (GOOD + '[[known_bad]]\nlink = "x"\nexpect = ["nope"]\n', "known_bad[0].expect names 'nope'"),
        (GOOD.replace('repo = "o/r"', 'repo = "r"'), "upstream.repo: must be 'owner/name'"),
        (GOOD + '[written_for]\nversions = "old"\nreason = "x"\n', "written_for.versions: not a version"),
        (GOOD + '[written_for]\nversions = "<3.9.0"\n', "written_for.reason: required field is missing"),
        (
            GOOD + '[written_for]\nversions = "<3.9.0"\nreason = "tl.make_block_ptr"\n'
            '[reproduce]\ntargets = ["cuda:sm_90"]\nbad = ["triton==3.0.0"]\ngood = ["triton==3.9.0"]\n',
            "reproduce.good[0] is 'triton==3.9.0', outside written_for.versions '<3.9.0'",
        ),
        ("title = [", "not valid TOML"),
    ],
)
def test_bad_manifests_name_file_and_field(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in problems(tmp_path, text)


def test_case_folder_names_are_identifiers(tmp_path: Path) -> None:
    assert "must match" in problems(tmp_path, GOOD, name="Bad-Name")


def test_missing_repro_is_reported(tmp_path: Path) -> None:
    path = write_case(tmp_path, GOOD)
    (path.parent / "repro.py").unlink()
    with pytest.raises(SchemaError, match=r"repro\.py is missing"):
        load_case(path, set(load_matrix().targets))


def test_collection_error_is_one_clear_message(tmp_path: Path) -> None:
    write_case(tmp_path / "corpus", "colour = 1\n" + GOOD)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2  # pytest's "interrupted by collection errors"
    assert "invalid case manifest:" in done.stdout
    assert "case.toml: colour: unknown key" in done.stdout
    assert "Traceback" not in done.stdout


def test_outside_the_releases_it_is_written_for_an_item_skips_saying_why(tmp_path: Path) -> None:
    """Whatever the compile did under a release the kernel cannot be written for, the item SKIPs
    naming the releases, the reason and the release that ran; inside them it is judged as ever."""
    from kregress.child_results import ConfigResult, ConfigStatus, JobStatus
    from kregress.item import judged
    from kregress.jobs import JobOutcome
    from kregress.judge import Outcome

    text = GOOD + '[written_for]\nversions = "<3.9.0"\nreason = "tl.make_block_ptr, removed in 3.9.0"\n'
    case = load_case(write_case(tmp_path, text), set(load_matrix().targets))
    name, expectation = case.expectations()[0]
    target = load_matrix().target("cuda:sm_90")
    broken = ConfigResult("default", {}, status=ConfigStatus.COMPILE_ERROR, error_type="CompilationError",
                          message="Block pointers have been removed")  # fmt: skip

    def outcome(version: str) -> JobOutcome:
        return JobOutcome(JobStatus.OK, configs=[broken], toolchain={"triton": version}, folder=tmp_path)

    skipped = judged(case, name, expectation, target, outcome("3.9.0")).verdict
    assert skipped.outcome == Outcome.SKIP
    assert skipped.message == (
        "the case's kernel is written for triton<3.9.0 (tl.make_block_ptr, removed in 3.9.0); "
        "this run has triton 3.9.0"
    )
    assert judged(case, name, expectation, target, outcome("3.8.0")).verdict.outcome == Outcome.FAIL
