"""ir: count the lines of an IR stage (ttgir, ptx, amdgcn, ...) that match a regular expression;
with `inside = "branch_or_loop"`, only those inside a block a condition or loop opens (a barrier
that not every thread reaches), in C-like code whose blocks are braces (TileLang's cuda_source)."""

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
BRACED_STAGES = ("cuda_source",)  # C-like: a block is braces after `if (…)`, `for (…)`, `else`
# what opens a block as a branch or a loop, read back from the `{` (a preprocessor `#if` is none)
BRANCH_OR_LOOP = re.compile(
    r"(?:(?<![#\w])(?:if(?:\s+constexpr)?|for|while|switch)\s*\(.*\)|\b(?:else|do))\s*$", re.S
)
THREAD_DEPENDENT = re.compile(r"\bthreadIdx\b|\b__lane_?id\b|\blaneid\b")
COMMENT = re.compile(r"//.*$")


def lines_inside_branches(lines: list[str], pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    """The (number, line) of each line where `pattern` matches inside a block that not every thread
    runs alike: opened by `if (…)`, `for (…)`, `while (…)` or `switch (…)` whose condition reads the
    thread index, or by the `else` (or `do`) of one, at any depth. Braces are read as C's (the
    generated code has none in strings; `//` comments and preprocessor lines, continued ones too,
    are passed over); a statement's text since the last `;`, `{` or `}` outside parentheses is what
    opened the block."""
    blocks: list[bool] = []  # per open brace: whether it, or one around it, is thread-dependent
    statement = ""
    parens = 0
    closed = False  # whether the block that closed last was thread-dependent (an `else` follows it)
    continued = False  # inside a preprocessor line continued with a backslash
    hits = []
    for n, raw in enumerate(lines, 1):
        if continued or raw.lstrip().startswith("#"):
            continued = raw.rstrip().endswith("\\")
            continue  # a preprocessor line opens no block
        line = COMMENT.sub("", raw)
        starts = {found.start() for found in pattern.finditer(line)}
        counted = False
        for i, char in enumerate(line):
            if i in starts and blocks and blocks[-1]:
                counted = True
            if char == "(":
                parens += 1
            elif char == ")":
                parens = max(0, parens - 1)
            if char == "{":
                opener = BRANCH_OR_LOOP.search(statement)
                dependent = bool(opener) and (
                    bool(THREAD_DEPENDENT.search(statement))
                    or (closed and statement.lstrip().startswith("else"))
                )
                blocks.append(dependent or (bool(blocks) and blocks[-1]))
                statement, parens = "", 0
            elif char == "}":
                closed = blocks.pop() if blocks else False
                statement, parens = "", 0
            elif char == ";" and parens == 0:
                statement = ""
            else:
                statement += char
        statement += "\n"
        if counted:
            hits.append((n, raw))
    return hits


class Ir(PassTraced):
    """Count the lines of an IR stage that match a regular expression."""

    kind: Literal["ir"]
    stage: IrStage
    pattern: str
    max_count: int | None = Field(default=None, ge=0)
    min_count: int | None = Field(default=None, ge=0)
    inside: Literal["branch_or_loop"] | None = None  # count only the matches inside such a block

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
        if self.inside and self.stage not in BRACED_STAGES:
            raise ValueError(
                f"inside = {self.inside!r} reads the blocks of C-like code ({', '.join(BRACED_STAGES)}), "
                f"not {self.stage}"
            )
        return self

    @property
    def counted(self) -> str:
        """What is counted, as a verdict says it."""
        return (
            f"/{self.pattern}/ inside a branch or loop on the thread index"
            if self.inside
            else f"/{self.pattern}/"
        )

    def traced(self) -> Traced:
        if self.inside:
            return Traced(
                unavailable="not traced: counted inside a branch or loop, which a pass's dump cannot tell"
            )
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
            hits = (
                lines_inside_branches(lines, pattern)
                if self.inside
                else [(n, line) for n, line in enumerate(lines, 1) if pattern.search(line)]
            )
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
                f"IR_MISMATCH: {len(bad)} of {len(counts)} configs have a count of {self.counted} in "
                f"{self.stage} outside {bound}: {counted}{crossings}",
                "IR_MISMATCH",
                measured=measured,
                limit=limit,
                detail="\n".join([*offending, *traced]) or "(no matching lines)",
            )
        return Verdict(
            Outcome.PASS,
            f"{self.counted} in {self.stage}: {counted} (bound {bound})",
            measured=measured,
            limit=limit,
            detail="\n".join(traced),
        )

    @staticmethod
    def figure(measured: dict[str, Any], limit: Any) -> str:
        counts = measured["count"].values()
        bound = " ".join(f"{k.removesuffix('_count')} {v}" for k, v in (limit or {}).items() if v is not None)
        return f"{max(counts)} matching lines ({bound})"
