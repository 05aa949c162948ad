"""The hardware matrix (runner/matrix.toml): targets, their limits, backends and CI runners."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from kregress.schema import SchemaError, Strict, parse, read_toml

TargetKind = Literal["interpreter", "device", "compile"]
Backend = Literal["cpu", "cuda", "hip", "xpu"]  # the names of kregress.backends.BACKENDS


class Target(Strict):
    kind: TargetKind
    backend: Backend
    arch: str | None = None
    warp_size: int | None = None
    limits: dict[str, int] = Field(default_factory=dict)
    toolchain: str | None = Field(default=None, description="toolchain that builds this target by default")
    properties: dict[str, Any] = Field(
        default_factory=dict, description="device properties a compiler reads at compile time (XPU)"
    )
    since: dict[str, str] = Field(
        default_factory=dict,
        description="by package: the first release that builds this target at all; an older one is not "
        "applicable here (not a FAIL, not a point of a bisect or of verify)",
    )
    name: str = ""

    @field_validator("since")
    @classmethod
    def _releases(cls, since: dict[str, str]) -> dict[str, str]:
        for package, release in since.items():
            if not RELEASE.fullmatch(release):
                raise ValueError(f"since.{package} = {release!r} is not a release version")
        return since

    @property
    def runs_kernels(self) -> bool:
        return self.kind != "compile"

    def predates_toolchain(self, spec: str) -> str | None:
        """Why the toolchain `spec` (triton==3.2.0, a wheel) cannot target this at all, or None."""
        pins = pinned_releases(spec.split())
        return next(filter(None, (self.predates(p, v) for p, v in pins.items())), None)

    def predates(self, package: str, version: str) -> str | None:
        """Why release `version` of `package` cannot target this at all (it is older than the first
        that can), or None. A version that is not a release (a local build) is taken as applicable."""
        first = self.since.get(package)
        found = RELEASE.match(version)
        if first is None or found is None:
            return None
        if release_of(found.group(0)) >= release_of(first):
            return None
        return f"{package} {version} predates {self.name or self.arch} (first built by {package} {first})"


# A release's numbers (3.3.0 of 3.3.0rc1 or 3.6.0+git12ab): the child reads targets too, and an
# environment that brings its own torch lends it no `packaging`.
RELEASE = re.compile(r"\d+(?:\.\d+)*")


def release_of(text: str) -> tuple[int, ...]:
    """3.3 and 3.3.0 alike: trailing zeros dropped."""
    numbers = [int(part) for part in text.split(".")]
    while numbers and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


def pinned_releases(requirements: Iterable[str]) -> dict[str, str]:
    """The release of each package that requirements pin: an exact pin (triton==3.2.0) or a wheel's
    file name (a build of a commit); anything else (a range, a checkout) says nothing."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

    found = {}
    for part in requirements:
        if part.endswith(".whl"):
            with contextlib.suppress(InvalidWheelFilename):
                name, version, _, _ = parse_wheel_filename(Path(part).name)
                found[str(name)] = str(version)
            continue
        try:
            requirement = Requirement(part)
        except InvalidRequirement:
            continue
        pins = [s.version for s in requirement.specifier if s.operator in ("==", "===")]
        if len(pins) == 1 and "*" not in pins[0]:
            found[canonicalize_name(requirement.name)] = pins[0]
    return found


class BackendEntry(Strict):
    targets: list[str]


def head_of(spec: str) -> tuple[str, str] | None:
    """(package, ref) of a head toolchain (`triton@main`), None for a release or a requirement."""
    package, at, ref = spec.partition("@")
    return (
        (package.strip(), ref.strip())
        if at and package.strip() and ref.strip() and "://" not in ref
        else None
    )


