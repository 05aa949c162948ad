"""xdist's load scheduling, its first items dealt round the workers one at a time.

xdist starts each worker on a chunk of consecutive items (two at least), so with the perf jobs
first (kregress.ordering.handing_order) worker 0 got perf jobs 0 and 1, worker 1 perf jobs 2 and 3,
and half of them waited for a whole perf job before starting: the run's time doubled on one
GPU. Dealt like cards, worker i starts on item i and has item i + N next."""

from __future__ import annotations

from xdist.scheduler import LoadScheduling


class DealtScheduling(LoadScheduling):
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
