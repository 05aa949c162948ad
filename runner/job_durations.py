"""How long each item kept its worker busy the last time this machine ran it, per backend.

A GPU run hands its jobs out longest first, and which jobs are long is only known by running them
(a numerics check built on torch.compile takes 20 s, its neighbour 2 s). Like pytest's own cache of
last failures, this lives in the kregress cache of the machine; each run updates the items it ran,
and a new item has no entry until it has run once."""

from __future__ import annotations

import json
from pathlib import Path

from kregress.paths import cache_root, write_atomically


def durations_path(backend: str) -> Path:
    return cache_root() / "durations" / f"{backend}.json"


def last_durations(backend: str) -> dict[str, float]:
    """nodeid -> seconds; empty when this machine has not run the backend, or the file is unreadable
    (an order is only a hint: a broken file costs time, never a verdict)."""
    try:
        known = json.loads(durations_path(backend).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(known, dict):
        return {}
    return {k: float(v) for k, v in known.items() if isinstance(v, (int, float))}


def remember_durations(backend: str, seconds: dict[str, float]) -> None:
    """This run's items replace their old entries; items it did not run keep theirs."""
    if not seconds:
        return
    path = durations_path(backend)
    path.parent.mkdir(parents=True, exist_ok=True)
    merged = last_durations(backend) | {k: round(v, 3) for k, v in seconds.items()}
    write_atomically(path, json.dumps(merged, indent=0, sort_keys=True))


WATCHDOG_FACTOR = 5.0  # a device job past this many times its usual duration is stopped
WATCHDOG_FLOOR = 30.0  # ... but never before this many seconds (nor one never timed here)


def watchdog_timeout(timeout: float, known: dict[str, float], nodeid: str) -> tuple[float, str]:
    """How long a device job may run, and why when that is not the case's `timeout`: past
    WATCHDOG_FACTOR times its item's usual duration on this machine, never under WATCHDOG_FLOOR
    (an item never timed here has no usual duration: the floor), so a spinning kernel holds the
    device and its lock for seconds, not the case's timeout. On a machine that has timed nothing
    yet (its first run): the case's timeout."""
    if not known:
        return timeout, ""
    usual = known.get(nodeid)
    bound = max(WATCHDOG_FACTOR * (usual or 0.0), WATCHDOG_FLOOR)
    if bound >= timeout:
        return timeout, ""
    if usual is None:
        return bound, f"never timed on this machine: {WATCHDOG_FLOOR:g} s"
    return (
        bound,
        f"{WATCHDOG_FACTOR:g}x its usual {usual:.1f} s on this machine, at least {WATCHDOG_FLOOR:g} s",
    )


__all__ = ["durations_path", "last_durations", "remember_durations", "watchdog_timeout"]