class RunnerEntry(Strict):
    labels: list[str]
    backend: Backend
    hosted: bool = False
    targets: list[str] | None = None
    toolchains: list[str] = Field(
        default_factory=list,
        description="what the runner judges, a nightly job each: `triton` (its newest release, pinned when "
        "the night starts), `triton==3.6.0`, or `triton@main` (the head of main of [repositories.triton], "
        "built at a pinned commit); none: the toolchain kregress is installed with",
    )
    torch_index: str | None = Field(
        default=None,
        description="the index torch is installed from on this runner (PyTorch's XPU build has its own); "
        "none: PyPI's",
    )
    shards: int = Field(
        default=1, ge=1, le=64, description="jobs the runner's corpus is split over (--shard)"
    )

    @model_validator(mode="after")
    def _one_requirement(self) -> RunnerEntry:
        for spec in self.toolchains:
            if not spec or any(c.isspace() for c in spec):
                raise ValueError(f"toolchain {spec!r} must be one requirement with no spaces")
        if len(set(self.toolchains)) != len(self.toolchains):
            raise ValueError(f"toolchains {self.toolchains} name one toolchain twice")
        return self


class UncompiledPaths(Strict):
    """Files a build ships as they are: `glob` under `source` in the tree lands under `installed` in
    the wheel. A commit that changes only these (and unpackaged files) is made from a kept build."""

    source: str = Field(description="a folder of the source tree, e.g. python/triton")
    installed: str = Field(description="where it lands in the wheel, e.g. triton")
    glob: str = Field(default="**/*.py", description="which of its files, relative to `source`")


class RepositoryEntry(Strict):
    """A compiler's source repository: a bisect that ends between two of its releases goes on over
    the commits between their tags, each built by `build_cmd`; a runner's `PACKAGE@REF` toolchain is
    its head of REF."""

    url: str
    tag_pattern: str = Field(default="v{version}", description="a release's tag, {version} replaced")
    build_cmd: str | None = Field(
        default=None, description="builds a commit: {src} its source tree, {out} where wheels go"
    )
    build_env: dict[str, str] = Field(
        default_factory=dict,
        description="variables of every build; {shared} is a folder kept across builds (the compiler's "
        "compile cache, downloaded dependencies)",
    )
    uncompiled: list[UncompiledPaths] = Field(
        default_factory=list,
        description="files shipped uncompiled: a commit changing only them is not rebuilt",
    )
    unpackaged: list[str] = Field(
        default_factory=list, description="globs of files no build reads (docs, tests, CI)"
    )
    pins: list[str] = Field(
        default_factory=list,
        description="files that pin a dependency (cmake/llvm-hash.txt): a culprit that moves one is said to",
    )

    @model_validator(mode="after")
    def _pattern_has_version(self) -> RepositoryEntry:
        if "{version}" not in self.tag_pattern:
            raise ValueError(f"tag_pattern {self.tag_pattern!r} must contain {{version}}")
        return self


class Matrix(Strict):
    targets: dict[str, Target]
    backends: dict[Backend, BackendEntry]
    runners: dict[str, RunnerEntry] = Field(default_factory=dict)
    repositories: dict[str, RepositoryEntry] = Field(
        default_factory=dict, description="by package name (triton, triton-xpu, tilelang)"
    )

    @model_validator(mode="after")
    def _names_resolve(self) -> Matrix:
        known = set(self.targets)
        for name, target in self.targets.items():
            prefix = name.split(":", 1)[0]
            if prefix != target.backend:
                raise ValueError(f"target {name!r} must start with its backend {target.backend!r}")
        used = [(f"backends.{b}", t) for b, e in self.backends.items() for t in e.targets]
        used += [(f"runners.{r}", t) for r, e in self.runners.items() for t in e.targets or []]
        for where, target in used:
            if target not in known:
                raise ValueError(f"{where}: unknown target {target!r}; known: {', '.join(sorted(known))}")
        for name, runner in self.runners.items():
            for package, _ in filter(None, map(head_of, runner.toolchains)):
                if package not in self.repositories:
                    raise ValueError(
                        f"runners.{name}: {package}@... is the head of a repository the matrix does not "
                        f"name: add [repositories.{package}] with its url and build_cmd"
                    )
        return self

    @cached_property
    def named(self) -> dict[str, Target]:
        return {name: t.model_copy(update={"name": name}) for name, t in self.targets.items()}

    def target(self, name: str) -> Target:
        return self.named[name]

    def targets_for(self, backend: Backend) -> list[Target]:
        entry = self.backends.get(backend)
        return [self.named[n] for n in entry.targets] if entry else []

    def compile_target(self, name: str) -> Target:
        """The compile target `name` (ValueError naming the compile targets when it is none)."""
        if name not in self.named or self.named[name].kind != "compile":
            compiles = ", ".join(n for n, t in sorted(self.named.items()) if t.kind == "compile")
            raise ValueError(f"{name!r} is not a compile target of the matrix: {compiles}")
        return self.named[name]

    def as_device(self, target: Target, arch: str | None) -> Target:
        """A device target as the GPU it runs on: the arch and limits of the compile target of that
        arch (an sm_100 device takes cuda:sm_100's), so `{arch}` and resource limits resolve there.
        Unchanged where the arch is unknown or no compile target builds it."""
        found = self.compile_target_for(target.backend, arch) if target.kind == "device" else None
        if found is None:
            return target
        return target.model_copy(
            update={
                "arch": found.arch,
                "warp_size": found.warp_size,
                "limits": {**found.limits, **target.limits},
            }
        )

    def compile_target_for(self, backend: str, arch: str | None) -> Target | None:
        """The compile target that builds for `backend`'s `arch` (a device's own), if there is one."""
        found = (
            t
            for _, t in sorted(self.named.items())
            if (t.kind, t.backend, t.arch) == ("compile", backend, arch)
        )
        return next(found, None)


