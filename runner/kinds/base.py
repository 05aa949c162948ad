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

from kregress.child_results import ConfigResult
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

    job_kind: ClassVar[str]  # the measurement: compile, numerics, perf, or the kind's own
    device_alone: ClassVar[bool] = False  # its job holds its device alone (timing)
    not_reducible: ClassVar[str] = ""  # why `kregress reduce` cannot shrink a failure of this kind

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

    @classmethod
    def measurer(cls) -> type[ExpectationBase]:
        """The class whose `measure` runs this kind's job: the nearest that defines one."""
        return next(k for k in cls.__mro__ if "measure" in vars(k))  # type: ignore[return-value]

    def make_job(self, attr: str, **fields: Any) -> Job:
        """This kind's job: its measurement, run by its measurer, holding the device as it needs.
        Fields Job lacks (a kind's own) travel in `extra` to `measure`."""
        known = {f for f in Job.__dataclass_fields__} - {"kind", "attr", "measure", "exclusive", "extra"}
        own = tuple(sorted((k, v) for k, v in fields.items() if k not in known))
        owner = self.measurer()
        return Job(
            self.job_kind,
            attr=attr,
            measure=f"{owner.__module__}:{owner.__qualname__}",
            exclusive=self.device_alone,
            extra=own,
            **{k: v for k, v in fields.items() if k in known},
        )

    @staticmethod
    def measure(job: dict[str, Any], out_dir: Path) -> dict[str, Any]:
        """In the child process: do the job (`job` is Job.spec()), write any files into `out_dir`,
        and return what was measured as JSON. Raise Unsupported for a SKIP, CaseError for a broken
        repro; anything else the compiler or kernel raises is classified by the child."""
        raise NotImplementedError

    def judge(self, target: Target, outcome: JobOutcome, folder: Path) -> Verdict:
        """The verdict from a job that ended well (`outcome.status` is OK)."""
        raise NotImplementedError

    def retrace(
        self, getoption: Callable[[str], Any], job: Job, outcome: JobOutcome, verdict: Verdict
    ) -> Job | None:
        """After judging: a job to run once more and judge again (a kind a compiler pass can change
        asks for its compile with the pass dumps), or None. It may add to `verdict` instead."""
        return None

    @staticmethod
    def figure(measured: dict[str, Any], limit: Any) -> str:
        """The measured value next to its limit, in a few words, for the page."""
        return ""


class CompiledExpectation(ExpectationBase):
    """A kind judged from a compile of `kernel` for the target, every config at once."""

    job_kind: ClassVar[str] = "compile"

    kernel: str

    def job(self, getoption: Callable[[str], Any], **common: Any) -> Job:
        return self.make_job(self.kernel, **common)

    @staticmethod
    def measure(job: dict[str, Any], out_dir: Path) -> dict[str, Any]:
        """Compile the kernel for the target with the framework's adapter, every config at once."""
        from kregress.worker import adapter_for, attribute, load_repro

        adapter = adapter_for(job["framework"])
        with adapter.compile_session(job["target"]) as target:
            kernel = attribute(load_repro(Path(job["repro"]), job["framework"]), job["attr"], "kernel")
            configs = adapter.compile_kernel(
                kernel, target, out_dir, trace_passes=bool(job.get("trace_passes"))
            )
        return {"configs": [c.as_json() for c in configs]}

    def judge(self, target: Target, outcome: JobOutcome, folder: Path) -> Verdict:
        return self.judge_configs(target, outcome.configs, folder)

    def judge_configs(self, target: Target, configs: list[ConfigResult], folder: Path) -> Verdict:
        raise NotImplementedError
