"""A release that cannot target an architecture at all (Triton before 3.3 for Blackwell) is not
applicable there: counted once with the reason, never a FAIL, never a point of a bisect or verify.
The matrix says from which release each target builds (`since`); the slow test holds that against
real releases, compiling the smallest kernel there is with the release before and the one named."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from conftest import CORPORA, REPO, run_corpus
from kregress.bisect.candidates import Candidate, CandidateError
from kregress.bisect.command import applicable_releases
from kregress.cli import main
from kregress.matrix import DEFAULT_MATRIX, load_matrix, pinned_releases


def matrix_with_since(tmp_path: Path, target: str, since: str) -> Path:
    """The shipped matrix with `target` first built by triton `since`."""
    text = DEFAULT_MATRIX.read_text()
    header = f'[targets."{target}"]\n'
    assert header in text
    path = tmp_path / "matrix.toml"
    path.write_text(text.replace(header, f'{header}since = {{ triton = "{since}" }}\n', 1))
    return path


def test_a_target_says_which_releases_predate_it() -> None:
    sm_100 = load_matrix().target("cuda:sm_100")
    assert (
        sm_100.predates("triton", "3.2.0")
        == "triton 3.2.0 predates cuda:sm_100 (first built by triton 3.3.0)"
    )
    assert sm_100.predates("triton", "3.3.0") is None
    assert sm_100.predates("triton", "3.3.0rc1") is None  # a candidate of the first release builds it
    assert sm_100.predates("tilelang", "0.1.6") is None  # a package it says nothing of
    assert sm_100.predates_toolchain("triton==3.1.0")
    assert sm_100.predates_toolchain("/wheels/triton-3.2.0+git1234-cp311-cp311-linux_x86_64.whl")
    assert sm_100.predates_toolchain("triton>=3.0") is None  # not one release: the child says
    assert pinned_releases(["triton==3.2.0", "apache-tvm-ffi==0.1.6", "numpy<2"]) == {
        "triton": "3.2.0", "apache-tvm-ffi": "0.1.6"}  # fmt: skip


def test_a_since_that_is_not_a_version_names_the_field(tmp_path: Path, capsys) -> None:
    path = matrix_with_since(tmp_path, "cuda:sm_90", "three")
    assert main(["--matrix", str(path), "targets"]) != 0
    assert "since.triton = 'three' is not a release version" in capsys.readouterr().err


def test_a_release_older_than_the_target_is_counted_not_collected(tmp_path: Path) -> None:
    """The installed triton judges sm_90 and sm_80; a matrix saying sm_90 is built from a later
    release leaves sm_90 out, says so once with the reason, and judges sm_80 as before."""
    matrix = matrix_with_since(tmp_path, "cuda:sm_90", "99.0")
    run = run_corpus(
        tmp_path, "kinds/vector_add",
        args=("--matrix", str(matrix), "--target", "cuda:sm_90", "--target", "cuda:sm_80", "-k", "compiles"),
    )  # fmt: skip
    assert run.returncode == 0, run.output[-3000:]
    assert set(run.outcomes().values()) == {"PASS"}
    assert {name.split("[")[1] for name in run.outcomes()} == {"cuda:sm_80]"}
    reasons = run.document["not_applicable"]["by_reason"]
    why = next(reason for reason in reasons if "predates" in reason)
    assert why.startswith("triton ") and why.endswith("predates cuda:sm_90 (first built by triton 99.0)")
    assert "predates cuda:sm_90" in run.output  # said in the terminal summary, once


def test_check_refuses_a_reproduce_release_older_than_its_target(tmp_path: Path, capsys) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPORA / "verify" / "bad_end_holds", corpus / "bad_end_holds")
    manifest = corpus / "bad_end_holds" / "case.toml"
    text = manifest.read_text()
    manifest.write_text(text.replace('bad = ["triton==3.6.0"]', 'bad = ["triton==3.2.0"]'))
    matrix = matrix_with_since(tmp_path, "cuda:sm_90", "3.3.0")
    assert main(["--matrix", str(matrix), "check", str(corpus)]) == 2
    out = capsys.readouterr().out
    assert "reproduce.bad[0] is 'triton==3.2.0', which cannot show the bug on cuda:sm_90" in out
    assert "triton 3.2.0 predates cuda:sm_90 (first built by triton 3.3.0)" in out


def test_verify_makes_no_point_of_a_release_older_than_the_target(tmp_path: Path, capsys) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPORA / "verify" / "bad_end_holds", corpus / "bad_end_holds")
    manifest = corpus / "bad_end_holds" / "case.toml"
    manifest.write_text(manifest.read_text().replace('bad = ["triton==3.6.0"]', 'bad = ["triton==3.2.0"]'))
    matrix = matrix_with_since(tmp_path, "cuda:sm_90", "3.3.0")
    report = tmp_path / "verify.json"
    code = main(["--matrix", str(matrix), "verify", "--corpus", str(corpus), "--no-ledger", "--json",
                 str(report), "bad_end_holds"])  # fmt: skip
    assert code == 1
    (verdict,) = json.loads(report.read_text())
    bad = [c for c in verdict["checks"] if c["role"] == "bad"]
    assert [(c["toolchain"], c["outcome"], c["ok"]) for c in bad] == [
        ("triton==3.2.0", "not applicable", False)
    ]
    assert "predates cuda:sm_90" in bad[0]["why"]
    assert "bad end triton==3.2.0 on cuda:sm_90: not applicable" in capsys.readouterr().err


def test_a_bisect_skips_releases_older_than_its_target_and_refuses_such_an_end() -> None:
    args = argparse.Namespace(target="cuda:sm_100", matrix=None, good="triton==3.2.0", bad="triton==3.6.0")
    releases = [Candidate(f"triton=={v}", toolchain=f"triton=={v}") for v in ("3.2.0", "3.3.0", "3.6.0")]
    console = Console(record=True, width=200)
    with pytest.raises(
        CandidateError, match=r"triton==3.2.0 cannot be judged on cuda:sm_100: triton 3.2.0 predates"
    ):
        applicable_releases(releases, args, console)
    args.good = "triton==3.3.0"
    kept = applicable_releases(releases[1:], args, console)
    assert [c.label for c in kept] == ["triton==3.3.0", "triton==3.6.0"]
    args.good, args.bad = "triton==3.6.0", "triton==3.3.0"  # a fix search: the same rule
    assert applicable_releases(releases[1:], args, console) == kept
    args.target = None  # every target of the backend: the child leaves out what does not apply
    assert applicable_releases(releases, args, console) == releases


RELEASES_AROUND_SINCE = {
    # target: (the release before `since`, which must fail to build the smallest kernel, `since`)
    "cuda:sm_100": ("3.2.0", "3.3.0"),
    "cuda:sm_120": ("3.2.0", "3.3.0"),
    "cuda:sm_103": ("3.5.1", "3.6.0"),
    "hip:gfx950": ("3.1.0", "3.2.0"),
}


@pytest.mark.slow
@pytest.mark.parametrize("target", sorted(RELEASES_AROUND_SINCE))
def test_the_matrix_says_from_which_release_each_target_builds(tmp_path: Path, target: str) -> None:
    """With `since` taken out of the matrix, the release before it cannot build the target at all
    (its items SKIP: the trivial kernel fails) and the release it names compiles the kernel."""
    before, first = RELEASES_AROUND_SINCE[target]
    assert load_matrix().target(target).since == {"triton": first}
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(
        "\n".join(line for line in DEFAULT_MATRIX.read_text().splitlines() if not line.startswith("since ="))
    )
    outcomes = {}
    for release in (before, first):
        args = ("--matrix", str(matrix), "--target", target, "-k", "compiles")
        run = run_corpus(
            tmp_path / release, "kinds/vector_add", args=(*args, "--toolchain", f"triton=={release}")
        )
        (record,) = run.document["items"]
        outcomes[release] = (record["outcome"], record.get("message") or "")
    assert outcomes[before][0] == "SKIP" and "cannot build" in outcomes[before][1], outcomes
    assert outcomes[first][0] == "PASS", outcomes


@pytest.mark.slow
def test_the_register_figure_is_the_binarys_own_from_3_7_on(tmp_path: Path) -> None:
    """From 3.7.0 Triton assembles with --regAllocOptLevel=2; a `ptxas -v` without it reports another
    allocation (measured under 3.9.0 on sm_120: 80 registers, the cubin 84). The figure kregress
    reads must be the cubin's, on every target, under the newest release as under the pinned one."""
    corpus = tmp_path / "work" / "corpus"
    shutil.copytree(REPO / "corpus" / "native_binary_flags", corpus / "native_binary_flags")
    args = ("--target", "cuda:sm_120", "--target", "cuda:sm_90", "-k", "cubin-registers-match-ptxas")
    run = run_corpus(tmp_path, args=(*args, "--toolchain", "triton==3.9.0"))
    assert set(run.outcomes().values()) == {"PASS"} and len(run.outcomes()) == 2, run.output[-3000:]
