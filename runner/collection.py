"""Collecting the corpus: each case.toml becomes one item per (expectation, target) that applies,
planned by the expectation's kind, the case's targets and its framework; --target and --shard
choose what a run judges."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import pytest

from kregress.case_item import CaseItem
from kregress.errors import KregressError
from kregress.frameworks import FRAMEWORKS
from kregress.kinds import Expectation, Plan
from kregress.manifest import Case, load_case
from kregress.matrix import Matrix, SchemaError, Target
from kregress.run_state import judged_release, state


def selected_targets(matrix: Matrix, backend: str, requested: list[str]) -> list[Target]:
    if not requested:
        return matrix.targets_for(backend)  # type: ignore[arg-type]
    chosen = []
    for name in requested:
        if name not in matrix.targets:
            valid = ", ".join(sorted(matrix.targets))
            raise pytest.UsageError(f"--target {name!r} is not in the matrix file; valid targets: {valid}")
        target = matrix.target(name)
        if target.runs_kernels and target.backend != backend:
            raise pytest.UsageError(
                f"--target {name} runs kernels on {target.backend}, but --backend is {backend}; "
                f"use --backend {target.backend} or a compile-only target"
            )
        chosen.append(target)
    return chosen


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    found = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not found or not 1 <= int(found.group(1)) <= int(found.group(2)):
        raise pytest.UsageError(f"--shard {text!r}: give I/N with 1 <= I <= N, e.g. --shard 2/4")
    return int(found.group(1)), int(found.group(2))


def shard_of(case_id: str, count: int) -> int:
    """The 1-based shard a case belongs to: by a hash of its name, so a case added or removed moves
    no other case, and every machine splits alike."""
    return int(hashlib.sha256(case_id.encode()).hexdigest()[:8], 16) % count + 1


def compile_first_target(matrix: Matrix, name: str | None) -> Target | None:
    if name is None:
        return None
    try:
        return matrix.compile_target(name)
    except ValueError as exc:
        raise pytest.UsageError(f"--compile-first {exc}") from None


class ManifestError(KregressError):
    """A case.toml that cannot be used: shown as a one-paragraph collection error."""


class CaseFile(pytest.File):
    def collect(self) -> list[pytest.Item]:
        matrix = state(self.config).matrix
        try:
            case = load_case(self.path, set(matrix.targets))
        except SchemaError as exc:
            raise ManifestError(str(exc)) from None
        items, not_applicable = [], {}
        package = FRAMEWORKS[case.manifest.framework].released_as
        too_old = {
            target.name: target.predates(package, release)
            for target in state(self.config).targets
            if package in target.since and (release := judged_release(self.config, target, package))
        }
        for name, expectation in case.expectations():
            for target in state(self.config).targets:
                planned = plan(case, expectation, target, too_old.get(target.name))
                if planned.not_applicable:
                    not_applicable[f"{case.id}::{name}[{target.name}]"] = planned.not_applicable
                if not planned.collect:
                    continue
                item = CaseItem.from_parent(
                    self,
                    name=f"{name}[{target.name}]",
                    case=case,
                    expectation=expectation,
                    expectation_name=name,
                    target=target,
                )
                if planned.skip:
                    item.planned_skip = planned.skip
                    item.add_marker(pytest.mark.skip(reason=planned.skip))
                items.append(item)
        state(self.config).not_applicable.update(not_applicable)
        return items

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ManifestError):
            return f"invalid case manifest: {excinfo.value}"
        return super().repr_failure(excinfo)


def plan(case: Case, expectation: Expectation, target: Target, too_old: str | None = None) -> Plan:
    """Pure: the expectation's kind decides first, then the case's targets, then whether the release
    judging can target it at all (`too_old`, why not), then the framework."""
    framework = case.manifest.framework
    own = expectation.plan(target, framework)
    if own is not None:
        return own
    if not expectation.applies_to(target.name):
        return Plan(False, not_applicable="the case limits the expectation to other targets")
    if too_old:
        return Plan(False, not_applicable=too_old)
    declared = FRAMEWORKS[framework]
    why_not = declared.not_applicable(target.kind)
    if why_not:
        return Plan(False, not_applicable=why_not)
    return Plan(True, declared.cannot_build(target.kind, target.backend, target.name))
