"""What a bisection walks over: compiler releases from the package index, or the commits of a
local clone between a good and a bad ref (or between two releases' tags), each turned into a
toolchain spec the runner can install."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from kregress.package_index import PYPI, CandidateError, released_versions
from kregress.toolchains import (
    META,
    EnvironmentCache,
    Toolchain,
    ToolchainError,
    package_index,
)

DEFAULT_TAG_PATTERN = "v{version}"
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
PR_NUMBER = (re.compile(r"\(#(\d+)\)\s*$"), re.compile(r"^Merge pull request #(\d+)"))

if TYPE_CHECKING:
    import git  # imported where used: gitpython is slow to import and only git refs need it


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


def release_candidates(
    good: str, bad: str, *, pre: bool = False, index: str | None = None
) -> list[Candidate]:
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
    index = index or package_index() or PYPI
    versions = released_versions(low.package, index)
    ordered = (low.version, high.version)
    first, last = min(ordered), max(ordered)
    inside = [
        v for v in versions if first <= v <= last and (pre or not v.is_prerelease or v in ordered)
    ]  # fmt: skip
    for end in ordered:
        if end not in inside:
            raise CandidateError(f"{low.package}=={end} is not a release on {index}")
    if low.version > high.version:  # looking for the fix: walk backwards from good to bad
        inside.reverse()
    return [Candidate(f"{low.package}=={v}", toolchain=f"{low.package}=={v}") for v in inside]


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
    return commits_between(clone, good_commit.hexsha, bad_commit.hexsha, first_parent)


def commits_between(clone: git.Repo, good: str, bad: str, first_parent: bool) -> list[Candidate]:
    options = ["--first-parent"] if first_parent else []
    shas = clone.git.rev_list(*options, "--reverse", f"{good}..{bad}").split()
    commits = [clone.commit(good), *(clone.commit(sha) for sha in shas)]
    return [
        Candidate(f"{c.hexsha[:10]} {c.summary}", commit=c.hexsha, subject=str(c.summary)) for c in commits
    ]


@dataclass(frozen=True)
class TagRange:
    """The commits between two releases' tags. When the good tag is not an ancestor of the bad one
    (tags on release branches), the range starts at their merge base, whose verdict is not known."""

    candidates: list[Candidate]
    good_tag: str
    bad_tag: str
    starts_at_good_tag: bool


def tag_name(pattern: str, release: str) -> str:
    """The tag `pattern` (v{version}) gives `release` (triton==3.2.0)."""
    if "{version}" not in pattern:
        raise CandidateError(f"--tag-pattern {pattern!r} must contain {{version}}, e.g. v{{version}}")
    ref = parse_version_ref(release)
    if ref is None:
        raise CandidateError(f"{release!r} is not a release like triton==3.2.0")
    return pattern.format(version=ref.version)


def release_tag(repo: Path, pattern: str, release: str) -> str:
    """The tag of `release` under `pattern`, or a CandidateError naming the pattern when the clone
    has no such tag."""
    import git

    tag = tag_name(pattern, release)
    try:
        git.Repo(repo).commit(f"refs/tags/{tag}")
    except (git.exc.GitError, ValueError, git.exc.BadName):
        raise CandidateError(
            f"{repo} has no tag {tag!r} for {release} (tag pattern {pattern!r}): give the pattern of "
            "this repository's release tags with --tag-pattern, or fetch its tags (git fetch --tags)"
        ) from None
    return tag


def tag_range(repo: Path, pattern: str, good: str, bad: str, *, first_parent: bool = True) -> TagRange:
    """The commits from the last good release's tag to the first bad one's, inclusive."""
    import git

    good_tag, bad_tag = release_tag(repo, pattern, good), release_tag(repo, pattern, bad)
    clone = git.Repo(repo)
    low, high = clone.commit(f"refs/tags/{good_tag}"), clone.commit(f"refs/tags/{bad_tag}")
    starts_at_good_tag = clone.is_ancestor(low, high)
    if not starts_at_good_tag:
        bases = clone.merge_base(low, high)
        if not bases:
            raise CandidateError(f"{good_tag} and {bad_tag} share no history in {repo}")
        low = bases[0]
    commits = commits_between(clone, low.hexsha, high.hexsha, first_parent)
    return TagRange(commits, good_tag, bad_tag, starts_at_good_tag)


def environment_ready(spec: str) -> bool:
    """Whether judging under this toolchain needs no environment build (cheap for the search)."""
    try:
        return (EnvironmentCache().root / Toolchain.parse(spec).key() / META).exists()
    except ToolchainError:
        return False
