"""Devices of a GPU backend: one xdist worker per device, pinned to it; perf timed alone on its
device; and what the device is, so two nights on different hardware can be told apart."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from typing import IO

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


MAX_WORKERS_PER_DEVICE = 16  # perf jobs wait on the device while the others compile (one H100, 16 cores)


def auto_workers(
    backend: str, env: Mapping[str, str], count: int, per_device: int | None = None, cores: int | None = None
) -> int | None:
    """`-n auto` on a GPU backend: `per_device` workers on each visible device, by default as many
    as the cores allow, up to 16: most of a job's time is CPU (compiles, torch.compile, imports) and
    the device lock keeps timing alone, so the workers of one device overlap their compiles with
    its use (None: xdist's own default, a worker per core)."""
    if not device_variable(backend):
        return None
    devices = len(visible(backend, env, count))
    if per_device is None:
        per_device = max(1, min(MAX_WORKERS_PER_DEVICE, (cores or os.cpu_count() or 1) // devices))
    return devices * per_device


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


DEVICE_LISTED = "KREGRESS_DEVICE_LISTED"  # set where the backend's tool (nvidia-smi) lists the device
PRIORITY_S = 30.0  # how long a perf job keeps new shared users out while it waits for the device


def alone_within(device: IO[str], seconds: float) -> bool:
    """Whether the device could be had alone within `seconds` (new shared users wait meanwhile).
    After that the priority is given up: one shared job that hangs (a kernel that never ends, until
    its timeout) must not keep every other device job waiting too."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(device, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)


@contextlib.contextmanager
def device_lock(
    backend: str, env: Mapping[str, str], exclusive: bool, priority_s: float = PRIORITY_S
) -> Iterator[None]:
    """Jobs on a device share it (numerics, loading binaries); a perf job has it alone while it is
    timed, whatever other workers were pinned to the same device. One lock file per device set.

    flock gives a waiting exclusive request no priority over new shared ones, so with several
    workers on a device their numerics jobs could keep a perf job from ever timing. A second
    file is the turnstile: a perf job holds it while it waits for the device, and every new shared
    holder passes through it first, so none overtakes a perf job that is already waiting, for up to
    `priority_s`."""
    variable = device_variable(backend)
    devices = env.get(variable, "") if variable else ""
    folder = cache_root() / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{backend}-{devices.replace(',', '_') or 'all'}.lock"
    with path.open("a") as device, path.with_suffix(".turnstile").open("a") as turnstile:
        fcntl.flock(turnstile, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        got = True
        try:
            if exclusive:
                got = alone_within(device, priority_s)
            else:
                fcntl.flock(device, fcntl.LOCK_SH)
        finally:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        if not got:  # priority given up: wait as everyone else does
            fcntl.flock(device, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(device, fcntl.LOCK_UN)


def device_arch(backend: str) -> str | None:
    """The architecture of this machine's first `backend` device as the matrix names it (sm_90,
    gfx942), as torch sees it; None where there is none or torch cannot tell."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    if backend == "cuda" and torch.version.cuda:
        major, minor = torch.cuda.get_device_capability(0)
        return f"sm_{major}{minor}"
    if backend == "hip" and torch.version.hip:
        return str(torch.cuda.get_device_properties(0).gcnArchName).split(":")[0]
    return None


def device_compile_arch(backend: str, env: Mapping[str, str]) -> str | None:
    """The arch the matrix's compile targets name (sm_100) of the device this process is pinned to,
    as the vendor's tool says it: no GPU runtime is started in this process. None where no tool can."""
    declared = BACKENDS[backend]
    query = list(declared.query_arch)
    if not query or not declared.visible_devices or not shutil.which(query[0]):
        return None
    devices = env.get(declared.visible_devices, "").split(",")[0].strip()
    if devices:
        query += [declared.select_device, devices]
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(query, capture_output=True, text=True, timeout=30, check=False)
        first = next((line.strip() for line in done.stdout.splitlines() if line.strip()), "")
        major, dot, minor = first.partition(".")
        if done.returncode == 0 and dot and major.isdigit() and minor.isdigit():
            return f"sm_{major}{minor}"
    return None


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
    "DEVICE_LISTED",
    "auto_workers",
    "describe",
    "device_arch",
    "device_compile_arch",
    "device_lock",
    "device_variable",
    "pinned_environment",
    "probe_count",
    "visible",
]
