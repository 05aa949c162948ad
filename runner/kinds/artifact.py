"""artifact: a property of the compiled artifact (binary kind, arch, build flags, registers)."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any, Literal

from pydantic import model_validator

from kregress.child_results import ConfigResult
from kregress.frameworks import FRAMEWORKS
from kregress.judge import Outcome, Verdict, compile_failures
from kregress.kinds.base import CompiledExpectation, Plan
from kregress.matrix import Target


class Artifact(CompiledExpectation):
    """A property of the compiled artifact (binary kind, arch, build flags, registers).

    `where` limits the check to configs whose options match (`{ grf_mode = "large" }`). In
    equals/contains/not_contains, `{arch}` stands for the target's arch and `{name}` for another
    artifact property of the same config, so one measured value can be held against another.
    """

    kind: Literal["artifact"]
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

    def plan(self, target: Target, framework: str) -> Plan | None:
        """Compile targets, and device targets where Triton's loaded binary can be read."""
        if target.kind == "interpreter":
            return Plan(False)
        declared = FRAMEWORKS[framework]
        if target.kind == "device" and not declared.loaded_binaries and self.applies_to(target.name):
            return Plan(
                True,
                f"artifacts on device targets are read from loaded binaries, which kregress "
                f"cannot get from {declared.label}",
            )
        return None

    def judge_configs(self, target: Target, configs: list[ConfigResult], folder: Path) -> Verdict:
        if self.where:
            configs = [c for c in configs if all(c.options.get(k) == v for k, v in self.where.items())]
            if not configs:
                wanted = ", ".join(f"{k}={v}" for k, v in self.where.items())
                return Verdict.skip(f"no config of {self.kernel} on {target.name} has {wanted}")
        failed = compile_failures(configs)
        if failed:
            return failed
        values = {c.label: c.artifacts.get(self.property) for c in configs}
        missing = [c for c in configs if c.artifacts.get(self.property) is None]
        if missing:
            reasons = {c.unavailable.get(self.property) for c in missing} - {None}
            if reasons:
                return Verdict.skip(f"{target.name}: " + "; ".join(sorted(reasons)))
            known = sorted({k for c in configs for k, v in c.artifacts.items() if v is not None})
            return Verdict.skip(
                f"{target.name} does not report {self.property!r} with this toolchain "
                f"(it reports: {', '.join(known)})"
            )
        checks = [("equals", self.equals), ("contains", self.contains), ("not_contains", self.not_contains)]
        problems, limits = [], {}
        for config in configs:
            label, value = config.label, config.artifacts[self.property]
            text = " ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
            for check, wanted in checks:
                if wanted is None:
                    continue
                resolved, unknown = resolve_template(wanted, target, config.artifacts)
                if unknown:
                    return Verdict.error(
                        f"expectation {check} = {wanted!r} names {unknown}, which is neither {{arch}} nor an "
                        f"artifact property of {label} (it has: {', '.join(sorted(config.artifacts))})"
                    )
                limits.setdefault(check, {})[label] = resolved
                shown = f"{resolved!r}" + (f" (= {wanted})" if resolved != wanted else "")
                if check == "equals" and value != resolved and text != str(resolved):
                    problems.append(f"[{label}] {self.property} is {value!r}, expected {shown}")
                if check == "contains" and str(resolved) not in text:
                    problems.append(f"[{label}] {self.property} {text!r} does not contain {shown}")
                if check == "not_contains" and str(resolved) in text:
                    problems.append(f"[{label}] {self.property} {text!r} contains {shown}")
        limit = {check: next(iter(v.values())) if len(set(map(str, v.values()))) == 1 else v
                 for check, v in limits.items()}  # fmt: skip
        if problems:
            return Verdict(
                Outcome.FAIL,
                "ARTIFACT_MISMATCH: " + "; ".join(problems),
                "ARTIFACT_MISMATCH",
                measured={self.property: values},
                limit=limit,
            )
        return Verdict(
            Outcome.PASS,
            f"{self.property}: " + ", ".join(f"[{k}] {v}" for k, v in values.items()),
            measured={self.property: values},
            limit=limit,
        )

    @staticmethod
    def figure(measured: dict[str, Any], limit: Any) -> str:
        prop, values = next(iter(measured.items()))
        shown = sorted({str(v) for v in values.values()})
        return f"{prop} = {', '.join(shown)[:60]}"


def resolve_template(wanted: Any, target: Target, artifacts: dict[str, Any]) -> tuple[Any, str | None]:
    """Fill `{arch}` and `{property}` placeholders; the name of an unknown one comes back instead."""
    if not isinstance(wanted, str) or "{" not in wanted:
        return wanted, None
    arch = target.arch or artifacts.get("device_arch")  # a device target: the device's own arch
    fields = {**{k: v for k, v in artifacts.items() if v is not None}, "arch": arch}
    names = [name for _, name, _, _ in string.Formatter().parse(wanted) if name is not None]
    unknown = next((f"{{{n}}}" for n in names if n not in fields), None)
    if unknown:
        return wanted, unknown
    if len(names) == 1 and wanted == f"{{{names[0]}}}":
        return fields[names[0]], None
    return wanted.format_map(fields), None
