"""What a child process reports, typed once: how the job ended (JobStatus) and, for a compile, one
ConfigResult per config. The child writes them as JSON; the parent reads them back into these
classes (kregress.jobs), so kinds read attributes, never keys.

Stdlib only: adapters build ConfigResults inside toolchain environments.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from kregress.errors import KregressError


class CaseError(KregressError):
    """The case itself is broken (bad repro.py, missing attribute): an ERROR, not a compiler FAIL.
    Declared here, not in the worker, so that a kind's measure() raises the class the worker catches
    even when the worker runs as __main__."""


# The versions a child runs with, written before its job: what a child that dies leaves behind.
TOOLCHAIN_FILE = "toolchain.json"
# When a child that is still running writes its Python stacks to its log (seconds after it
# starts): just before its parent stops it for running too long. A timer in the child, not a
# signal: a child may inherit a mask that blocks signals (seen under pytest-xdist on a GPU runner).
STACKS_AFTER = "KREGRESS_STACKS_AFTER"


class JobStatus(str, Enum):
    OK = "ok"
    UNSUPPORTED = "unsupported"  # this environment cannot build or run it: SKIP
    CASE_ERROR = "case_error"  # the repro is broken: ERROR
    COMPILER_BROKEN = "compiler_broken"  # the compiler under test does not load: ERROR
    HARNESS_ERROR = "harness_error"  # kregress could not measure: ERROR
    RAISED = "raised"  # the compiler or the kernel raised
    CRASH = "crash"  # the child died (a signal, an exit without a result)
    TIMEOUT = "timeout"  # killed after the case's timeout

    def __str__(self) -> str:
        return self.value


class ConfigStatus(str, Enum):
    OK = "ok"
    COMPILE_ERROR = "compile_error"
    SOURCE_ONLY = "source_only"  # lowered to source, which this machine could not build further

    def __str__(self) -> str:
        return self.value


@dataclass
class ConfigResult:
    """The outcome of compiling one config of one kernel for one target."""

    label: str
    options: dict[str, Any] = field(default_factory=dict)  # the config's kwargs, for `where` filters
    status: ConfigStatus = ConfigStatus.OK
    error_type: str | None = None
    message: str | None = None
    metrics: dict[str, int] = field(default_factory=dict)
    artifacts: dict[str, Any] = field(default_factory=dict)
    ir: dict[str, str] = field(default_factory=dict)  # stage -> file name in the job folder
    code: dict[str, str] = field(default_factory=dict)  # stage -> digest of the code (code_identity)
    # artifact property -> why it cannot be read here (a SKIP reason, never a silent None)
    unavailable: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ConfigResult:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        return cls(**{**values, "status": ConfigStatus(values.get("status", "ok"))})

    def as_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "status": str(self.status)}
