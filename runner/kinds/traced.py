"""What the kinds that can be traced pass by pass (ir, resource) share: the `trace_passes` field of
the manifest, the compile job that asks for the dumps, and reading the dumps into timelines."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from kregress.child_results import ConfigResult, JobStatus
from kregress.jobs import Job, JobOutcome
from kregress.judge import Outcome, Verdict
from kregress.kinds.base import CompiledExpectation
from kregress.pass_trace import PASS_DUMPS, PassStep, PassTrace, count_lines, crossing, trace

TraceRequest = Literal["always", "on-fail"]


@dataclass(frozen=True)
class Traced:
    """What to follow through the passes: a line pattern or a figure of the IR text, up to the end
    of a stage (None: every MLIR pass), said in `what`; or why nothing can be followed."""

    what: str = ""
    measure: str | Callable[[str], int | None] = ""
    stage: str | None = None
    min_count: int | None = None
    max_count: int | None = None
    unavailable: str = ""
    generated_by: str = ""  # a stage made after the last pass (TileLang's CUDA source): its last step


class PassTraced(CompiledExpectation):
    """A compiled expectation whose figure a pass of the compiler can change."""

    trace_passes: TraceRequest | None = Field(
        default=None,
        description="always: every compile keeps the IR before each pass; on-fail: a FAIL is "
        "compiled once more to show the pass after which it went wrong",
    )

    def trace_asked(self, getoption: Callable[[str], Any]) -> bool:
        return bool(getoption("trace_passes")) or self.trace_passes == "always"

    def job(self, getoption: Callable[[str], Any], **common: Any) -> Job:
        """With --trace-passes (or `trace_passes = "always"`), a compile of its own that keeps the IR
        before every pass (the adapter says when its framework cannot); never for a figure no pass
        shows, which would pay a cold compile and its dumps for nothing."""
        asked = self.trace_asked(getoption) and not self.traced().unavailable
        return self.make_job(self.kernel, trace_passes=asked, **common)

    def say_untraced(self, verdict: Verdict, configs: list[ConfigResult]) -> None:
        """An item asked to be traced whose figure no pass shows: why, in its measured values and
        its detail, instead of a timeline."""
        why = self.traced().unavailable
        verdict.measured["passes"] = {config.label: {"unavailable": why} for config in configs}
        verdict.detail = "\n".join(part for part in (verdict.detail, f"per pass: {why}") if part)

    def retrace(
        self, getoption: Callable[[str], Any], job: Job, outcome: JobOutcome, verdict: Verdict
    ) -> Job | None:
        """Asked to be traced: a figure no pass shows says why in the verdict; a FAIL of an untraced
        compile is compiled once more with the pass dumps."""
        if outcome.status is not JobStatus.OK:
            return None
        failed = verdict.outcome == Outcome.FAIL
        wanted = self.trace_asked(getoption) or (failed and self.retrace_on_fail(getoption))
        if wanted and self.traced().unavailable:
            self.say_untraced(verdict, outcome.configs)
        elif wanted and failed and not job.trace_passes:
            return dataclasses.replace(job, trace_passes=True)
        return None

    def retrace_on_fail(self, getoption: Callable[[str], Any]) -> bool:
        """Whether a FAIL from an untraced compile is compiled again with the trace (not when the
        figure is one no pass shows: `traced().unavailable` says why, without a compile)."""
        return bool(getoption("trace_passes_on_fail")) or self.trace_passes == "on-fail"

    def traced(self) -> Traced:
        raise NotImplementedError

    def pass_timelines(self, configs: list[ConfigResult], folder: Path) -> tuple[dict[str, Any], list[str]]:
        """Per traced config: the figure after each MLIR pass, and where it crossed the bound."""
        follow = self.traced()
        timelines: dict[str, Any] = {}
        lines: list[str] = []
        for config in configs:
            label, dump = config.label, config.ir.get(PASS_DUMPS)
            why_not = config.unavailable.get(PASS_DUMPS)
            if why_not:
                timelines[label] = {"unavailable": why_not}
                lines.append(f"[{label}] per pass: {why_not}")
                continue
            if not dump:
                continue
            final = config.ir.get(follow.stage or "")
            stage = (folder / final).read_text() if final else None
            dump_text = (folder / dump).read_text(errors="replace")
            traced = trace(dump_text, follow.measure, stage)
            if traced is None:
                lines.append(f"[{label}] no pass dumps: this toolchain printed none with MLIR_ENABLE_DUMP=1")
                continue
            if follow.generated_by and stage is not None and isinstance(follow.measure, str):
                # The stage is not IR of any pass: its own count closes the timeline, so a pattern
                # that TIR spells otherwise shows up where it does appear, not as a flat line.
                made = PassStep(follow.generated_by, count_lines(stage, re.compile(follow.measure)), "source")
                traced = PassTrace([*traced.steps, made], stage_found=True)
            where = crossing(traced, follow.min_count, follow.max_count)
            timelines[label] = {
                "of": follow.what,
                "steps": traced.timeline(),
                "every_pass": traced.every_pass(),
                "passes": len(traced.steps),
                "crossing": where,
                "to_stage_end": traced.stage_found,
                "dump_bytes": (folder / dump).stat().st_size,
            }
            shown = " → ".join(f"{count} after {name}" if name != "input" else f"{count} at first"
                               for name, count in traced.timeline())  # fmt: skip
            if follow.stage is None:
                scope = " (every MLIR pass)"
            elif follow.generated_by:
                scope = f" (in TIR after each TVM pass, then in what {follow.generated_by} made)"
            elif traced.stage_found:
                scope = ""
            elif follow.stage == "llir":
                scope = " (llir is translated from the last dump's LLVM dialect: to the last MLIR pass)"
            else:
                scope = f" (the {follow.stage} text was not found among the dumps: to the end)"
            said = f"[{label}] {follow.what} per pass{scope}: {shown}"
            lines.append(said + (f"; {where}" if where else ""))
            lines += [f"[{label}] {line}" for line in self.also_traced(dump_text, timelines[label])]
        return timelines, lines

    def also_traced(self, dump_text: str, entry: dict[str, Any]) -> list[str]:
        """A kind's second figure from the same dumps (read once), added to `entry`; its lines."""
        return []
