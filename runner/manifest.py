"""corpus/<case>/case.toml: what a case asserts, where it came from, and where it is known bad.

The folder name is the case's identity. Validation happens at collection, so a bad manifest is
one collection error naming the file and the field, before any compiler runs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from pydantic import Field, field_validator, model_validator

from kregress.frameworks import FRAMEWORKS
from kregress.kinds import KINDS, Expectation
from kregress.matrix import Matrix
from kregress.schema import SchemaError, Strict, parse, read_toml

Framework = Literal[tuple(FRAMEWORKS)]  # type: ignore[valid-type]  # declared in frameworks.py
CASE_ID = re.compile(r"^[a-z0-9][a-z0-9_]*$")


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


def version_specifier(value: str, example: str) -> str:
    """`value` if it is a PEP 440 specifier, else the error a manifest's reader gets."""
    try:
        SpecifierSet(value)
    except InvalidSpecifier:
        raise ValueError(f"not a version specifier such as {example}: {value!r}") from None
    return value


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
        return value if value is None else version_specifier(value, "'<3.4' or '>=3.2,<3.4'")

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


class WrittenFor(Strict):
    """The releases the case's kernel can be written for: a compiler that dropped an API the kernel
    needs cannot say anything about the case's bug, so there every item SKIPs with `reason` instead
    of failing as if the compiler had regressed."""

    versions: str
    reason: str = Field(min_length=1, description="what the kernel needs that other releases lack")

    @field_validator("versions")
    @classmethod
    def _specifier(cls, value: str) -> str:
        return version_specifier(value, "'<3.9.0'")

    def admits(self, version: str) -> bool:
        return SpecifierSet(self.versions).contains(version, prereleases=True)


class Control(Strict):
    """A kernel (or check) of repro.py written the way the buggy compiler left it: judged in place
    of the named expectations' own, each of them must FAIL, while the case's own PASS."""

    expect: list[str] = Field(min_length=1)
    kernel: str | None = Field(default=None, description="stands in for the expectations' kernel")
    check: str | None = Field(default=None, description="stands in for a numerics expectation's check")

    @model_validator(mode="after")
    def _one_stand_in(self) -> Control:
        if (self.kernel is None) == (self.check is None):
            raise ValueError(
                "a control names exactly one of kernel (compile expectations) or check (numerics)"
            )
        return self


REPRODUCE_LEVELS = ("reproduced", "control", "guard")


class Reproduce(Strict):
    """How the case is shown to catch its bug, at the strongest level reachable:

    reproduced — real compiler releases: under each of `bad` the `must_fail` expectations FAIL on
        `targets`, under each of `good` the case holds there;
    control — kernels written as the buggy compiler left them (`[[reproduce.control]]`);
    guard — no compiler with the bug can run anywhere reachable, and why.
    """

    targets: list[str] = Field(default_factory=list, description="where the bug shows")
    bad: list[str] = Field(default_factory=list, description="toolchains that have the bug")
    good: list[str] = Field(default_factory=list, description="toolchains that do not")
    no_good: str | None = Field(default=None, description="why no good toolchain can be named")
    must_fail: list[str] | None = Field(default=None, description="default: what known_bad entries name")
    fails_with: str | None = Field(
        default=None,
        description="a pattern every bad end's failure must match, as `FAILURE_KIND: message`, then the "
        "compiler's printed diagnostics on the lines after it (an issue's quoted error; ^WRONG_RESULT for a "
        "stated wrong value): a FAIL of another kind is not the bug",
    )
    control: list[Control] = Field(default_factory=list)
    guard: str | None = None

    @property
    def levels(self) -> list[str]:
        return [
            name
            for name, on in zip(REPRODUCE_LEVELS, (self.bad, self.control, self.guard), strict=True)
            if on
        ]

    @model_validator(mode="after")
    def _some_level(self) -> Reproduce:
        if not self.levels:
            raise ValueError(
                "say how the bug is shown: bad (with good) releases, a control, or a guard reason"
            )
        if (self.bad or self.control) and not self.targets:
            raise ValueError("bad releases and controls need targets: where the bug shows")
        if self.bad and not (self.good or self.no_good):
            raise ValueError(
                "bad releases need good ones to hold against, or no_good saying why there is none"
            )
        return self


