"""`kregress bisect` over a real git repository made here, whose "compiler" is a tiny Python
package: it turns bad at a known commit, one commit cannot be built and one is flaky."""

from __future__ import annotations

import json
import re
from pathlib import Path

import git
import pytest
from compiler_fixture import BAD, FLAKY, GOOD, Step, make_compiler_repo, run_bisect
from pytest_httpserver import HTTPServer

from kregress.cli import main

OLD_LLVM, NEW_LLVM = "a1" * 20, "b2" * 20


def make_repo(folder: Path) -> tuple[git.Repo, list[str]]:
    return make_compiler_repo(
        folder,
        [
            Step("Initial compiler", GOOD, files={"cmake/llvm-hash.txt": OLD_LLVM + "\n"}),
            Step("Add a fast path", GOOD),
            Step("Rework the scheduler (#37)", FLAKY),
            Step("Break the build", GOOD, buildable=False),
            Step("Fix the build", GOOD),
            Step("Vectorize scale (#42)", BAD, files={"cmake/llvm-hash.txt": NEW_LLVM + "\n"}),
            Step("Tidy up", BAD),
            Step("More tidying", BAD),
            Step("Fix scale for large inputs (#50)", GOOD),
            Step("Update docs", GOOD),
        ],
    )


def bisect(tmp_path: Path, *args: str):
    return run_bisect(tmp_path, *args)


@pytest.mark.slow
def test_bisect_finds_the_culprit_commit_around_skips_and_flakes(
    tmp_path: Path, httpserver: HTTPServer
) -> None:
    repo, shas = make_repo(tmp_path / "tinycc")
    report = tmp_path / "report.md"
    args = ("--repo", str(repo.working_dir), "--good", shas[0], "--bad", shas[7], "--reruns", "3")
    done = bisect(tmp_path, *args, "--markdown", str(report))
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    text = report.read_text()
    assert f"First bad (fail): **{shas[5][:10]} Vectorize scale (#42)** (PR #42)" in text
    assert "cannot be built" in text  # the broken commit was stepped around, as a skip
    assert "good (bad/good/good" in text  # the flaky commit: at least three votes, majority good
    assert "Confidence that this is the culprit: " in text
    # The comment on GitHub (the real PyGithub client, a local fake server) says it too.
    thread = "/repos/owner/compiler/issues/5/comments"
    httpserver.expect_oneshot_request(thread, method="GET").respond_with_json([])
    httpserver.expect_oneshot_request(thread, method="POST").respond_with_json(
        {"id": 1, "body": "x", "html_url": "https://github.com/owner/compiler/issues/5#issuecomment-1"},
        status=201,
    )
    api = httpserver.url_for("").rstrip("/")
    posted = main(["comment", "post", str(report), "--on", "5", "--repo", "owner/compiler",
                   "--key", "tiny:cpu", "--token", "t0k", "--api-url", api])  # fmt: skip
    assert posted == 0
    sent = json.loads(httpserver.log[-1][0].data)["body"]
    assert re.search(r"Confidence that this is the culprit: \d+\.\d% \(.*; \d+ runs over \d+ points", sent)
    assert "WRONG_RESULT" in text
    assert "Reproduce:" in text and "--toolchain" in text
    # The culprit also moved the LLVM pin: the report names both hashes.
    assert "The culprit bumps a pinned dependency" in text
    assert f"- LLVM (cmake/llvm-hash.txt): {OLD_LLVM[:12]} → {NEW_LLVM[:12]}" in text
    # Both ends are verified first: a "good" end that is bad stops with what was observed.
    wrong = bisect(tmp_path, "--repo", str(repo.working_dir), "--good", shas[5], "--bad", shas[7])
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert f"the good end {shas[5][:10]} Vectorize scale (#42) is bad" in wrong.stderr
    # Looking for the fix the other way round is the same search with --regress pass.
    fix = bisect(
        tmp_path, "--repo", str(repo.working_dir), "--good", shas[0], "--bad", shas[1], "--regress", "pass"
    )
    # A fix search names its ends as such: the broken one (--good) must not hold already.
    assert fix.returncode == 1 and f"the broken end {shas[0][:10]} Initial compiler" in fix.stderr
    assert "holds already" in fix.stderr or "cannot be judged" in fix.stderr


def test_usage_errors_exit_64(tmp_path: Path) -> None:
    assert bisect(tmp_path, "--good", "abc", "--bad", "def").returncode == 64  # git refs need --repo
    done = bisect(tmp_path, "--good", "triton==3.2.0", "--bad", "tilelang==0.1.0")
    assert done.returncode == 64 and "one package" in done.stderr
    assert bisect(tmp_path, "--good", "2026-01-01", "--bad", "2026-02-01").returncode == 64
    same = bisect(tmp_path, "--good", "triton-xpu==3.3.0b1", "--bad", "triton-xpu==3.3.0b1")
    assert same.returncode == 64 and "both name triton-xpu==3.3.0b1" in same.stderr, same.stderr


@pytest.mark.slow
def test_the_posterior_search_finds_the_culprit_with_a_noise_model_from_the_history(tmp_path: Path) -> None:
    """--search posterior: the item's history says it fails now and then on good code and never
    passes on bad code; the search asks again where a FAIL may be a lie and names the culprit with
    the mass it holds."""
    from kregress.history import store
    from kregress.record import RunResults

    repo, shas = make_repo(tmp_path / "tinycc")
    history = tmp_path / "history.sqlite"
    for outcome in ["PASS"] * 8 + ["FAIL"] * 2:
        item = {"case": "tiny", "expectation": "numerics", "target": "cpu:interpreter", "outcome": outcome,
                "toolchain": {"triton": "3.6.0"}}  # fmt: skip
        store(history, RunResults.model_validate({"items": [item]}))
    report = tmp_path / "report.md"
    args = ("--repo", str(repo.working_dir), "--good", shas[0], "--bad", shas[7], "--search", "posterior",
            "--history", str(history), "-e", "numerics", "--markdown", str(report))  # fmt: skip
    done = bisect(tmp_path, *args)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "noise model from the history" in output and "false FAIL 2 of 10 runs on good code" in output
    text = report.read_text()
    assert f"First bad (fail): **{shas[5][:10]} Vectorize scale (#42)** (PR #42)" in text, text
    assert re.search(r"\| (bad|good) \((bad|good)(/(bad|good))+\)", text), text  # a point asked again
    assert re.search(r"Confidence that this is the culprit: 99\.\d%", text), text
