"""From two releases to the culprit commit in one `kregress bisect`: a compiler made here, released
on a local index from tagged commits, turned bad by one commit between two releases."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import git
import pytest
from compiler_fixture import BAD, GOOD, Step, build_release, local_index, make_compiler_repo, run_bisect
from rich.console import Console

from kregress.bisect.bisection import Bisection, Speculator
from kregress.bisect.candidates import (
    CandidateError,
    commit_candidates,
    release_candidates,
    tag_range,
)
from kregress.builds import BuildCache
from kregress.judging_service import CaseRun, Memo
from kregress.package_index import newest_release

HISTORY = [
    Step("Initial compiler", GOOD, release="0.1"),
    Step("Add a fast path", GOOD),
    Step("Release 0.2", GOOD, release="0.2"),
    Step("Rework the scheduler (#37)", GOOD),
    Step("Speed up the loader", GOOD),
    Step("Break the build", GOOD, buildable=False),
    Step("Fix the build", GOOD),
    Step("Vectorize scale (#42)", BAD),
    Step("Release 0.3", BAD, release="0.3"),
    Step("More tidying", BAD),
    Step("Release 0.4", BAD, release="0.4"),
    Step("Release 0.5", BAD, release="0.5", tagged=False),  # released, but its tag was never pushed
]


def released(tmp_path: Path) -> tuple[git.Repo, list[str], list[Path]]:
    repo, shas = make_compiler_repo(tmp_path / "tinycc", HISTORY)
    releases = [sha for sha, step in zip(shas, HISTORY, strict=True) if step.release]
    wheels = [build_release(repo, sha, tmp_path / "wheels") for sha in releases]
    return repo, shas, wheels


@pytest.mark.slow
def test_two_releases_to_the_culprit_commit_and_its_pr(tmp_path: Path) -> None:
    repo, shas, wheels = released(tmp_path)
    report = tmp_path / "report.md"
    with local_index(tmp_path / "index", wheels) as index:
        common = ("--good", "tinycc==0.1", "--bad", "tinycc==0.4")
        common += ("--repo", repo.working_dir, "--index-url", index)
        done = run_bisect(tmp_path, *common, "--markdown", str(report))
        output = done.stdout + done.stderr
        assert done.returncode == 0, output
        text = report.read_text()
        # Both levels in one report: the release, then the commit with its PR.
        assert "- Releases: First bad (fail): **tinycc==0.3**; last good: tinycc==0.2." in text, text
        assert (
            f"- Commits between v0.2 and v0.3: First bad (fail): **{shas[7][:10]} Vectorize scale (#42)** "
            f"(PR #42); last good: {shas[6][:10]} Fix the build." in text
        ), text
        assert "cannot be built" in text  # the broken commit was stepped around, as a skip
        assert "(as tinycc==0.2)" in text and "(as tinycc==0.3)" in text  # the tags' verdicts, reused
        assert "WRONG_RESULT" in text and "Reproduce:" in text
        assert "ahead" in done.stderr  # the next points' environments were built while one was judged
        # The tag of 0.3 goes missing: the releases still name 0.3, and the commits cannot be searched.
        repo.delete_tag("v0.3")
        again = run_bisect(tmp_path, *common, "--markdown", str(report))
        assert again.returncode == 1, again.stdout + again.stderr
        assert "lacks the tags v0.3 (pattern 'v{version}')" in again.stderr
        text = report.read_text()
        assert "- Releases: First bad (fail): **tinycc==0.3**" in text
        assert "has no tag 'v0.3' for tinycc==0.3 (tag pattern 'v{version}')" in text, text


def test_missing_end_tags_are_a_usage_error_naming_the_pattern(tmp_path: Path) -> None:
    repo, _, wheels = released(tmp_path)
    with local_index(tmp_path / "index", wheels) as index:
        common = ("--repo", repo.working_dir, "--index-url", index)
        done = run_bisect(tmp_path, "--good", "tinycc==0.1", "--bad", "tinycc==0.5", *common)
        assert done.returncode == 64, done.stderr
        assert "has no tag 'v0.5' for tinycc==0.5 (tag pattern 'v{version}')" in done.stderr
        other = run_bisect(tmp_path, "--good", "tinycc==0.1", "--bad", "tinycc==0.4", *common,
                           "--tag-pattern", "release-{version}")  # fmt: skip
        assert other.returncode == 64 and "no tag 'release-0.1'" in other.stderr, other.stderr
        unknown = run_bisect(tmp_path, "--good", "tinycc==0.1", "--bad", "tinycc==0.9", *common)
        assert unknown.returncode == 64 and f"tinycc==0.9 is not a release on {index}" in unknown.stderr


def test_releases_come_from_a_simple_index(tmp_path: Path) -> None:
    names = ("tinycc-0.1-py3-none-any.whl", "tinycc-0.2.tar.gz", "tinycc-0.3rc1-py3-none-any.whl",
             "tinycc-0.3-py3-none-any.whl")  # fmt: skip
    files = [tmp_path / name for name in names]
    for path in files:
        path.write_bytes(b"")  # listing reads file names only
    with local_index(tmp_path / "index", files) as index:
        found = release_candidates("tinycc==0.1", "tinycc==0.3", index=index)
        assert [c.label for c in found] == ["tinycc==0.1", "tinycc==0.2", "tinycc==0.3"]
        with_pre = release_candidates("tinycc==0.1", "tinycc==0.3", index=index, pre=True)
        assert "tinycc==0.3rc1" in [c.label for c in with_pre]
        backwards = release_candidates("tinycc==0.3", "tinycc==0.1", index=index)  # a fix search
        assert backwards[0].label == "tinycc==0.3"
        with pytest.raises(CandidateError, match="nothere is not on the index"):
            release_candidates("nothere==1.0", "nothere==2.0", index=index)
        # An unpinned toolchain is its newest release (no pre-releases unless asked), a pinned one itself.
        assert newest_release("tinycc", index=index) == "tinycc==0.3"
        assert newest_release("tinycc<0.3", index=index) == "tinycc==0.2"
        assert newest_release("tinycc==0.1", index=index) == "tinycc==0.1"
        with pytest.raises(CandidateError, match=r"no release of tinycc on .* matches 'tinycc>1'"):
            newest_release("tinycc>1", index=index)


def test_tags_on_release_branches_start_at_their_merge_base(tmp_path: Path) -> None:
    repo, shas = make_compiler_repo(tmp_path / "tinycc", [Step("Initial", GOOD), Step("Main work", GOOD)])
    repo.git.checkout("-b", "release/0.2", shas[0])
    (Path(repo.working_dir) / "NOTES").write_text("0.2\n")
    repo.index.add(["NOTES"])
    repo.index.commit("Cherry-pick a fix for 0.2")
    repo.create_tag("v0.2")
    repo.git.checkout("main")
    (Path(repo.working_dir) / "NOTES").write_text("0.3\n")
    repo.index.add(["NOTES"])
    repo.index.commit("Release 0.3")
    repo.create_tag("v0.3")
    commits = tag_range(Path(repo.working_dir), "v{version}", "tinycc==0.2", "tinycc==0.3")
    assert not commits.starts_at_good_tag
    assert commits.candidates[0].commit == shas[0]  # the merge base, judged rather than borrowed
    assert [c.subject for c in commits.candidates[1:]] == ["Main work", "Release 0.3"]
    with pytest.raises(CandidateError, match="must contain"):
        tag_range(Path(repo.working_dir), "v", "tinycc==0.2", "tinycc==0.3")


def test_a_build_no_longer_needed_is_cancelled_and_leaves_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    repo, shas = make_compiler_repo(tmp_path / "tinycc", [Step("One", GOOD), Step("Two", GOOD)])
    builder = BuildCache(Path(repo.working_dir), "sleep 60 && cp -r {src} {out}/never")
    one, two = commit_candidates(Path(repo.working_dir), shas[0], shas[1])
    run = CaseRun(tmp_path, "none", None, None)
    bisection = Bisection(run, "fail", 1, builder, Memo(tmp_path / "memo.json"), Console(quiet=True))
    ahead = Speculator(bisection)
    started = time.perf_counter()
    ahead.prepare([], [one])
    while not (builder.folder(one.commit) / "src").exists():  # the build is under way
        assert time.perf_counter() - started < 30
        time.sleep(0.05)
    ahead.prepare([], [two])  # one can no longer come next
    ahead.close()  # and two is not needed either: the search ended
    assert time.perf_counter() - started < 20  # neither waited for its 60 s build
    assert ahead.started == 2 and ahead.cancelled >= 1
    for candidate in (one, two):
        assert not builder.folder(candidate.commit).exists()  # no half build, no FAILED marker
        assert builder.built(candidate.commit) is None and not builder.failed(candidate.commit)
    assert threading.active_count() < 10
