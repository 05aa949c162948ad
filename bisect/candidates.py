"""What a bisection walks over: compiler releases from the package index, or the commits of a
local clone between a good and a bad ref, each turned into a toolchain spec the runner can install."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from kregress.paths import cache_root
from kregress.toolchains import META, EnvironmentCache, Toolchain, ToolchainError

PYPI_JSON = "https://pypi.org/pypi"
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
PR_NUMBER = (re.compile(r"\(#(\d+)\)\s*$"), re.compile(r"^Merge pull request #(\d+)"))


class CandidateError(Exception):
    """The refs or the repository do not give a range to search (a usage problem)."""


class BuildFailed(Exception):
    """A commit could not be built into a toolchain: that point is a skip, like exit 125."""


@dataclass(frozen=True)
class Candidate:
    """One point of the search: a release (`toolchain` is its requirement) or a commit (built on
    demand; `toolchain` is then filled by the builder)."""

    label: str
    toolchain: str | None = None
    commit: str | None = None
    subject: str = ""

    @property
    def key(self) -> str:
        return self.commit or self.toolchain or self.label

    @property
    def pr(self) -> int | None:
        for pattern in PR_NUMBER:
            found = pattern.search(self.subject)
            if found:
                return int(found.group(1))
        return None


@dataclass(frozen=True)
class VersionRef:
    package: str
    version: Version


def parse_version_ref(ref: str) -> VersionRef | None:
    """`triton==3.2.0` is a release; anything else is left to git."""
    if DATE.match(ref):
        raise CandidateError(
            f"{ref!r}: nightly wheels by date need a nightly package index, and none is configured; "
            "give a release (triton==3.2.0) or a git ref with --repo"
        )
    if "==" not in ref:
        return None
    try:
        requirement = Requirement(ref)
        (spec,) = requirement.specifier
        return VersionRef(requirement.name, Version(spec.version))
    except (InvalidRequirement, InvalidVersion, ValueError):
        raise CandidateError(f"{ref!r} is not a release like triton==3.2.0") from None


def release_candidates(good: str, bad: str, *, pre: bool = False, index: str = PYPI_JSON) -> list[Candidate]:
    """Released versions from `good` to `bad` inclusive, in version order (newest last when the
    search looks for a regression, oldest last when it looks for a fix)."""
    low, high = parse_version_ref(good), parse_version_ref(bad)
    if low is None or high is None or low.package != high.package:
        raise CandidateError(f"--good {good!r} and --bad {bad!r} must name releases of one package")
    if low.version == high.version:
        raise CandidateError(
            f"--good and --bad both name {low.package}=={low.version}: there is no change to find "
            "between one release and itself (kregress verify judges a single release)"
        )
    with urllib.request.urlopen(f"{index}/{low.package}/json", timeout=60) as response:
        releases = json.load(response)["releases"]
    versions = sorted(
        Version(text)
        for text, files in releases.items()
        if files and not all(f.get("yanked") for f in files) and valid_version(text)
    )
    ordered = (low.version, high.version)
    first, last = min(ordered), max(ordered)
    inside = [
        v for v in versions if first <= v <= last and (pre or not v.is_prerelease or v in ordered)
    ]  # fmt: skip
    for end in ordered:
        if end not in inside:
            raise CandidateError(f"{low.package}=={end} is not a release on {index}/{low.package}")
    if low.version > high.version:  # looking for the fix: walk backwards from good to bad
        inside.reverse()
    return [Candidate(f"{low.package}=={v}", toolchain=f"{low.package}=={v}") for v in inside]


def valid_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def commit_candidates(repo: Path, good: str, bad: str, *, first_parent: bool = True) -> list[Candidate]:
    """The good commit, then every commit up to and including bad (first-parent by default)."""
    import git

    try:
        clone = git.Repo(repo)
        good_commit, bad_commit = clone.commit(good), clone.commit(bad)
    except (git.exc.GitError, ValueError, git.exc.BadName) as exc:
        raise CandidateError(f"{repo}: cannot resolve {good!r} and {bad!r}: {exc}") from None
    if not clone.is_ancestor(good_commit, bad_commit):
        raise CandidateError(f"{good} ({good_commit.hexsha[:10]}) is not an ancestor of {bad}")
    options = ["--first-parent"] if first_parent else []
    shas = clone.git.rev_list(*options, "--reverse", f"{good_commit.hexsha}..{bad_commit.hexsha}").split()
    commits = [good_commit, *(clone.commit(sha) for sha in shas)]
    return [
        Candidate(f"{c.hexsha[:10]} {c.summary}", commit=c.hexsha, subject=str(c.summary)) for c in commits
    ]


class CommitBuilder:
    """Builds a commit into something `--toolchain` installs, once: the source tree itself, or what
    `--build-cmd` leaves in {out} (e.g. `pip wheel --no-deps -w {out} {src}`). Failures are cached too."""

    def __init__(self, repo: Path, build_cmd: str | None, root: Path | None = None) -> None:
        self.repo = repo.resolve()
        self.build_cmd = build_cmd
        identity = f"{self.repo}|{build_cmd or ''}"
        self.root = (root or cache_root() / "builds") / hashlib.sha256(identity.encode()).hexdigest()[:12]

    def folder(self, sha: str) -> Path:
        return self.root / sha

    def built(self, sha: str) -> str | None:
        marker = self.folder(sha) / "toolchain"
        return marker.read_text() if marker.exists() else None

    def build(self, sha: str) -> str:
        import git

        done = self.built(sha)
        if done:
            return done
        folder = self.folder(sha)
        failed = folder / "FAILED"
        if failed.exists():
            raise BuildFailed(failed.read_text())
        shutil.rmtree(folder, ignore_errors=True)
        src, out = folder / "src", folder / "out"
        src.mkdir(parents=True)
        out.mkdir()
        with tempfile.TemporaryFile() as archive:
            git.Repo(self.repo).archive(archive, treeish=sha, format="tar")
            archive.seek(0)
            with tarfile.open(fileobj=archive) as tar:
                tar.extractall(src, filter="data")
        if self.build_cmd is None:
            spec = str(src)
        else:
            command = self.build_cmd.format(src=src, out=out)
            run = subprocess.run(command, shell=True, cwd=src, capture_output=True, text=True, check=False)
            products = sorted(p for p in out.iterdir() if p.is_file())
            if run.returncode != 0 or not products:
                log = f"$ {command}\n(exit {run.returncode})\n{(run.stdout + run.stderr)[-3000:]}"
                if run.returncode == 0:
                    log += f"\nthe build command left nothing in {out}"
                failed.write_text(log)
                raise BuildFailed(log)
            spec = " ".join(str(p) for p in products)
        (folder / "toolchain").write_text(spec)
        return spec


def environment_ready(spec: str) -> bool:
    """Whether judging under this toolchain needs no environment build (cheap for the search)."""
    try:
        return (EnvironmentCache().root / Toolchain.parse(spec).key() / META).exists()
    except ToolchainError:
        return False
