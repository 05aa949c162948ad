"""How long each item kept its worker busy the last time this machine ran it, per backend.

A run hands its jobs out longest first, and which jobs are long is only known by running them (a
numerics check built on torch.compile takes 20 s, its neighbour 2 s; scratch_overflow's dg2 compile
five minutes). Like pytest's own cache of last failures, this lives in the kregress cache of the
machine; each run updates the items it ran. A machine that never ran a backend orders by the
durations kregress ships for it (durations/BACKEND.json, from the project's own runs, keyed by
case::item so that any checkout's node ids match), and its own from then on."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

from kregress.paths import cache_root, write_atomically

ITEM_KEY = re.compile(r"([^/]+)/case\.toml::(.+)$")


def item_key(nodeid: str) -> str:
    """case::expectation[target] of a node id (corpus/CASE/case.toml::expectation[target])."""
    found = ITEM_KEY.search(nodeid)
    return f"{found.group(1)}::{found.group(2)}" if found else nodeid


def shipped_durations(backend: str) -> dict[str, float]:
    """case::item -> seconds from the project's own last run of the backend; empty where none ships."""
    try:
        known = json.loads((resources.files("kregress") / "durations" / f"{backend}.json").read_text())
    except (OSError, ValueError):
        return {}
    return (
        {k: float(v) for k, v in known.items() if isinstance(v, (int, float))}
        if isinstance(known, dict)
        else {}
    )


def ordering_durations(backend: str) -> dict[str, float]:
    """What orders a run: the shipped durations (case::item keys) under this machine's own (node
    ids), so an item this machine has timed goes by its own time."""
    return {**shipped_durations(backend), **last_durations(backend)}


def expected_seconds(nodeid: str, known: dict[str, float]) -> float:
    """An item's duration by its node id, else by its case::item key (the shipped ones), else 0."""
    return known.get(nodeid, known.get(item_key(nodeid), 0.0))


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


__all__ = [
    "durations_path", "expected_seconds", "item_key", "last_durations", "ordering_durations",
    "remember_durations", "shipped_durations", "watchdog_timeout",
]  # fmt: skip
