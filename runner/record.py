"""One record per judged item, declared once: what the plugin writes for an item, what a results
file holds, what the history keeps whole and what compare, the page and the comments read. A field
added here reaches all of them; a results file that does not fit is refused naming the field."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from kregress.judge import Outcome


class ItemRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    case: str
    expectation: str
    target: str
    outcome: Outcome
    nodeid: str | None = None
    kind: str | None = None
    framework: str | None = None
    upstream: str | None = None
    fix: str | None = None
    reproduce: str | None = None  # how the case is shown to catch its bug: reproduced+control, guard
    failure_kind: str | None = None
    message: str | None = None
    measured: dict[str, Any] | None = None
    limit: Any = None
    toolchain: dict[str, str] | None = None  # versions the child reported
    toolchain_spec: str | None = None  # the --toolchain it was judged under
    job_seconds: float | None = None
    device_wait_s: float | None = None  # how long the job waited for its device's shared lock
    job_started_at: float | None = None  # when the job was asked for, epoch seconds (a run's timeline)
    known_bad: str | None = None  # the known_bad link that turned FAIL into XFAIL
    device: dict[str, str] | None = None  # the GPU of a device target
    duration: float | None = None
    attempts: list[Outcome] | None = None  # every outcome when judged more than once in a run
    code: dict[str, dict[str, str]] | None = None  # config -> stage -> digest of generated code
    # A failure's diagnostic lines among what the child printed (kregress.jobs.diagnostics): MLIR's
    # "error:", an LLVM ERROR, a failed assertion go to stderr, not into the exception the message
    # shows, and they are what a reporter quotes.
    diagnostics: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The fields that were given, as JSON values (a record read back equals what was written)."""
        return self.model_dump(mode="json", exclude_unset=True)


class JobRun(BaseModel):
    """One job's part of a merged run: where and how it judged."""

    model_config = ConfigDict(frozen=True)

    backend: str | None = None
    targets: list[str] | None = None
    toolchain: str | None = None
    started: float | None = None
    runner: str | None = None
    corpus_sha: str | None = None
    run_id: str | None = None  # unique to the pytest run that wrote it


class RunResults(BaseModel):
    """A run's results, read by attribute: what `pytest --kregress-json` writes, several such merged
    into one run (`runs` says whose), or a run read back from the history (`id`, `source`).

    Fields of the run this code never reads (the devices, the counts, the seconds) are kept as
    given, so a document read and written again loses nothing."""

    model_config = ConfigDict(frozen=True, extra="allow")

    kregress: int = 1
    items: list[ItemRecord]
    started: float | None = None
    runner: str | None = None
    backend: str | None = None
    targets: list[str] | None = None
    toolchain: str | dict[str, str] | None = None  # the --toolchain asked for; a stored run's versions
    corpus_sha: str | None = None
    runs: list[JobRun] | None = None  # a merged run: its jobs
    id: int | None = None  # a run read back from the history
    source: str | None = None
    run_id: str | None = None  # unique to the pytest run that wrote it
    run_ids: list[str] | None = None  # a run read back from the history: the pytest runs it holds

    def jobs(self) -> list[JobRun]:
        """The jobs that made this run: the merged ones, or the run itself."""
        return self.runs or [JobRun.model_validate(self.model_dump(include=set(JobRun.model_fields)))]

    def identities(self) -> set[str]:
        """The pytest runs this document holds: one run, the jobs merged, or a stored run's."""
        jobs = {job.run_id for job in self.runs or [] if job.run_id}
        return jobs | {i for i in [self.run_id, *(self.run_ids or [])] if i}
