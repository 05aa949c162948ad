"""Devices of a GPU backend: one xdist worker per device, pinned to it; perf timed alone on its
device; and what the device is, so two nights on different hardware can be told apart."""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

from kregress.backends import BACKENDS
from kregress.paths import cache_root


def device_variable(backend: str) -> str | None:
    """The variable that pins a process to some devices of this backend; None on cpu."""
    return BACKENDS[backend].visible_devices


def probe_count(backend: str) -> int:
    """How many devices this machine has; 1 when no tool can tell."""
    tool = list(BACKENDS[backend].list_devices)
    if tool and shutil.which(tool[0]):
        listed = subprocess.run(tool, capture_output=True, text=True, check=False).stdout
        count = sum(1 for line in listed.splitlines() if line.startswith("GPU"))
        return max(count, 1)
    return 1


def visible(backend: str, env: Mapping[str, str], count: int) -> list[str]:
    """The devices this process may use: the visible-devices variable's list, else all probed."""
    variable = device_variable(backend)
    listed = [d.strip() for d in env.get(variable, "").split(",") if d.strip()] if variable else []
    return listed or [str(i) for i in range(max(count, 1))]


def auto_workers(backend: str, env: Mapping[str, str], count: int) -> int | None:
    """`-n auto` on a GPU backend: one worker per visible device (None: xdist's own default)."""
    return len(visible(backend, env, count)) if device_variable(backend) else None


def pinned_environment(
    backend: str, worker: str | None, env: Mapping[str, str], count: int
) -> dict[str, str]:
    """The variable that restricts worker `gwN` to one device: the N-th visible one, round robin."""
    variable = device_variable(backend)
    if variable is None or worker is None:
        return {}
    devices = visible(backend, env, count)
    index = int(worker.removeprefix("gw"))
    return {variable: devices[index % len(devices)]}


@contextlib.contextmanager
def device_lock(backend: str, env: Mapping[str, str], exclusive: bool) -> Iterator[None]:
    """Jobs on a device share it (numerics, loading binaries); a perf job has it alone while it is
    timed, whatever other workers were pinned to the same device. One lock file per device set."""
    variable = device_variable(backend)
    devices = env.get(variable, "") if variable else ""
    folder = cache_root() / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{backend}-{devices.replace(',', '_') or 'all'}.lock"
    with Path(path).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def describe(backend: str, env: Mapping[str, str]) -> dict[str, str]:
    """Model, driver and index of the device this process is pinned to (first visible one), as
    nvidia-smi tells; empty where no tool can."""
    declared = BACKENDS[backend]
    query = list(declared.query_devices)
    if not query or not declared.visible_devices or not shutil.which(query[0]):
        return {}
    devices = env.get(declared.visible_devices, "").split(",")[0].strip()
    if devices:
        query += [declared.select_device, devices]
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(query, capture_output=True, text=True, timeout=30, check=False)
        first = next((line for line in done.stdout.splitlines() if line.strip()), "")
        fields = [f.strip() for f in first.split(",")]
        if done.returncode == 0 and len(fields) == 4:
            return dict(zip(("index", "name", "driver", "uuid"), fields, strict=True))
    return {}


__all__ = [
    "auto_workers",
    "describe",
    "device_lock",
    "device_variable",
    "pinned_environment",
    "probe_count",
    "visible",
]
