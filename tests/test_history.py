"""The SQLite history: runs stored and read back whole, the schema versioned, concurrent writers
safe, and `pytest --history` storing a real corpus run."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from conftest import run_corpus
from kregress.cli import main
from kregress.history import SCHEMA, SCHEMA_VERSION, HistoryError, recent_runs, store
from kregress.record import RunResults
from kregress.results import load_results, merge

RESULTS = Path(__file__).parent / "results"


def test_a_run_reads_back_whole(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    merged = merge([load_results(RESULTS / n) for n in ("tonight-cpu.json", "tonight-cpu.rerun.json")])
    store(path, load_results(RESULTS / "night-1.json"))
    store(path, merged, source="merged")
    first, second = recent_runs(path)
    assert first.started == 1000.0 and first.runner == "cpu" and first.corpus_sha == "0" * 40
    assert second.toolchain == {"triton": "3.4.0, 3.6.0"}  # xpu items ran another build
    original = {(i.case, i.expectation, i.target): i for i in merged.items}
    for item in second.items:
        source = original[(item.case, item.expectation, item.target)]
        for field in ("outcome", "failure_kind", "message", "measured", "limit", "toolchain", "upstream"):
            assert getattr(item, field) == getattr(source, field), field
    grouped = next(i for i in second.items if i.case == "grouped_reduction")
    assert grouped.attempts == ["FAIL", "PASS"]


def test_the_schema_is_versioned_and_a_newer_one_refused(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    store(path, load_results(RESULTS / "night-1.json"))
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(HistoryError, match="written by a newer kregress"):
        recent_runs(path)


LATER_COLUMNS = ("reproduce TEXT", "device TEXT", "toolchain_spec TEXT", "record TEXT", "run_ids TEXT")


def test_a_schema_1_history_is_migrated_in_place_and_keeps_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    version_1 = "\n".join(line for line in SCHEMA.splitlines() if not line.strip().startswith(LATER_COLUMNS))
    with sqlite3.connect(path) as connection:
        for statement in version_1.split(";\n"):
            if statement.strip():
                connection.execute(statement)
        connection.execute("PRAGMA user_version = 1")
        connection.execute("INSERT INTO runs (id, started, stored) VALUES (1, 1.0, 1.0)")
        columns = "run_id, case_id, expectation, target, outcome"
        connection.execute(f"INSERT INTO items ({columns}) VALUES (1, 'old', 'e', 't', 'PASS')")
    night = load_results(RESULTS / "night-1.json").model_dump(mode="json", exclude_unset=True)
    for item in night["items"]:
        item["reproduce"] = "control"
        item["device"] = {"index": "0", "name": "NVIDIA H200"}
        item["toolchain_spec"] = "tinycc==0.3"
    store(path, RunResults.model_validate(night))
    old, new = recent_runs(path)
    assert [(i.case, i.outcome, i.reproduce) for i in old.items] == [("old", "PASS", None)]
    assert {i.reproduce for i in new.items} == {"control"}
    assert {i.device["name"] for i in new.items if i.device} == {"NVIDIA H200"}
    assert {i.toolchain_spec for i in new.items} == {"tinycc==0.3"}  # what a bisect starts from
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5


def test_foreign_files_are_refused_naming_them(tmp_path: Path, capsys) -> None:
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(HistoryError, match="not a kregress history"):
        store(other, load_results(RESULTS / "night-1.json"))
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database" * 100)
    assert main(["report", "--history", str(garbage)]) == 2
    assert str(garbage) in capsys.readouterr().err
    assert main(["report", "--history", str(tmp_path / "none.sqlite")]) == 2
    assert "no history yet" in capsys.readouterr().err


def write_runs(path: str, writer: int, runs: int) -> None:
    for run in range(runs):
        items = [{"case": f"case{i}", "expectation": "numerics", "target": "cpu:interpreter",
                  "outcome": "PASS" if (i + run) % 3 else "FAIL", "measured": {"w": writer}}
                 for i in range(50)]  # fmt: skip
        run_document = {"kregress": 1, "started": writer * 1000 + run, "runner": f"w{writer}", "items": items}
        store(Path(path), RunResults.model_validate(run_document))


def test_concurrent_writers_never_corrupt_it(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=write_runs, args=(str(path), w, 10)) for w in range(4)]
    for process in writers:
        process.start()
    for process in writers:
        process.join(timeout=120)
        assert process.exitcode == 0
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert connection.execute("SELECT count(*) FROM runs").fetchone()[0] == 40
        assert connection.execute("SELECT count(*) FROM items").fetchone()[0] == 2000
        per_run = connection.execute("SELECT count(*) FROM items GROUP BY run_id").fetchall()
        assert {n for (n,) in per_run} == {50}  # no run half-written


def test_pytest_history_stores_each_run(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    args = ("--target", "cuda:sm_90", "-n", "2", "--history", str(path))
    for attempt in range(2):
        run = run_corpus(tmp_path / f"run{attempt}", "kinds/vector_add", args=args)
        assert run.returncode == 0, run.output[-2000:]
        assert "kregress results written to" in run.output and str(path) in run.output
    first, second = recent_runs(path)
    assert len(second.items) == len(run.document["items"]) > 0
    resource = next(i for i in second.items if i.kind == "resource")
    assert resource.limit == 232448 and resource.measured and resource.measured["shared_bytes"]
    assert isinstance(second.toolchain, dict) and second.toolchain["triton"] and second.runner
    assert first.started is not None and second.started is not None and first.started < second.started


def test_history_command_adds_files_as_runs_or_one_merged_run(tmp_path: Path, capsys) -> None:
    path = str(tmp_path / "h.sqlite")
    tonight = [str(RESULTS / n) for n in ("tonight-cpu.json", "tonight-cuda-h100.json")]
    assert main(["history", "add", str(RESULTS / "night-1.json"), "--history", path]) == 0
    assert main(["history", "add", "--merge", *tonight, "--history", path]) == 0
    assert main(["history", "runs", "--history", path]) == 0
    listed = capsys.readouterr().out.strip().splitlines()[-2:]
    assert "cpu " in listed[0] and "cpu, cuda-h100" in listed[1]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"items": []}))
    assert main(["history", "add", str(bad), "--history", path]) == 2
