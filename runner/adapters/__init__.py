"""One adapter per framework: compile a repro kernel for a target and report what was measured.

Adapters run inside the child process, in whatever environment holds the compiler under test.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class Unsupported(Exception):
    """This environment cannot build this target: the item is SKIPPED with this reason, never FAILED."""


class MeasurementError(Exception):
    """The kernel compiled but kregress could not read its figures: an ERROR of the harness."""


@dataclass
class ConfigResult:
    """The outcome of compiling one config of one kernel for one target."""

    label: str
    status: str = "ok"  # ok | compile_error
    error_type: str | None = None
    message: str | None = None
    metrics: dict[str, int] = field(default_factory=dict)
    artifacts: dict[str, Any] = field(default_factory=dict)
    ir: dict[str, str] = field(default_factory=dict)  # stage -> file name in the job folder
    seconds: float = 0.0


def config_label(config: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in config.items()) or "default"


def binary_kind(blob: bytes) -> str:
    """Name what a compiled binary is from its magic number, never from its file name."""
    if blob[:4] in (b"\x03\x02\x23\x07", b"\x07\x23\x02\x03"):
        return "spirv"
    if blob[:4] == b"\x7fELF":
        return "elf"
    return "unknown"


PTXAS_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
PTXAS_REGS = re.compile(r"Used (\d+) registers")


def ptxas_gpu_name(arch: str) -> str:
    """sm_90 and later compile as the arch-specific `a` variant, as Triton and nvcc do for sm_90a."""
    number = int(arch.removeprefix("sm_"))
    return f"sm_{number}a" if number >= 90 else f"sm_{number}"


def ptxas_figures(ptxas: str, ptx: str, arch: str) -> dict[str, int]:
    """Registers, stack and spills per thread as `ptxas -v` reports them for this PTX."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "kernel.ptx"
        src.write_text(ptx)
        done = subprocess.run(
            [ptxas, "-v", f"--gpu-name={ptxas_gpu_name(arch)}", str(src), "-o", str(Path(tmp) / "k.cubin")],
            capture_output=True,
            text=True,
            check=False,
        )
    report = done.stdout + done.stderr
    frame, regs = PTXAS_FRAME.search(report), PTXAS_REGS.search(report)
    if done.returncode != 0 or not frame or not regs:
        raise RuntimeError(f"{ptxas} -v failed (exit {done.returncode}): {report[-2000:]}")
    return {
        "registers": int(regs.group(1)),
        "stack_bytes": int(frame.group(1)),
        "spill_bytes": int(frame.group(2)),
        "scratch_bytes": int(frame.group(1)),
    }
