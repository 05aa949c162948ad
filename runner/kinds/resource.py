"""resource: a resource figure of every config (shared memory, registers, spills, scratch) stays
at or under a limit, the case's own or the target's from matrix.toml."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from kregress.child_results import ConfigResult, ConfigStatus
from kregress.frameworks import FRAMEWORKS
from kregress.judge import Outcome, Verdict, compile_failures
from kregress.kinds.base import Plan
from kregress.kinds.traced import PassTraced, Traced
from kregress.matrix import Target
from kregress.pass_trace import SHARED_MEMORY_OPS, shared_bytes, trace

ResourceMetric = Literal[
    "shared_bytes", "registers", "spill_bytes", "stack_bytes", "scratch_bytes", "scratch_bytes_per_block"
]


class Resource(PassTraced):
    """A resource figure of every config stays at or under a limit (the target's, by default)."""

    kind: Literal["resource"]
    metric: ResourceMetric
    max: int | None = Field(default=None, ge=0)

    @property
    def subject(self) -> str:
        return f"{self.metric}-{self.kernel}"

    def plan(self, target: Target, framework: str) -> Plan | None:
        """A figure the framework's adapter never reads on this backend SKIPs without a compile."""
        declared = FRAMEWORKS[framework]
        refused = declared.not_applicable(target.kind) or declared.cannot_build(
            target.kind, target.backend, target.name
        )
        builds = target.kind == declared.compiles_on and not refused
        if not builds or not self.applies_to(target.name):
            return super().plan(target, framework)
        why = declared.cannot_measure(self.metric, target.backend)
        return Plan(True, why) if why else None

    def traced(self) -> Traced:
        """Bytes exist only from the pass that allocates them: before it, the nearest honest figure
        is how many ops may take shared memory, which says which pass made them."""
        if self.metric != "shared_bytes":
            return Traced(
                unavailable=f"not traced: {self.metric} is decided after the MLIR passes (by the register "
                "allocator of ptxas, LLVM or IGC), so no pass of the dumps shows it"
            )
        return Traced("ops that may take shared memory (local_alloc, convert_layout; a proxy, not bytes)",
                      SHARED_MEMORY_OPS)  # fmt: skip

    def also_traced(self, dump_text: str, entry: dict[str, Any]) -> list[str]:
        """The bytes, from the pass that allocated them on."""
        allocated = trace(dump_text, shared_bytes, None)
        if allocated is None:
            return []
        steps = allocated.timeline()
        entry["allocated"] = steps
        if len(steps) < 2:
            return []
        return [
            "shared memory allocated: "
            + " → ".join(f"{count} bytes after {name}" for name, count in steps[1:])
        ]

    def judge_configs(self, target: Target, configs: list[ConfigResult], folder: Path) -> Verdict:
        limit = self.max if self.max is not None else target.limits.get(self.metric)
        failed = compile_failures(configs)
        timelines, traced = self.pass_timelines(configs, folder)
        passes = {"passes": timelines} if timelines else {}
        if failed:
            # A compiler that refused a config for this very resource (IGC's PTSS error) said how much.
            refused = {c.label: c.metrics[self.metric] for c in configs
                       if c.status is ConfigStatus.COMPILE_ERROR and self.metric in c.metrics}  # fmt: skip
            if refused:
                failed.measured[self.metric] = refused
                failed.limit = limit
            # The dumps run up to the pass that failed: the trace of a refused config is kept too.
            failed.measured.update(passes)
            failed.detail = "\n".join(part for part in (failed.detail, *traced) if part)
            return failed
        if limit is None:
            return Verdict.skip(
                f"no {self.metric} limit for {target.name}: set `max` in case.toml or add it "
                "to the target's limits in matrix.toml"
            )
        values = {c.label: c.metrics.get(self.metric) for c in configs}
        if any(v is None for v in values.values()):
            reasons = {c.unavailable.get(self.metric) for c in configs} - {None}
            if reasons:
                return Verdict.skip(f"{target.name}: " + "; ".join(sorted(reasons)))
            return Verdict.skip(f"{target.name} does not report {self.metric} with this toolchain")
        over = {label: v for label, v in values.items() if v > limit}
        shown = ", ".join(f"[{label}] {v}" for label, v in values.items())
        if over:
            worst = max(over.values())
            return Verdict(
                Outcome.FAIL,
                f"OVER_LIMIT: {self.metric} {worst} > limit {limit} on {target.name} in {len(over)} of "
                f"{len(values)} configs ({', '.join(f'[{k}] {v}' for k, v in over.items())})",
                "OVER_LIMIT",
                measured={self.metric: values, **passes},
                limit=limit,
                detail="\n".join(traced),
            )
        return Verdict(
            Outcome.PASS,
            f"{self.metric} ≤ {limit} on {target.name}: {shown}",
            measured={self.metric: values, **passes},
            limit=limit,
            detail="\n".join(traced),
        )

    @staticmethod
    def figure(measured: dict[str, Any], limit: Any) -> str:
        found = resource_figure(measured)
        if not found:
            return ""
        metric, values = found
        top = max(values.values())
        return f"{metric} {top} {'≤' if limit is None or top <= limit else '>'} {limit}"


def resource_figure(measured: dict[str, Any]) -> tuple[str, dict[str, float]] | None:
    """A resource item's metric and its value per config. A FAIL from configs the compiler refused
    also lists those (`failed_configs`), and may carry the figure the compiler reported for them."""
    for metric, values in measured.items():
        if isinstance(values, dict) and values and all(isinstance(v, (int, float)) for v in values.values()):
            return metric, values
    return None
