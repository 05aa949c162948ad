"""Turn what a job measured into a verdict for one expectation on one target. Pure: no processes.

Failure kinds name what went wrong the way a compiler engineer triages it: CRASH, TIMEOUT,
OUT_OF_RESOURCES, COMPILE_ERROR, RUNTIME_ERROR, WRONG_RESULT, OVER_LIMIT, IR_MISMATCH, TOO_SLOW,
ARTIFACT_MISMATCH.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from kregress.child_results import ConfigResult, ConfigStatus, JobStatus
from kregress.jobs import JobOutcome, diagnostics

if TYPE_CHECKING:
    from kregress.kinds.base import ExpectationBase
    from kregress.manifest import KnownBad
    from kregress.matrix import Target

MAX_LINES_SHOWN = 10


class Outcome(str, Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    XFAIL = "XFAIL"
    XPASS = "XPASS"
    UNSTABLE = "UNSTABLE"  # perf timings that cannot tell PASS from FAIL: reported, never bisected
    SKIP = "SKIP"
    ERROR = "ERROR"

    def __str__(self) -> str:
        """The word itself in f-strings, reports and pages (a str-mixed Enum says `Outcome.FAIL`)."""
        return self.value


@dataclass
class Verdict:
    outcome: Outcome
    message: str
    failure_kind: str | None = None
    measured: dict[str, Any] = field(default_factory=dict)
    limit: Any = None
    detail: str = ""

    @classmethod
    def skip(cls, reason: str) -> Verdict:
        return cls(Outcome.SKIP, reason)

    @classmethod
    def error(cls, reason: str, detail: str = "") -> Verdict:
        return cls(Outcome.ERROR, reason, detail=detail)


def diagnostics_of_failure(verdict: Verdict, outcome: JobOutcome) -> str | None:
    """The compiler's diagnostics where the item failed (kept with known_bad too): what the child
    printed, and the diagnostic lines inside each failed config's error (ptxas's stderr sits in the
    middle of Triton's "Internal Triton PTX codegen error", the message keeps its last line)."""
    if verdict.outcome not in (Outcome.FAIL, Outcome.XFAIL):
        return None
    inside = [diagnostics(c.message or "") for c in outcome.configs if c.status is ConfigStatus.COMPILE_ERROR]
    return "\n".join(part for part in (*inside, outcome.diagnostics) if part) or None


def failure_kind_of(error_type: str | None) -> str:
    return "OUT_OF_RESOURCES" if error_type and "OutOfResources" in error_type else "COMPILE_ERROR"


def job_level(outcome: JobOutcome, compile_job: bool) -> Verdict | None:
    """A verdict that follows from how the child ended, before looking at any measurement."""
    status = outcome.status
    if status is JobStatus.OK:
        return None
    if status is JobStatus.UNSUPPORTED:
        return Verdict.skip(outcome.reason)
    if status is JobStatus.CASE_ERROR:
        return Verdict.error(outcome.reason, outcome.log_tail)
    if status is JobStatus.COMPILER_BROKEN:
        return Verdict.error(f"the compiler does not work here: {outcome.reason}", outcome.traceback)
    if status is JobStatus.HARNESS_ERROR:
        return Verdict.error(outcome.reason, outcome.traceback or outcome.log_tail)
    if status is JobStatus.TIMEOUT:
        return Verdict(Outcome.FAIL, f"TIMEOUT: {outcome.reason}", "TIMEOUT", detail=outcome.log_tail)
    if status is JobStatus.CRASH:
        return Verdict(Outcome.FAIL, f"CRASH: {outcome.reason}", "CRASH", detail=outcome.log_tail)
    # RAISED: the compiler or kernel raised outside a per-config compile.
    detail = outcome.traceback or outcome.log_tail
    if compile_job:
        return Verdict.error(f"the case's compile setup raised: {outcome.reason}", detail)
    kind = "OUT_OF_RESOURCES" if "OutOfResources" in str(outcome.error_type) else "RUNTIME_ERROR"
    return Verdict(Outcome.FAIL, f"{kind}: {outcome.reason}", kind, detail=detail)


def compile_failures(configs: list[ConfigResult]) -> Verdict | None:
    broken = [c for c in configs if c.status is ConfigStatus.COMPILE_ERROR]
    if not broken:
        return None
    kinds = {failure_kind_of(c.error_type) for c in broken}
    kind = "OUT_OF_RESOURCES" if "OUT_OF_RESOURCES" in kinds else "COMPILE_ERROR"
    lines = [f"[{c.label}] {c.error_type}: {last_line(c.message)}" for c in broken]
    return Verdict(
        Outcome.FAIL,
        f"{kind}: {len(broken)} of {len(configs)} configs did not compile\n" + "\n".join(lines),
        kind,
        measured={"failed_configs": [c.label for c in broken]},
        detail="\n\n".join(f"[{c.label}]\n{c.message}" for c in broken),
    )


def last_line(text: str | None) -> str:
    """Compiler errors put the source excerpt first and the diagnosis last."""
    lines = (text or "").strip().splitlines()
    return lines[-1] if lines else ""


def judge(
    expectation: ExpectationBase,
    target: Target,
    outcome: JobOutcome,
    known_bad: KnownBad | None = None,
    toolchain: str = "",
) -> Verdict:
    """The item's final outcome. How the child ended decides first (a crash, a timeout, a case that
    raised); then the expectation's kind judges what was measured (kregress.kinds); then a
    known_bad entry that covers this toolchain turns FAIL into XFAIL and PASS into XPASS."""
    verdict = job_level(outcome, expectation.job_kind == "compile")
    if verdict is None:
        assert outcome.folder is not None
        verdict = expectation.judge(target, outcome, outcome.folder)
    return with_known_bad(verdict, known_bad, toolchain) if known_bad else verdict


def with_known_bad(verdict: Verdict, known_bad: KnownBad, toolchain: str) -> Verdict:
    if verdict.outcome == Outcome.FAIL:
        reason = f": {known_bad.reason}" if known_bad.reason else ""
        verdict.outcome = Outcome.XFAIL
        verdict.message = f"known bad ({known_bad.link}{reason}) — {verdict.message}"
    elif verdict.outcome == Outcome.PASS:
        verdict.outcome = Outcome.XPASS
        verdict.message = (
            f"looks fixed on {toolchain}: update the manifest's known_bad entry and close the upstream "
            f"issue {known_bad.link} — {verdict.message}"
        )
    return verdict
