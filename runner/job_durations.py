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


__all__ = ["durations_path", "last_durations", "remember_durations"]
