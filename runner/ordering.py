"""The order a run hands its items to the workers (xdist keeps each worker's order alike: the
durations are read once by the controller and sent to the workers)."""

from __future__ import annotations

import pytest

from kregress.case_item import CaseItem
from kregress.dealt_scheduling import share_group
from kregress.job_durations import expected_seconds


def longest_first(items: list[pytest.Item], known: dict[str, float]) -> list[pytest.Item]:
    """On the cpu backend: the items of one (case, target) side by side, as they share a compile
    (kregress.dealt_scheduling hands them to one worker), the groups longest first, so the few long
    compiles (minutes, on one core each) start while the many short items fill the other workers;
    ties keep collection order."""
    groups: dict[tuple[str, str], list[pytest.Item]] = {}
    for item in items:
        groups.setdefault(share_group(item.nodeid), []).append(item)

    def seconds(group: list[pytest.Item]) -> float:
        return sum(expected_seconds(i.nodeid, known) for i in group if isinstance(i, CaseItem))

    return [item for group in sorted(groups.values(), key=lambda g: -seconds(g)) for item in group]


def handing_order(item: pytest.Item, known: dict[str, float]) -> tuple[int, float]:
    """On a GPU backend the order jobs are handed out in. Perf jobs first, all at once: each waits
    for the device to be its own while it times, and a device job holding the device shared (a 20 s
    torch.compile check) keeps every waiting perf job, and through the turnstile every other device
    job, idle. Then the jobs that need no device (compiles for sm_80/sm_90), which keep the cores
    busy while the perf jobs prepare and time; the other device jobs last, when no perf job waits.
    Within each group, longest first as this machine last ran them (kregress.job_durations), and
    items never run yet after those, in collection order."""
    if not isinstance(item, CaseItem):
        return 3, 0.0
    if item.target.kind != "device":
        return 1, -expected_seconds(item.nodeid, known)
    return (0 if item.expectation.kind == "perf" else 2), -expected_seconds(item.nodeid, known)
