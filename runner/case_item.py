"""One corpus item, (case, expectation, target): its job measured in `setup` (in a child process,
once per session for items that share it; on a device under its lock and the watchdog), judged,
and its one record (kregress.record.ItemRecord) made; `call` maps the verdict onto pytest's
outcomes."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from kregress.devices import device_lock
from kregress.errors import KregressError
from kregress.item import judge_item, with_machine_tools
from kregress.job_durations import watchdog_timeout
from kregress.jobs import DEFAULT_TIMEOUT, Interpreter, Job, JobOutcome, run_job
from kregress.judge import Outcome, Verdict, diagnostics_of_failure
from kregress.kinds import Expectation
from kregress.manifest import Case
from kregress.matrix import Target
from kregress.record import ItemRecord
from kregress.run_state import durations_for_order, interpreter_for, machine_tool_variables, state


class ItemError(KregressError):
    """The harness or the case broke (not the compiler under test): pytest reports an ERROR."""


class ItemFailure(KregressError):
    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.message)
        self.verdict = verdict


class CaseItem(pytest.Item):
    def __init__(
        self, *, case: Case, expectation: Expectation, expectation_name: str, target: Target, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.expectation = expectation
        self.expectation_name = expectation_name
        self.target = target
        self.verdict: Verdict | None = None
        self.xpass_reason: str | None = None
        self.planned_skip: str | None = None  # a SKIP decided at collection, before any job
        self.outcome_record: dict[str, Any] | None = None  # the one record of this item's outcome
        self.device_wait_s: float | None = None  # how long its job waited for the device's lock
        self.job_started_at: float | None = None  # when its job was asked for (epoch s)
        self.add_marker(getattr(pytest.mark, expectation.kind))

    def record(self, **extra: Any) -> dict[str, Any]:
        """The item's record (kregress.record.ItemRecord) as JSON, the one object the results file,
        the summary, the history and the page read; a value JSON lacks (a numpy scalar) as text."""
        upstream = self.case.manifest.upstream
        fields = {
            "case": self.case.id,
            "expectation": self.expectation_name,
            "kind": self.expectation.kind,
            "target": self.target.name,
            "framework": self.case.manifest.framework,
            "upstream": upstream.issue,
            "fix": upstream.fix,
            "reproduce": "+".join(self.case.manifest.reproduce.levels)
            if self.case.manifest.reproduce
            else None,
            **extra,
        }
        return ItemRecord.model_validate(json.loads(json.dumps(fields, default=str))).as_json()

    def timeout(self) -> float:
        given = self.config.getoption("case_timeout")
        return given if given is not None else float(self.case.manifest.timeout or DEFAULT_TIMEOUT)

    def job_timeout(self) -> tuple[float, str]:
        """The case's timeout, or for a device job the watchdog's bound when that comes first."""
        known = durations_for_order(self.config) if self.target.kind == "device" else {}
        return watchdog_timeout(self.timeout(), known, self.nodeid)

    def setup(self) -> None:
        interpreter = interpreter_for(self.config, self.target)
        if isinstance(interpreter, str):
            self.verdict = Verdict.skip(interpreter)
            self.outcome_record = self.record(outcome=Outcome.SKIP.value, message=interpreter)
            return
        interpreter = with_machine_tools(
            self.target, interpreter, lambda backend: machine_tool_variables(self.config, backend)
        )
        judged = judge_item(
            self.case,
            self.expectation_name,
            self.expectation,
            self.target,
            lambda job: self.outcome_of(job, interpreter),
            self.config.getoption,
        )
        verdict, outcome = judged.verdict, judged.outcome
        verdict = self.beside_earlier_nights(verdict)
        self.verdict = verdict
        self.outcome_record = self.record(
            outcome=verdict.outcome.value,
            failure_kind=verdict.failure_kind,
            message=verdict.message,
            measured=verdict.measured,
            limit=verdict.limit,
            toolchain={**outcome.toolchain, **{f"{p} commit": c for p, c in interpreter.commits}},
            toolchain_spec=interpreter.toolchain,
            job_seconds=round(outcome.seconds, 3),
            device_wait_s=self.device_wait_s,
            job_started_at=self.job_started_at,
            known_bad=judged.known_bad.link if judged.known_bad else None,
            device=state(self.config).device if self.target.kind == "device" else None,
            code={c.label: c.code for c in outcome.configs if c.code} or None,
            diagnostics=diagnostics_of_failure(verdict, outcome),
        )
        self.user_properties.append(("kregress", json.dumps(self.outcome_record)))  # for JUnit XML
        if verdict.outcome == Outcome.ERROR:
            raise ItemError(verdict)

    def beside_earlier_nights(self, verdict: Verdict) -> Verdict:
        """A perf verdict on a device, with --history, also against the item's earlier nights on
        this GPU model (kregress.night_window)."""
        option = self.config.getoption("history")
        model = (state(self.config).device or {}).get("name")
        if self.expectation.kind != "perf" or self.target.kind != "device" or not option or not model:
            return verdict
        from kregress.history import default_path
        from kregress.night_window import earlier_nights, judged_against

        history = default_path() if option == "default" else Path(option)
        window = earlier_nights(history, self.case.id, self.expectation_name, self.target.name, model)
        return judged_against(verdict, window, self.expectation.min_ratio)

    def outcome_of(self, job: Job, interpreter: Interpreter) -> JobOutcome:
        """The job's outcome, run once per session (items that share a job share its outcome); on a
        device, under its shared lock. A job that needs the device alone (timing) takes the lock
        itself, shared while it prepares and exclusive only while it times: held here as well, the
        two could never be had at once."""
        memo = state(self.config).jobs
        if job.key not in memo:
            on_device = self.target.kind == "device" and not job.exclusive
            asked = time.perf_counter()
            state(self.config).job_starts[job.key] = round(time.time(), 3)
            with (
                device_lock(self.target.backend, os.environ, exclusive=False)
                if on_device
                else (contextlib.nullcontext())
            ):
                if on_device:
                    state(self.config).device_waits[job.key] = round(time.perf_counter() - asked, 3)
                timeout, why = self.job_timeout()
                memo[job.key] = run_job(
                    job,
                    timeout,
                    state(self.config).workdir,
                    interpreter=interpreter,
                    use_fork_server=not self.config.getoption("no_fork_server"),
                    why_timeout=why,
                )
        self.device_wait_s = state(self.config).device_waits.get(job.key, self.device_wait_s)
        self.job_started_at = state(self.config).job_starts.get(job.key, self.job_started_at)
        return memo[job.key]

    def runtest(self) -> None:
        verdict = self.verdict
        assert verdict is not None
        if verdict.outcome in (Outcome.SKIP, Outcome.UNSTABLE):  # UNSTABLE: see pytest_report_teststatus
            pytest.skip(verdict.message)
        if verdict.outcome == Outcome.XFAIL:
            pytest.xfail(verdict.message)
        if verdict.outcome == Outcome.XPASS:
            self.xpass_reason = verdict.message
        if verdict.outcome == Outcome.FAIL:
            raise ItemFailure(verdict)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        value = excinfo.value
        if isinstance(value, (ItemFailure, ItemError)):
            verdict: Verdict = value.args[0] if isinstance(value, ItemError) else value.verdict
            lines = [f"{self.case.id} / {self.expectation_name} on {self.target.name}: {verdict.message}"]
            if verdict.detail:
                lines += ["", verdict.detail]
            lines += ["", f"case: {self.case.folder}", f"upstream: {self.case.manifest.upstream.issue}"]
            return "\n".join(lines)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.case.id}::{self.name}"


def final_record(item: CaseItem, call: pytest.CallInfo[None]) -> dict[str, Any] | None:
    """The item's outcome record once a phase has decided it: the judge's, a SKIP planned at
    collection, or an ERROR for a harness that raised before judging."""
    if item.outcome_record is not None:
        return item.outcome_record
    if call.when == "setup" and item.planned_skip is not None:
        return item.record(outcome=Outcome.SKIP.value, message=item.planned_skip)
    if call.excinfo is not None and not isinstance(call.excinfo.value, pytest.skip.Exception):
        error = call.excinfo.value
        return item.record(outcome=Outcome.ERROR.value, message=f"{type(error).__name__}: {error}")
    return None
