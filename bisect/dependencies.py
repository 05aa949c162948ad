"""What a culprit changed beneath the compiler's own code: a pinned dependency bumped by the
culprit commit (Triton's LLVM hash, its NVIDIA toolchain pin, a submodule such as TileLang's TVM),
or, between two releases, the LLVM each wheel bundles. A culprit that only bumps LLVM points the
reader at LLVM's history, not at the commit's diff."""

from __future__ import annotations

import mmap
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kregress.bisect.bisection import Level

# Files that pin a dependency by its version or commit, as the compilers judged here keep them.
PINNED_FILES = {
    "cmake/llvm-hash.txt": "LLVM",
    "cmake/nvidia-toolchain-version.json": "the NVIDIA toolchain (ptxas, cuobjdump)",
    "cmake/nvidia-toolchain-version.txt": "the NVIDIA toolchain (ptxas, cuobjdump)",
    "cmake/amd-toolchain-version.txt": "the AMD toolchain",
}
SUBMODULE_MODE = 0o160000
LLVM_VERSION = re.compile(rb"LLVM version (\d+\.\d+\.\d+(?:git)?)")
LLVM_COMMIT = re.compile(rb"\(https://github\.com/([\w.-]+/[\w.-]*llvm[\w.-]*) ([0-9a-f]{40})\)")


def short(text: str) -> str:
    """A pin as one line: a commit hash shortened, anything else as written."""
    text = " ".join(text.split())
    return text[:12] if re.fullmatch(r"[0-9a-f]{40}", text) else text[:120]


def dependency_bumps(repo: Path, commit: str, pins: tuple[str, ...] = ()) -> list[str]:
    """Each pinned dependency the commit changes against its first parent, with both versions;
    `pins` adds files the matrix declares for the repository."""
    pinned = {**PINNED_FILES, **{path: path for path in pins if path not in PINNED_FILES}}
    import git

    found = git.Repo(repo).commit(commit)
    if not found.parents:
        return []
    bumps = []
    for change in found.parents[0].diff(found):
        path = change.b_path or change.a_path
        modes = {change.a_mode, change.b_mode}
        if SUBMODULE_MODE in modes:
            before = change.a_blob.hexsha if change.a_blob else "none"
            after = change.b_blob.hexsha if change.b_blob else "none"
            bumps.append(f"submodule {path}: {short(before)} → {short(after)}")
        elif path in pinned:
            before = change.a_blob.data_stream.read().decode(errors="replace") if change.a_blob else "none"
            after = change.b_blob.data_stream.read().decode(errors="replace") if change.b_blob else "none"
            bumps.append(f"{pinned[path]} ({path}): {short(before)} → {short(after)}")
    return bumps


def bundled_llvm(environment: Path) -> str | None:
    """The LLVM a Triton wheel was built with, as its library names it: the version, and the
    llvm-project commit where the wheel records one (3.7 and later). None when it says neither."""
    libraries = sorted(environment.glob("lib/python*/site-packages/triton/_C/libtriton*.so"))
    if not libraries:
        return None
    with libraries[0].open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        version = LLVM_VERSION.search(data)  # type: ignore[call-overload]
        commit = LLVM_COMMIT.search(data)  # type: ignore[call-overload]
        named = version.group(1).decode() if version else None
        pinned = (commit.group(1).decode(), commit.group(2).decode()[:12]) if commit else None
    if named is None and pinned is None:
        return None
    said = f"LLVM {named}" if named else "LLVM"
    return said + (f" ({pinned[0]}@{pinned[1]})" if pinned else "")


def compare_link(repository: str | None, good: str, bad: str, tag_pattern: str = "v{version}") -> str | None:
    """The upstream compare view between two releases' tags, oldest first (what a reader opens
    next); None for a package without a known repository or a version with no tag (a dev build)."""
    from kregress.bisect.candidates import parse_version_ref

    refs = [parse_version_ref(label) for label in (good, bad)]
    if repository is None or any(r is None or r.version.is_devrelease for r in refs):
        return None
    older, newer = sorted(str(r.version) for r in refs if r is not None)
    tags = (tag_pattern.format(version=v) for v in (older, newer))
    return f"https://github.com/{repository}/compare/{next(tags)}...{next(tags)}"


def boundary_context(level: Level, framework: str, tag_pattern: str = "v{version}") -> list[str]:
    """Below the culprit's diff: the compare view between two releases, the LLVM each wheel
    bundles, or the pinned dependencies a culprit commit bumps."""
    from kregress.bisect.candidates import parse_version_ref
    from kregress.frameworks import FRAMEWORKS
    from kregress.toolchains import EnvironmentCache, Toolchain, ToolchainError

    good, bad = level.last_good, level.culprit
    if good is None or bad is None:
        return []
    lines: list[str] = []
    builder = level.bisection.builder
    if bad.commit is not None and builder is not None:
        bumps = dependency_bumps(builder.repo, bad.commit, builder.recipe.pins)
        if bumps:
            lines += ["", "The culprit bumps a pinned dependency; look there as well as at its diff:"]
            lines += [f"- {bump}" for bump in bumps]
        return lines
    versions = [parse_version_ref(c.label) for c in (good, bad)]
    if versions[0] is None:
        return []
    repository = FRAMEWORKS[framework].repository_of(versions[0].package) if framework in FRAMEWORKS else None
    link = compare_link(repository, good.label, bad.label, tag_pattern)
    if link:
        lines += ["", f"What changed between the two releases: {link}"]
    bundled = []
    for candidate in (good, bad):
        spec = level.bisection.known_toolchain(candidate)
        try:
            environment = EnvironmentCache().get(Toolchain.parse(spec)) if spec else None
        except ToolchainError:
            environment = None
        bundled.append(bundled_llvm(environment.root) if environment else None)
    if any(bundled):
        shown = [
            f"{c.label}: {b or 'not named in the wheel'}" for c, b in zip((good, bad), bundled, strict=True)
        ]
        same = " (the same)" if bundled[0] == bundled[1] else ""
        lines += ["", f"Bundled LLVM{same}: " + "; ".join(shown) + "."]
    return lines
