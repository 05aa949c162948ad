"""On a machine that never ran the corpus, the cpu backend starts the longest items first, from the
durations kregress ships (the project's own last run), and from the machine's own once it has them:
a five-minute compile that starts last holds the whole run up by five minutes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO, package_with
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


def test_a_new_machine_orders_by_the_shipped_durations(tmp_path: Path) -> None:
    plain = collected(tmp_path / "none", *SELECTION, env={"PYTHONPATH": ""})
    last = plain[-1]  # in collection order, the last item: shipped as the longest, it goes first
    site = package_with(tmp_path, "durations/cpu_order_test.json", "{}")  # a copy to change
    (site / "kregress" / "durations" / "cpu.json").write_text(json.dumps({item_key(last): 999.0}))
    shipped_first = collected(tmp_path / "empty", *SELECTION, env={"PYTHONPATH": str(site)})
    assert shipped_first[0] == last and sorted(shipped_first) == sorted(plain)
    assert shipped_first[1:] == [i for i in plain if i != last]  # ties: collection order


def test_the_machines_own_durations_take_over(tmp_path: Path) -> None:
    plain = collected(tmp_path / "none", *SELECTION)
    (tmp_path / "own" / "durations").mkdir(parents=True)
    second = plain[1]
    (tmp_path / "own" / "durations" / "cpu.json").write_text(json.dumps({second: 10_000.0}))
    assert collected(tmp_path / "own", *SELECTION)[0] == second


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
