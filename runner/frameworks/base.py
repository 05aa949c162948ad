"""What a framework declares, in one class: the modules its repros import, what it can be judged on,
its adapter and the figures it reads per backend, its kernel wrappers, the companions its releases
need, how it is preloaded, its IR stages, the starting case `kregress new` writes, and what it
refuses (a Python or a torch its wheels cannot use).

Stdlib only: the child imports it inside toolchain environments that hold a compiler, not
kregress's own dependencies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

PTXAS_FIGURES = frozenset({"registers", "stack_bytes", "spill_bytes", "scratch_bytes"})
PER_BLOCK = frozenset({"shared_bytes", "scratch_bytes_per_block"})  # from the compiled kernel's launch


@dataclass(frozen=True)
class Companion:
    """What a release needs beside itself to work on this kind of machine, as measured."""

    package: str
    versions: str  # applies to exact pins (==) inside this range; "" for every version
    requirements: tuple[str, ...] = ()  # added unless the toolchain names the package itself
    env: tuple[tuple[str, str], ...] = ()  # set for every child that runs in the environment
    why: str = ""


@dataclass(frozen=True)
class Starter:
    """What a framework's starting case judges, and where its bug is shown by default."""

    target: str  # reproduce.targets when --target is not given
    kernel: str  # the repro's kernel, which the manifest's "compiles" expectation names
    expectations: str  # the [[expect]] tables after that one
    repro: str  # repro.py, a string.Template over $name, $title and $issue
    scope: tuple[str, ...] = ()  # the targets the starting kernel is written for (none: every one)


@dataclass(frozen=True)
class Framework:
    name: str  # as case.toml's `framework` says it, and the key of its version in a result
    label: str  # as people write it
    modules: tuple[str, ...] = ()  # a repro that cannot import one of these cannot run here: SKIP
    imports: tuple[str, ...] = ()  # top-level modules that mark a pasted repro as this framework's
    target_kinds: frozenset[str] = frozenset({"interpreter", "compile", "device"})
    unsupported_kinds: str = ""  # why the other target kinds do not apply
    compiles_on: str = "compile"  # the target kind a compile job (ir, resource, ...) runs on
    compile_backends: frozenset[str] = field(default_factory=frozenset)  # empty: every backend
    adapter: str | None = None  # module that compiles a kernel; None: only at run time
    no_adapter: str = ""  # why there is none
    # backend -> the resource figures the adapter reads there (at best: a figure may still be
    # unavailable on one machine, and the child says why)
    figures: dict[str, frozenset[str]] = field(default_factory=dict)
    loaded_binaries: bool = False  # artifacts can be read from the binary loaded on a device
    ir_stages: tuple[str, ...] = ()  # the stages an `ir` expectation may name
    traced_stages: tuple[str, ...] = ()  # stages the adapter can dump after every pass
    wrappers: tuple[type, ...] = ()  # what a repro binds a kernel with, from kregress.case
    preload: tuple[str, ...] = ()  # a fork server imports these once, before its first job of this framework
    companions: tuple[Companion, ...] = ()
    native_packages: tuple[str, ...] = ()  # packages whose native libraries may need providing
    starter: Starter | None = None
    oldest_release: str = ""  # the oldest release kregress's adapter judges (a search starts there)
    package: str = ""  # the distribution whose releases these are, when not named as the framework
    # package -> its GitHub repository, whose tags v{version} a release-level answer links to
    repositories: dict[str, str] = field(default_factory=dict)

    @property
    def released_as(self) -> str:
        """The package whose version a case's known_bad, written_for and the matrix's `since` name."""
        return self.package or self.name

    def repository_of(self, package: str) -> str | None:
        """The GitHub repository (owner/name) a package of this framework is released from."""
        for name, repository in self.repositories.items():
            if name == package or (name.endswith("*") and package.startswith(name[:-1])):
                return repository
        return None

    def not_applicable(self, kind: str) -> str | None:
        """Why a target of this kind does not apply at all (not collected), or None."""
        return None if kind in self.target_kinds else self.unsupported_kinds

    def cannot_build(self, kind: str, backend: str, target: str) -> str | None:
        """Why a compile target of a backend the adapter does not build SKIPs, or None."""
        if kind == "compile" and self.compile_backends and backend not in self.compile_backends:
            shown = ", ".join(sorted(b.upper() for b in self.compile_backends))
            return f"the {self.label} adapter builds {shown} targets only, not {target}"
        return None

    def cannot_measure(self, figure: str, backend: str) -> str | None:
        """Why this framework's adapter never reads `figure` on `backend` (a SKIP), or None."""
        if figure in self.figures.get(backend, frozenset()):
            return None
        return f"the {self.label} adapter does not read {figure} on {backend} targets"

    def written_in(self, source: str) -> bool:
        """Whether a pasted repro imports this framework."""
        names = "|".join(re.escape(m) for m in self.imports)
        return bool(names) and bool(re.search(rf"^\s*(import|from)\s+({names})\b", source, re.M))

    def repro_problems(self, repro: Path) -> list[str]:
        """What in a repro keeps this framework's releases from judging it the same way."""
        return []

    def why_missing(self, module: str) -> str:
        """More than "module X is missing", where the framework can say what a runner needs."""
        return ""

    def refuses(self, requirements: tuple[str, ...], python: str) -> str | None:
        """Why a toolchain with these requirements cannot work under this Python (major.minor), or
        None; asked before anything is installed."""
        return None
