"""Devices of a GPU backend: one xdist worker per device, pinned to it; perf timed alone on its
device; and what the device is, so two nights on different hardware can be told apart."""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

from kregress.paths import cache_root

VISIBLE_DEVICES = {"cuda": "CUDA_VISIBLE_DEVICES", "hip": "HIP_VISIBLE_DEVICES", "xpu": "ZE_AFFINITY_MASK"}


def probe_count(backend: str) -> int:
    """How many devices this machine has; 1 when no tool can tell."""
    tool = {"cuda": ["nvidia-smi", "-L"], "hip": ["rocm-smi", "--showid"]}.get(backend)
    if tool and shutil.which(tool[0]):
        listed = subprocess.run(tool, capture_output=True, text=True, check=False).stdout
        count = sum(1 for line in listed.splitlines() if line.startswith("GPU"))
        return max(count, 1)
    return 1


def visible(backend: str, env: Mapping[str, str], count: int) -> list[str]:
    """The devices this process may use: the visible-devices variable's list, else all probed."""
    variable = VISIBLE_DEVICES.get(backend)
    listed = [d.strip() for d in env.get(variable, "").split(",") if d.strip()] if variable else []
    return listed or [str(i) for i in range(max(count, 1))]


def auto_workers(backend: str, env: Mapping[str, str], count: int) -> int | None:
    """`-n auto` on a GPU backend: one worker per visible device (None: xdist's own default)."""
    return len(visible(backend, env, count)) if backend in VISIBLE_DEVICES else None


def pinned_environment(
    backend: str, worker: str | None, env: Mapping[str, str], count: int
) -> dict[str, str]:
    """The variable that restricts worker `gwN` to one device: the N-th visible one, round robin."""
    variable = VISIBLE_DEVICES.get(backend)
    if variable is None or worker is None:
        return {}
    devices = visible(backend, env, count)
    index = int(worker.removeprefix("gw"))
    return {variable: devices[index % len(devices)]}


@contextlib.contextmanager
def device_lock(backend: str, env: Mapping[str, str], exclusive: bool) -> Iterator[None]:
    """Jobs on a device share it (numerics, loading binaries); a perf job has it alone while it is
    timed, whatever other workers were pinned to the same device. One lock file per device set."""
    variable = VISIBLE_DEVICES.get(backend)
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
    if backend != "cuda" or not shutil.which("nvidia-smi"):
        return {}
    devices = env.get(VISIBLE_DEVICES[backend], "").split(",")[0].strip()
    query = ["nvidia-smi", "--query-gpu=index,name,driver_version,uuid", "--format=csv,noheader"]
    if devices:
        query += ["-i", devices]
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(query, capture_output=True, text=True, timeout=30, check=False)
        first = next((line for line in done.stdout.splitlines() if line.strip()), "")
        fields = [f.strip() for f in first.split(",")]
        if done.returncode == 0 and len(fields) == 4:
            return dict(zip(("index", "name", "driver", "uuid"), fields, strict=True))
    return {}


__all__ = [
    "VISIBLE_DEVICES",
    "auto_workers",
    "describe",
    "device_lock",
    "pinned_environment",
    "probe_count",
    "visible",
]