def nightly_jobs(matrix: Matrix) -> list[dict[str, Any]]:
    """One nightly job per runner and toolchain (and shard), shaped for a workflow's
    `strategy.matrix.include`. A head toolchain's job carries `head` (package@ref) instead of a
    --toolchain: the workflow builds the head first and judges the build."""
    jobs = []
    for name, runner in matrix.runners.items():
        targets = runner.targets or [t.name for t in matrix.targets_for(runner.backend)]
        # The backend always travels: a device target judged without it would run on the cpu
        # backend (no worker per device, no pinning, no device in the results).
        args = ["--backend", runner.backend]
        if runner.targets is not None:
            args += [part for target in targets for part in ("--target", target)]
        for toolchain in runner.toolchains or [None]:
            head = head_of(toolchain) if toolchain else None
            judged = args + (["--toolchain", toolchain] if toolchain and not head else [])
            slug = toolchain_slug(toolchain) if len(runner.toolchains) > 1 and toolchain else ""
            for shard in range(1, runner.shards + 1):
                split = ["--shard", f"{shard}/{runner.shards}"] if runner.shards > 1 else []
                job = "-".join(filter(None, [name, slug]))
                jobs.append(
                    {
                        "runner": name,
                        "job": f"{job}-{shard}of{runner.shards}" if runner.shards > 1 else job,
                        "labels": runner.labels,
                        "backend": runner.backend,
                        "hosted": runner.hosted,
                        "targets": targets,
                        "toolchain": toolchain or "",
                        "head": toolchain if head else "",
                        "torch-index": runner.torch_index or "",
                        "pytest-args": " ".join(judged + split),
                    }
                )
    return jobs


def toolchain_slug(toolchain: str) -> str:
    """A toolchain in a job's name (an artifact's name too): `triton@main` → `triton-at-main`."""
    return re.sub(r"[^A-Za-z0-9._]+", "-", toolchain.replace("@", "-at-")).strip("-")


def runner_for(matrix: Matrix, target: str) -> str:
    """The runner to judge `target` on: a hosted one when it carries the target (compile-only
    targets cost no GPU time), otherwise the first self-hosted one that does."""
    if target not in matrix.targets:
        raise ValueError(f"unknown target {target!r}; known: {', '.join(sorted(matrix.targets))}")
    carriers = [job for job in nightly_jobs(matrix) if target in job["targets"]]
    if not carriers:
        raise ValueError(f"no runner in the matrix carries {target!r}")
    return min(carriers, key=lambda job: not job["hosted"])["runner"]


DEFAULT_MATRIX = Path(str(resources.files("kregress") / "matrix.toml"))


def load_matrix(path: Path | None = None) -> Matrix:
    path = path or DEFAULT_MATRIX
    return parse(Matrix, path, read_toml(path))


__all__ = [
    "DEFAULT_MATRIX", "Matrix", "RepositoryEntry", "SchemaError", "Target", "UncompiledPaths",
    "head_of", "load_matrix", "nightly_jobs", "pinned_releases", "runner_for",
]  # fmt: skip
