"""ir: count the lines of an IR stage (ttgir, ptx, amdgcn, ...) that match a regular expression."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from kregress.child_results import ConfigResult
from kregress.frameworks import all_ir_stages
from kregress.judge import MAX_LINES_SHOWN, Outcome, Verdict, compile_failures
from kregress.kinds.traced import PassTraced, Traced
from kregress.matrix import Target
from kregress.pass_trace import TRACED_STAGES

IrStage = Literal[all_ir_stages()]  # type: ignore[valid-type]  # each framework declares its stages


class Ir(PassTraced):
    """Count the lines of an IR stage that match a regular expression."""

    kind: Literal["ir"]
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

    def traced(self) -> Traced:
        if self.stage not in TRACED_STAGES:
            return Traced(
                unavailable=f"not traced: {self.stage} comes from LLVM after the MLIR passes, which are all "
                f"that MLIR_ENABLE_DUMP shows (traced: {', '.join(TRACED_STAGES)})"
            )
        made = "CUDA codegen" if self.stage == "cuda_source" else ""
        return Traced(
            f"/{self.pattern}/", self.pattern, self.stage, self.min_count, self.max_count, generated_by=made
        )

    def judge_configs(self, target: Target, configs: list[ConfigResult], folder: Path) -> Verdict:
        failed = compile_failures(configs)
        if failed:
            return failed
        if any(self.stage not in c.ir for c in configs):
            return Verdict.skip(f"{target.name} produces no {self.stage} with this toolchain")
        pattern = re.compile(self.pattern)
        counts: dict[str, int] = {}
        offending: list[str] = []
        for config in configs:
            lines = (folder / config.ir[self.stage]).read_text().splitlines()
            hits = [(n, line) for n, line in enumerate(lines, 1) if pattern.search(line)]
            counts[config.label] = len(hits)
            offending += [
                f"[{config.label}] {self.stage}:{n}: {line.strip()}" for n, line in hits[:MAX_LINES_SHOWN]
            ]
        bound = " and ".join(
            part
            for part in (
                f"≥ {self.min_count}" if self.min_count is not None else "",
                f"≤ {self.max_count}" if self.max_count is not None else "",
            )
            if part
        )
        bad = {
            label: n
            for label, n in counts.items()
            if (self.max_count is not None and n > self.max_count)
            or (self.min_count is not None and n < self.min_count)
        }
        counted = ", ".join(f"[{k}] {v}" for k, v in counts.items())
        limit = {"min_count": self.min_count, "max_count": self.max_count}
        timelines, traced = self.pass_timelines(configs, folder)
        measured: dict[str, Any] = {"count": counts, **({"passes": timelines} if timelines else {})}
        crossings = "".join(
            f"; [{label}] {t['crossing']}"
            for label, t in timelines.items()
            if t.get("crossing") and label in bad
        )
        if bad:
            return Verdict(
                Outcome.FAIL,
                f"IR_MISMATCH: {len(bad)} of {len(counts)} configs have a count of /{self.pattern}/ in "
                f"{self.stage} outside {bound}: {counted}{crossings}",
                "IR_MISMATCH",
                measured=measured,
                limit=limit,
                detail="\n".join([*offending, *traced]) or "(no matching lines)",
            )
        return Verdict(
            Outcome.PASS,
            f"/{self.pattern}/ in {self.stage}: {counted} (bound {bound})",
            measured=measured,
            limit=limit,
            detail="\n".join(traced),
        )

    @staticmethod
    def figure(measured: dict[str, Any], limit: Any) -> str:
        counts = measured["count"].values()
        bound = " ".join(f"{k.removesuffix('_count')} {v}" for k, v in (limit or {}).items() if v is not None)
        return f"{max(counts)} matching lines ({bound})"
