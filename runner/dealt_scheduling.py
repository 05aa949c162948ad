"""xdist's load scheduling, its first items dealt round the workers one at a time, and (on the cpu
backend) a case's items on one target kept together.

xdist starts each worker on a chunk of consecutive items (two at least), so with the perf jobs
first (kregress.ordering.handing_order) worker 0 got perf jobs 0 and 1, worker 1 perf jobs 2 and 3,
and half of them waited for a whole perf job before starting: the run's time doubled on one
GPU. Dealt like cards, worker i starts on item i and has item i + N next.

A case's expectations on one target mostly share one compile (`compiles` and `scratch-under-hw-limit`
judge the same build), which a worker runs once for all of them. Dealt one item at a time, two such
items went to two workers at once and both compiled it: scratch_overflow's five-minute dg2 build
ran twice side by side on a fresh machine. So on a backend without devices the items of one
(case, target) are handed out together, to one worker (kregress.ordering.longest_first keeps them
next to each other)."""

from __future__ import annotations

import re
from typing import Any

from xdist.scheduler import LoadScheduling

TARGET = re.compile(r"\[([^\[\]]+)\]$")


def share_group(nodeid: str) -> tuple[str, str]:
    """The case file and target of an item: items alike share their compiles."""
    path = nodeid.split("::", 1)[0]
    found = TARGET.search(nodeid)
    return path, found.group(1) if found else nodeid


class DealtScheduling(LoadScheduling):
    def __init__(self, config: Any, log: Any = None, *, together: bool = False) -> None:
        super().__init__(config, log)
        self.together = together  # hand out a (case, target)'s items as one

    def _send_tests(self, node: Any, num: int) -> None:
        if self.together and self.collection is not None and self.pending:
            group = share_group(self.collection[self.pending[0]])
            if num == 1:  # the rest of the first item's (case, target) comes with it
                while num < len(self.pending) and share_group(self.collection[self.pending[num]]) == group:
                    num += 1
        super()._send_tests(node, num)

    def schedule(self) -> None:
        if self.collection is not None or not self._check_nodes_have_same_collection():
            super().schedule()  # later calls, and a collection that differs, as xdist has them
            return
        self.collection = next(iter(self.node2collection.values()))
        self.pending[:] = range(len(self.collection))
        if not self.collection:
            return
        if self.maxschedchunk is None:
            self.maxschedchunk = len(self.collection)
        for _ in range(2):  # two each, as xdist: a worker runs an item once it knows the next one
            for node in self.nodes:
                self._send_tests(node, 1)
        if not self.pending:
            for node in self.nodes:
                node.shutdown()
