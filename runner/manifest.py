"""corpus/<case>/case.toml: what a case asserts, where it came from, and where it is known bad.

The folder name is the case's identity. Validation happens at collection, so a bad manifest is
one collection error naming the file and the field, before any compiler runs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from pydantic import Field, field_validator, model_validator

from kregress.schema import SchemaError, Strict, parse, read_toml

Framework = Literal["triton", "tilelang", "nvfuser"]
CASE_ID = re.compile(r"^[a-z0-9][a-z0-9_]*$")
ResourceMetric = Literal[
    "shared_bytes", "registers", "spill_bytes", "stack_bytes", "scratch_bytes", "scratch_bytes_per_block"
]
IrStage = Literal["ttir", "ttgir", "llir", "ptx", "amdgcn", "spv", "cuda_source"]


class Upstream(Strict):
    repo: str
    issue: str
    fix: str | None = None

    @field_validator("repo")
    @classmethod
    def _owner_slash_name(cls, value: str) -> str:
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", value):
            raise ValueError(f"must be 'owner/name', got {value!r}")
        return value

    @field_validator("issue", "fix")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("https://", "http://")):
            raise ValueError(f"must be a URL, got {value!r}")
        return value


class ExpectationBase(Strict):
    name: str = ""
    targets: list[str] | None = Field(
        default=None, description="target names (cuda:sm_90) or backends (cuda) it applies to"
    )

    @property
    def subject(self) -> str:
        raise NotImplementedError

    def default_name(self) -> str:
        return f"{self.kind}-{self.subject}"  # type: ignore[attr-defined]

    def applies_to(self, target: str) -> bool:
        if self.targets is None:
            return True
        return any(target == t or target.split(":", 1)[0] == t for t in self.targets)


class Compiles(ExpectationBase):
    """Every config of the kernel compiles: no OutOfResources, no compiler error."""

    kind: Literal["compiles"]
    kernel: str

    @property
    def subject(self) -> str:
        return self.kernel


class Resource(ExpectationBase):
    """A resource figure of every config stays at or under a limit (the target's, by default)."""

    kind: Literal["resource"]
    kernel: str
    metric: ResourceMetric
    max: int | None = Field(default=None, ge=0)

    @property
    def subject(self) -> str:
        return f"{self.metric}-{self.kernel}"


class Ir(ExpectationBase):
    """Count the lines of an IR stage that match a regular expression."""

    kind: Literal["ir"]
    kernel: str
    stage: IrStage
    pattern: str
    max_count: int | None = Field(default=None, ge=0)
    min_count: int | None = Field(default=None, ge=0)

    @property
    def subject(self) -> str:
        return f"{self.stage}-{self.kernel}"

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        return value

    @model_validator(mode="after")
    def _bounded(self) -> Ir:
        if self.max_count is None and self.min_count is None:
            raise ValueError("an ir expectation needs max_count or min_count")
        return self


class Numerics(ExpectationBase):
    """A check function's result matches its float64 reference within rtol/atol."""

    kind: Literal["numerics"]
    check: str
    rtol: float = Field(ge=0)
    atol: float = Field(ge=0)

    @property
    def subject(self) -> str:
        return self.check


class Perf(ExpectationBase):
    """Throughput of `subject` ÷ throughput of `baseline`, timed in the same run, ≥ min_ratio."""

    kind: Literal["perf"]
    subject_bench: str = Field(alias="subject")
    baseline: str
    min_ratio: float = Field(gt=0)

    @property
    def subject(self) -> str:
        return f"{self.subject_bench}-vs-{self.baseline}"


class Artifact(ExpectationBase):
    """A property of the compiled artifact (binary kind, arch, build flags, registers).

    `where` limits the check to configs whose options match (`{ grf_mode = "large" }`). In
    equals/contains/not_contains, `{arch}` stands for the target's arch and `{name}` for another
    artifact property of the same config, so one measured value can be held against another.
    """

    kind: Literal["artifact"]
    kernel: str
    property: str
    where: dict[str, str | int | bool | float] | None = None
    equals: str | int | bool | None = None
    contains: str | None = None
    not_contains: str | None = None

    @property
    def subject(self) -> str:
        scope = "".join(f"-{k}-{v}" for k, v in (self.where or {}).items())
        return f"{self.property}-{self.kernel}{scope}"

    @model_validator(mode="after")
    def _one_check(self) -> Artifact:
        if self.equals is None and self.contains is None and self.not_contains is None:
            raise ValueError("an artifact expectation needs equals, contains or not_contains")
        return self


Expectation = Annotated[Compiles | Resource | Ir | Numerics | Perf | Artifact, Field(discriminator="kind")]
KINDS = ("compiles", "resource", "ir", "numerics", "perf", "artifact")


class KnownBad(Strict):
    """Where a case is known to fail: outcomes there become XFAIL, and a pass becomes XPASS."""

    link: str
    reason: str = ""
    expect: list[str] | None = None
    targets: list[str] | None = None
    versions: str | None = None

    @field_validator("versions")
    @classmethod
    def _specifier(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                SpecifierSet(value)
            except InvalidSpecifier:
                raise ValueError(
                    f"not a version specifier such as '<3.4' or '>=3.2,<3.4': {value!r}"
                ) from None
        return value

    def matches(self, expectation: str, target: str, version: str | None) -> bool:
        if self.expect is not None and expectation not in self.expect:
            return False
        if self.targets is not None and not any(
            target == t or target.split(":", 1)[0] == t for t in self.targets
        ):
            return False
        if self.versions is not None:
            return version is not None and SpecifierSet(self.versions).contains(version, prereleases=True)
        return True


class Manifest(Strict):
    title: str
    framework: Framework
    upstream: Upstream
    timeout: int | None = Field(default=None, gt=0, description="seconds per child process")
    expect: list[Expectation] = Field(min_length=1)
    known_bad: list[KnownBad] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_names(self) -> Manifest:
        seen: dict[str, int] = {}
        for index, expectation in enumerate(self.expect):
            name = expectation.name or expectation.default_name()
            if name in seen:
                raise ValueError(
                    f"expect[{index}] and expect[{seen[name]}] share the name {name!r}; give one a name"
                )
            seen[name] = index
        for index, entry in enumerate(self.known_bad):
            for name in entry.expect or []:
                if name not in seen:
                    raise ValueError(
                        f"known_bad[{index}].expect names {name!r}, not an expectation of this case "
                        f"(names: {', '.join(seen)})"
                    )
        return self


class Case:
    """A validated case folder: its manifest plus where its repro lives."""

    def __init__(self, folder: Path, manifest: Manifest) -> None:
        self.folder = folder
        self.id = folder.name
        self.manifest = manifest
        self.repro = folder / "repro.py"

    def expectations(self) -> list[tuple[str, Expectation]]:
        return [(e.name or e.default_name(), e) for e in self.manifest.expect]

    def known_bad_for(self, expectation: str, target: str, version: str | None) -> KnownBad | None:
        return next((k for k in self.manifest.known_bad if k.matches(expectation, target, version)), None)


def load_case(manifest_path: Path, known_targets: set[str] | None = None) -> Case:
    folder = manifest_path.parent
    if not CASE_ID.match(folder.name):
        raise SchemaError(manifest_path, [f"case folder name {folder.name!r} must match {CASE_ID.pattern}"])
    manifest = parse(Manifest, manifest_path, read_toml(manifest_path), union_tags=KINDS)
    problems: list[str] = []
    if not (folder / "repro.py").is_file():
        problems.append("repro.py is missing next to case.toml")
    if known_targets is not None:
        backends = {t.split(":", 1)[0] for t in known_targets}
        allowed = sorted(known_targets | backends)
        places = [(f"expect[{i}].targets", e.targets) for i, e in enumerate(manifest.expect)]
        places += [(f"known_bad[{i}].targets", k.targets) for i, k in enumerate(manifest.known_bad)]
        for where, names in places:
            for name in names or []:
                if name not in known_targets and name not in backends:
                    problems.append(
                        f"{where}: unknown target or backend {name!r}; allowed: {', '.join(allowed)}"
                    )
    if problems:
        raise SchemaError(manifest_path, problems)
    return Case(folder, manifest)
