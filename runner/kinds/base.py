"""What every expectation kind declares, in one class: its manifest schema (the pydantic fields),
the job it needs, the targets it applies to, how it is judged, and how the page shows its figure.

The plugin, the judge, the page and `kregress check` ask the kind; none of them lists kinds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from kregress.frameworks import FRAMEWORKS
from kregress.jobs import Job, JobOutcome
from kregress.judge import Verdict
from kregress.matrix import Target
from kregress.schema import Strict


@dataclass(frozen=True)
class Plan:
    """What to do with one (expectation, target) pair. An item that cannot apply there (the case
    limits it to other targets, the framework has no such target) is not collected but counted, so
    every SKIP left is one a person should read: what cannot run here, and why."""

    collect: bool
    skip: str | None = None  # collected, and SKIPs with this reason
    not_applicable: str | None = None  # not collected, for this reason


class ExpectationBase(Strict):
    """One expectation of a case. A kind subclasses this (or CompiledExpectation) with a
    `kind: Literal[...]` field and overrides what differs."""

    job_kind: ClassVar[str]  # compile | numerics | perf: what the child process does

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

    def plan(self, target: Target, framework: str) -> Plan | None:
        """The kind's own rule for a target: a Plan that decides, or None for the common rules.
        By default a compile job runs where the framework compiles (compile targets; a device for a
        framework that compiles only at run time), any other job on the other targets."""
        if self.job_kind == "compile":  # a compile target the framework lacks: its own reason says why
            compiles_here = target.kind in (FRAMEWORKS[framework].compiles_on, "compile")
            return None if compiles_here else Plan(False)
        return Plan(False) if target.kind == "compile" else None

    def job(self, getoption: Callable[[str], Any], **common: Any) -> Job:
        raise NotImplementedError

    def judge(self, target: Target, outcome: JobOutcome, folder: Path) -> Verdict:
        """The verdict from a job that ended well (`outcome.status == "ok"`)."""
        raise NotImplementedError

    @staticmethod
    def figure(measured: dict[str, Any], limit: Any) -> str:
        """The measured value next to its limit, in a few words, for the page."""
        return ""


class CompiledExpectation(ExpectationBase):
    """A kind judged from a compile of `kernel` for the target, every config at once."""

    job_kind: ClassVar[str] = "compile"

    kernel: str

    def job(self, getoption: Callable[[str], Any], **common: Any) -> Job:
        return Job("compile", attr=self.kernel, **common)

    def judge(self, target: Target, outcome: JobOutcome, folder: Path) -> Verdict:
        return self.judge_configs(target, outcome.result["configs"], folder)

    def judge_configs(self, target: Target, configs: list[dict[str, Any]], folder: Path) -> Verdict:
        raise NotImplementedError
