"""On a machine that never ran the corpus, the cpu backend starts the longest items first, from the
durations kregress ships (the project's own last run), and from the machine's own once it has them:
a five-minute compile that starts last holds the whole run up by five minutes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO, package_with
from kregress.dealt_scheduling import share_group
from kregress.job_durations import expected_seconds, item_key, shipped_durations

SELECTION = ("-k", "flip_default_dim or cas_loop_int64", "--target", "cuda:sm_90", "--target", "cuda:sm_80")


def collected(cache: Path, *args: str, env: dict[str, str] | None = None) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "--backend", "cpu",
         "--collect-only", "-q", *args],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "KREGRESS_CACHE_DIR": str(cache), **(env or {})},
    )  # fmt: skip
    ids = [line.strip() for line in done.stdout.splitlines() if "::" in line]
    assert ids, done.stdout[-2000:] + done.stderr[-2000:]
    return ids


def test_an_item_is_known_by_its_node_id_or_by_case_and_item() -> None:
    nodeid = "corpus/flip_default_dim/case.toml::compiles-default-dim[cuda:sm_90]"
    assert item_key(nodeid) == "flip_default_dim::compiles-default-dim[cuda:sm_90]"
    assert item_key(f"/elsewhere/{nodeid}") == item_key(nodeid)  # any checkout, any rootdir
    assert expected_seconds(nodeid, {item_key(nodeid): 3.0}) == 3.0
    assert expected_seconds(nodeid, {item_key(nodeid): 3.0, nodeid: 5.0}) == 5.0  # the machine's own
    assert expected_seconds(nodeid, {}) == 0.0


def test_the_shipped_order_covers_the_corpus_on_the_cpu_backend() -> None:
    shipped = shipped_durations("cpu")
    ids = {item_key(i) for i in collected(Path("/nonexistent-cache"))}
    missing = ids - set(shipped)
    assert len(missing) <= len(ids) // 10, f"{len(missing)} of {len(ids)} items have no shipped duration"
    assert max(shipped, key=shipped.__getitem__).startswith("scratch_overflow::")  # its dg2 compile


def with_shipped(tmp_path: Path, durations: dict[str, float]) -> dict[str, str]:
    """The environment of a run whose kregress ships `durations` for the cpu backend."""
    site = package_with(tmp_path, "durations/cpu_order_test.json", "{}")  # a copy to change
    (site / "kregress" / "durations" / "cpu.json").write_text(json.dumps(durations))
    return {"PYTHONPATH": str(site)}


def groups(ids: list[str]) -> list[tuple[str, str]]:
    """The (case, target) of each item, in order, runs of one counted once."""
    found: list[tuple[str, str]] = []
    for nodeid in ids:
        group = share_group(nodeid)
        if not found or found[-1] != group:
            found.append(group)
    return found


def test_a_new_machine_orders_by_the_shipped_durations(tmp_path: Path) -> None:
    """With nothing shipped: collection order, a case's items on one target side by side (they share
    a compile). With a shipped duration: that item's (case, target) goes first."""
    plain = collected(tmp_path / "none", *SELECTION, env=with_shipped(tmp_path / "a", {}))
    assert len(groups(plain)) == len(set(groups(plain))), plain  # each (case, target) in one run
    last = plain[-1]
    shipped = collected(
        tmp_path / "empty", *SELECTION, env=with_shipped(tmp_path / "b", {item_key(last): 999.0})
    )
    first = [i for i in plain if share_group(i) == share_group(last)]
    assert shipped[: len(first)] == first and sorted(shipped) == sorted(plain)
    assert shipped[len(first) :] == [i for i in plain if i not in first]  # ties: collection order


def test_the_machines_own_durations_take_over(tmp_path: Path) -> None:
    env = with_shipped(tmp_path / "a", {})
    plain = collected(tmp_path / "none", *SELECTION, env=env)
    (tmp_path / "own" / "durations").mkdir(parents=True)
    last = plain[-1]
    (tmp_path / "own" / "durations" / "cpu.json").write_text(json.dumps({last: 10_000.0}))
    assert share_group(collected(tmp_path / "own", *SELECTION, env=env)[0]) == share_group(last)


def test_a_cpu_run_remembers_how_long_each_item_took(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "--backend", "cpu",
         "--target", "cuda:sm_90", "-k", "cas_loop_int64 and compiles", "-q"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "KREGRESS_CACHE_DIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    remembered = json.loads((tmp_path / "durations" / "cpu.json").read_text())
    assert sorted(map(item_key, remembered)) == [
        "cas_loop_int64::compiles-i32[cuda:sm_90]", "cas_loop_int64::compiles-i64[cuda:sm_90]",
    ]  # fmt: skip


def test_a_cases_items_on_one_target_go_to_one_worker(tmp_path: Path) -> None:
    """They share a compile: on two workers at once it was built twice (scratch_overflow's dg2
    kernel, five minutes each). Dealt as a group, each (case, target) runs on one worker only."""
    selection = ("-k", "flip_default_dim or amd_select_base_pointer", "--target", "cuda:sm_90",
                 "--target", "hip:gfx942")  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "--backend", "cpu",
         *selection, "-n", "2", "-v"],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "KREGRESS_CACHE_DIR": str(tmp_path)},
    )  # fmt: skip
    workers: dict[tuple[str, str], set[str]] = {}
    for line in done.stdout.splitlines():
        found = re.match(r"\[(gw\d)\] \[[ \d%]+\] \w+ (\S+)", line)
        if found:
            workers.setdefault(share_group(found.group(2)), set()).add(found.group(1))
    assert len(workers) >= 4, done.stdout[-3000:]
    assert all(len(ran_on) == 1 for ran_on in workers.values()), workers
    assert set.union(*workers.values()) == {"gw0", "gw1"}  # and both workers had work
