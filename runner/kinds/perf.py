"""perf: the subject's throughput over the baseline's, timed in alternating rounds of one job."""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from kregress.jobs import Job, JobOutcome
from kregress.judge import Outcome, Verdict
from kregress.kinds.base import ExpectationBase, Plan
from kregress.matrix import Target
from kregress.timing import median_interval


class Perf(ExpectationBase):
    """Throughput of `subject` ÷ throughput of `baseline`, timed in alternating rounds of one job.

    PASS when the confidence interval of the median ratio lies at or above min_ratio, FAIL when it
    lies below, UNSTABLE when it straddles min_ratio or is wider than `max_spread` of the median
    (reported, never bisected). `rounds = 1` turns the noise model off: one timing each."""

    job_kind: ClassVar[str] = "perf"
    # timings shared with other jobs on the device say nothing: the job takes the device alone
    # itself, for its timed rounds only (see measure)
    device_alone: ClassVar[bool] = True
    not_reducible: ClassVar[str] = "a perf ratio is measured, not a failure a smaller kernel keeps"

    kind: Literal["perf"]
    subject_bench: str = Field(alias="subject")
    baseline: str
    min_ratio: float = Field(gt=0)
    rounds: int = Field(default=10, ge=1, le=1000)
    max_spread: float = Field(default=0.25, gt=0)

    @property
    def subject(self) -> str:
        return f"{self.subject_bench}-vs-{self.baseline}"

    def plan(self, target: Target, framework: str) -> Plan | None:
        if target.kind == "compile":
            return Plan(False)
        if target.kind == "interpreter" and not (self.targets and self.applies_to(target.name)):
            return Plan(
                False, not_applicable="perf is timed on a device unless the case lists cpu:interpreter"
            )
        return None

    def job(self, getoption: Callable[[str], Any], **common: Any) -> Job:
        rounds = getoption("perf_rounds") or self.rounds
        return self.make_job(
            self.subject_bench, baseline=self.baseline, rounds=rounds,
            min_ratio=self.min_ratio, max_spread=self.max_spread, **common,
        )  # fmt: skip

    @staticmethod
    def measure(job: dict[str, Any], out_dir: Path) -> dict[str, Any]:
        """Time subject and baseline in alternating rounds on the job's device. Compiling, capturing
        and warming up share the device with other jobs; only the timed rounds hold it alone, and
        they stop as soon as the answer is clear (kregress.timing.clear_of)."""
        from kregress.devices import device_lock
        from kregress.timing import clear_of, make_timers, timed_rounds
        from kregress.worker import attribute, load_repro

        target = job["target"]

        def lock(exclusive: bool) -> Any:
            if target["kind"] != "device":
                return contextlib.nullcontext()
            return device_lock(target["backend"], os.environ, exclusive=exclusive)

        repro = load_repro(Path(job["repro"]), job["framework"])
        benches = {role: attribute(repro, job[role], role) for role in ("subject", "baseline")}
        asked = time.perf_counter()
        with lock(exclusive=False):
            began = time.perf_counter()
            fns = {role: bench.setup(job["device"]) for role, bench in benches.items()}
            timers = make_timers(fns["subject"], fns["baseline"], job["device"])
            prepared = time.perf_counter()
        waited = began - asked
        asked = time.perf_counter()
        with lock(exclusive=True):
            held = time.perf_counter()
            stop = clear_of(job["min_ratio"], job["max_spread"]) if job.get("min_ratio") else None
            timed = timed_rounds(timers, job["rounds"], stop)
            timed["device_alone_s"] = round(time.perf_counter() - held, 3)
            timed["waited_for_device_s"] = round(held - asked + waited, 3)
        timed["prepared_s"] = round(prepared - began, 3)
        timed["names"] = {role: job[role] for role in benches}
        timed["flops"] = {role: bench.flops for role, bench in benches.items()}
        return timed

    def judge(self, target: Target, outcome: JobOutcome, folder: Path) -> Verdict:
        return self.judge_timings(outcome.measured)

    def judge_timings(self, perf: dict[str, Any]) -> Verdict:
        """FAIL only when the whole interval of the median ratio lies below min_ratio, PASS when it lies
        at or above; straddling it, or wider than max_spread, is UNSTABLE: noise, not a verdict."""
        ratio = median_interval(perf["ratios"])
        subject_ms, baseline_ms = (statistics.median(perf[f"{role}_ms"]) for role in ("subject", "baseline"))
        flops = perf.get("flops") or {}

        def shown(role: str, ms: float) -> str:
            tflops = f", {flops[role] / ms / 1e9:.1f} TFLOPS" if flops.get(role) else ""
            return f"{perf['names'][role]} {ms:.4g} ms{tflops}"

        rounds = perf["rounds"]
        interval = (
            f"median of {rounds} rounds {ratio.median:.3f}, {ratio.confidence:.0%} interval "
            f"[{ratio.low:.3f}, {ratio.high:.3f}], spread {ratio.spread:.1%}"
            if rounds > 1
            else f"{ratio.median:.3f} (one round: no noise model)"
        )
        text = (
            f"{shown('subject', subject_ms)} vs {shown('baseline', baseline_ms)}: throughput ratio {interval}"
        )
        measured = {
            "ratio": ratio.median,
            "ratio_low": ratio.low,
            "ratio_high": ratio.high,
            "confidence": ratio.confidence,
            "spread": ratio.spread,
            "rounds": rounds,
            "ratios": perf["ratios"],
            "subject_ms": subject_ms,
            "baseline_ms": baseline_ms,
            "subject_tflops": flops["subject"] / subject_ms / 1e9 if flops.get("subject") else None,
            "baseline_tflops": flops["baseline"] / baseline_ms / 1e9 if flops.get("baseline") else None,
            "timing": perf.get("method"),
            "stopped": perf.get("stopped"),
            "device_alone_s": perf.get("device_alone_s"),
            "waited_for_device_s": perf.get("waited_for_device_s"),  # shared, then alone
            "prepared_s": perf.get("prepared_s"),  # compiles, capture and warm-up
        }
        limit = {"min_ratio": self.min_ratio, "max_spread": self.max_spread}
        if rounds > 1 and ratio.spread > self.max_spread:
            return Verdict(
                Outcome.UNSTABLE,
                f"UNSTABLE: {text} > max_spread {self.max_spread:.1%}",
                None,
                measured,
                limit,
            )
        if ratio.high < self.min_ratio:
            return Verdict(Outcome.FAIL, f"TOO_SLOW: {text} < {self.min_ratio}", "TOO_SLOW", measured, limit)
        if ratio.low >= self.min_ratio:
            return Verdict(Outcome.PASS, f"{text} ≥ {self.min_ratio}", None, measured, limit)
        return Verdict(
            Outcome.UNSTABLE, f"UNSTABLE: {text} straddles {self.min_ratio}", None, measured, limit
        )

    @staticmethod
    def figure(measured: dict[str, Any], limit: Any) -> str:
        floor = limit["min_ratio"] if isinstance(limit, dict) else limit  # results before rounds
        low, high = measured.get("ratio_low"), measured.get("ratio_high")
        span = f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None and low != high else ""
        nights = ""
        if measured.get("window_nights"):  # judged beside earlier nights (kregress.night_window)
            nights = f"; {measured['window_nights']} nights, median {measured['window_median']:.2f}"
            if measured.get("floor_in_window"):
                nights += ": floor inside their spread"
        return f"ratio {measured['ratio']:.2f}{span} (≥ {floor}){nights}"