class Manifest(Strict):
    title: str
    framework: Framework
    upstream: Upstream
    timeout: int | None = Field(default=None, gt=0, description="seconds per child process")
    expect: list[Expectation] = Field(min_length=1)
    known_bad: list[KnownBad] = Field(default_factory=list)
    written_for: WrittenFor | None = None
    reproduce: Reproduce | None = None

    @model_validator(mode="after")
    def _releases_written_for(self) -> Manifest:
        """A release the case names as bad or good must be one its kernel can be written for."""
        if self.written_for is None or self.reproduce is None:
            return self
        for where in ("bad", "good"):
            for index, spec in enumerate(getattr(self.reproduce, where)):
                package, _, version = (part.strip() for part in spec.partition("=="))
                released_as = FRAMEWORKS[self.framework].released_as
                if package == released_as and version and not self.written_for.admits(version):
                    raise ValueError(
                        f"reproduce.{where}[{index}] is {spec!r}, outside written_for.versions "
                        f"{self.written_for.versions!r}: the kernel cannot be written for it"
                    )
        return self

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
        named = [(f"known_bad[{i}].expect", e.expect or []) for i, e in enumerate(self.known_bad)]
        if self.reproduce:
            named.append(("reproduce.must_fail", self.reproduce.must_fail or []))
            named += [
                (f"reproduce.control[{i}].expect", c.expect) for i, c in enumerate(self.reproduce.control)
            ]
        for where, names in named:
            for name in names:
                if name not in seen:
                    raise ValueError(
                        f"{where} names {name!r}, not an expectation of this case (names: {', '.join(seen)})"
                    )
        return self

    def must_fail(self) -> list[str]:
        """The expectations the bug is about: named in [reproduce], else by the known_bad entries
        of the case's own bug (entries for other bugs, linked elsewhere, do not count)."""
        if self.reproduce and self.reproduce.must_fail is not None:
            return self.reproduce.must_fail
        own = [entry for entry in self.known_bad if entry.link == self.upstream.issue] or self.known_bad
        names = [n for entry in own for n in (entry.expect or [])]
        return list(dict.fromkeys(names)) or [e.name or e.default_name() for e in self.expect]


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
        if manifest.reproduce:
            places.append(("reproduce.targets", manifest.reproduce.targets))
        for where, names in places:
            for name in names or []:
                if name not in known_targets and name not in backends:
                    problems.append(
                        f"{where}: unknown target or backend {name!r}; allowed: {', '.join(allowed)}"
                    )
    if problems:
        raise SchemaError(manifest_path, problems)
    return Case(folder, manifest)


def releases_too_old(reproduce: Reproduce, matrix: Matrix) -> list[str]:
    """A bad or good release that cannot target one of the bug's targets at all shows nothing there."""
    problems = []
    for where in ("bad", "good"):
        for index, spec in enumerate(getattr(reproduce, where)):
            for name in reproduce.targets:
                target = matrix.named.get(name)
                why = target.predates_toolchain(spec) if target else None
                if why:
                    problems.append(
                        f"reproduce.{where}[{index}] is {spec!r}, which cannot show the bug on {name}: "
                        f"{why}; name a later release, or leave the target out of reproduce.targets"
                    )
    return problems


UPSTREAM_BUG = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+$")


def reproduction_problems(case: Case, matrix: Matrix | None = None) -> list[str]:
    """What keeps a case from showing that it catches its bug (checked by `kregress check`, not at
    collection: a case still runs while these are mended)."""
    manifest, problems = case.manifest, []
    if matrix is not None and manifest.reproduce is not None:
        problems += releases_too_old(manifest.reproduce, matrix)
    problems += FRAMEWORKS[manifest.framework].repro_problems(case.repro)
    if not UPSTREAM_BUG.match(manifest.upstream.issue):
        problems.append(
            f"upstream.issue must be the bug's issue or pull request "
            f"(https://github.com/OWNER/REPO/issues/N or /pull/N), not {manifest.upstream.issue!r}"
        )
    reproduce = manifest.reproduce
    if reproduce is None:
        problems.append(
            "no [reproduce] table: say how the case is shown to catch its bug (bad/good, control, guard)"
        )
        return problems
    shows_on = set(reproduce.targets)
    for index, entry in enumerate(manifest.known_bad):
        if entry.link != manifest.upstream.issue or not shows_on:
            continue  # another bug's entry, or a bug shown nowhere in particular
        if entry.targets is None:
            problems.append(
                f"known_bad[{index}] (the case's own bug) has no targets, but the bug shows only on "
                f"{', '.join(reproduce.targets)}: elsewhere a PASS would be reported as XPASS"
            )
        for target in entry.targets or []:
            if target not in shows_on:
                problems.append(
                    f"known_bad[{index}].targets has {target!r}, where the bug cannot show "
                    f"(reproduce.targets: {', '.join(reproduce.targets)})"
                )
    return problems
