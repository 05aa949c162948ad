"""The hardware matrix (runner/matrix.toml): targets, their limits, backends and CI runners."""

from __future__ import annotations

from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

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
    name: str = ""

    @property
    def runs_kernels(self) -> bool:
        return self.kind != "compile"


class BackendEntry(Strict):
    targets: list[str]


class RunnerEntry(Strict):
    labels: list[str]
    backend: Backend
    hosted: bool = False
    targets: list[str] | None = None
    toolchain: str | None = Field(
        default=None,
        description="judge under this toolchain (--toolchain); an unpinned one means its newest release",
    )
    shards: int = Field(
        default=1, ge=1, le=64, description="jobs the runner's corpus is split over (--shard)"
    )

    @model_validator(mode="after")
    def _one_requirement(self) -> RunnerEntry:
        if self.toolchain is not None and (not self.toolchain or any(c.isspace() for c in self.toolchain)):
            raise ValueError(f"toolchain {self.toolchain!r} must be one requirement with no spaces")
        return self


class RepositoryEntry(Strict):
    """A compiler's source repository: a bisect that ends between two of its releases goes on over
    the commits between their tags, each built by `build_cmd`."""

    url: str
    tag_pattern: str = Field(default="v{version}", description="a release's tag, {version} replaced")
    build_cmd: str | None = Field(
        default=None, description="builds a commit: {src} its source tree, {out} where wheels go"
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

    def compile_target_for(self, backend: str, arch: str | None) -> Target | None:
        """The compile target that builds for `backend`'s `arch` (a device's own), if there is one."""
        found = (
            t
            for _, t in sorted(self.named.items())
            if (t.kind, t.backend, t.arch) == ("compile", backend, arch)
        )
        return next(found, None)


def nightly_jobs(matrix: Matrix) -> list[dict[str, Any]]:
    """One nightly job per runner, shaped for a workflow's `strategy.matrix.include`."""
    jobs = []
    for name, runner in matrix.runners.items():
        targets = runner.targets or [t.name for t in matrix.targets_for(runner.backend)]
        # The backend always travels: a device target judged without it would run on the cpu
        # backend (no worker per device, no pinning, no device in the results).
        args = ["--backend", runner.backend]
        if runner.targets is not None:
            args += [part for target in targets for part in ("--target", target)]
        if runner.toolchain:
            args += ["--toolchain", runner.toolchain]
        for shard in range(1, runner.shards + 1):
            split = ["--shard", f"{shard}/{runner.shards}"] if runner.shards > 1 else []
            jobs.append(
                {
                    "runner": name,
                    "job": f"{name}-{shard}of{runner.shards}" if runner.shards > 1 else name,
                    "labels": runner.labels,
                    "backend": runner.backend,
                    "hosted": runner.hosted,
                    "targets": targets,
                    "pytest-args": " ".join(args + split),
                }
            )
    return jobs


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
    "DEFAULT_MATRIX", "Matrix", "RepositoryEntry", "SchemaError", "Target",
    "load_matrix", "nightly_jobs", "runner_for",
]  # fmt: skip
