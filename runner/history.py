"""Every run kept in one SQLite file: run metadata and each item's outcome and measured values.

SQLite because a history is read by whoever has the file (no server), and because its locking
makes concurrent writers safe: several pytest sessions or jobs merging write each run in one
IMMEDIATE transaction, in WAL mode so readers never block them. The schema is versioned with
`PRAGMA user_version`; a file from a newer kregress is refused, not rewritten.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kregress.errors import KregressError
from kregress.judge import Outcome
from kregress.paths import cache_root
from kregress.record import ItemRecord, RunResults
from kregress.results import version_key

# 2: items.reproduce, items.device; 3: items.toolchain_spec; 4: items.record; 5: runs.run_ids
SCHEMA_VERSION = 5
ITEM_COLUMNS = 20
SCHEMA = """
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    started REAL NOT NULL,          -- when the run began (seconds since the epoch)
    stored REAL NOT NULL,           -- when it was written here
    runner TEXT,                    -- the machine or CI runner(s) that judged it
    corpus_sha TEXT,                -- the corpus commit
    backend TEXT,
    targets TEXT,                   -- JSON list, or null for the backend's targets
    toolchain TEXT,                 -- JSON object: versions seen, e.g. {"triton": "3.4.0, 3.6.0"}
    run_ids TEXT,                   -- JSON list: the pytest runs it holds (what compare leaves out)
    source TEXT                     -- the results file it came from, if any
);
CREATE TABLE items (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    case_id TEXT NOT NULL,
    expectation TEXT NOT NULL,
    target TEXT NOT NULL,
    kind TEXT,
    outcome TEXT NOT NULL,
    failure_kind TEXT,
    message TEXT,
    measured TEXT,                  -- JSON
    limit_value TEXT,               -- JSON
    toolchain TEXT,                 -- JSON
    framework TEXT,
    upstream TEXT,
    fix TEXT,
    attempts TEXT,                  -- JSON list when judged more than once in the run
    duration REAL,
    reproduce TEXT,                 -- how the case is shown to catch its bug: reproduced+control, guard
    device TEXT,                    -- JSON: the GPU of a device target (index, name, driver, uuid)
    toolchain_spec TEXT,            -- the --toolchain it was judged under (what a bisect starts from)
    record TEXT,                    -- JSON: the whole record (kregress.record); the columns serve queries
    PRIMARY KEY (run_id, case_id, expectation, target)
);
CREATE INDEX items_by_key ON items (case_id, expectation, target);
"""


class HistoryError(KregressError):
    """The history file cannot be used: names the file and why."""


def default_path() -> Path:
    return cache_root() / "history.sqlite"


@contextmanager
def connect(path: Path) -> Iterator[sqlite3.Connection]:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=60, isolation_level=None)
    try:
        connection.execute("PRAGMA busy_timeout = 60000")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA foreign_keys = ON")
        ensure_schema(connection, path)
        yield connection
    except sqlite3.DatabaseError as exc:
        raise HistoryError(f"{path}: {exc}") from None
    finally:
        connection.close()


def ensure_schema(connection: sqlite3.Connection, path: Path) -> None:
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        return
    if version > SCHEMA_VERSION:
        raise HistoryError(
            f"{path}: history schema {version} was written by a newer kregress "
            f"(this one reads {SCHEMA_VERSION})"
        )
    connection.execute("BEGIN IMMEDIATE")
    try:  # another writer may have created or migrated it while this one waited for the lock
        found = connection.execute("PRAGMA user_version").fetchone()[0]
        if found == 0:
            if connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise HistoryError(f"{path}: not a kregress history (tables without a schema version)")
            for statement in SCHEMA.split(";\n"):  # not executescript: it would commit first
                if statement.strip():
                    connection.execute(statement)
        if found == 1:
            connection.execute("ALTER TABLE items ADD COLUMN reproduce TEXT")
            connection.execute("ALTER TABLE items ADD COLUMN device TEXT")
        if 0 < found < 3:  # a writer that waited may find it migrated already: nothing to add
            connection.execute("ALTER TABLE items ADD COLUMN toolchain_spec TEXT")
        if 0 < found < 4:
            connection.execute("ALTER TABLE items ADD COLUMN record TEXT")
        if 0 < found < 5:
            connection.execute("ALTER TABLE runs ADD COLUMN run_ids TEXT")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def store(path: Path, document: RunResults, source: str | None = None) -> int:
    """Write one run (a results document, or a merged one) and return its id."""
    jobs = document.jobs()
    runners = sorted({job.runner for job in jobs if job.runner})
    seen: dict[str, set[str]] = {}
    for item in document.items:
        for name, version in (item.toolchain or {}).items():
            if name != "python":
                seen.setdefault(name, set()).add(str(version))
    versions = {name: ", ".join(sorted(found, key=version_key)) for name, found in sorted(seen.items())}
    run_row = (
        document.started or time.time(),
        time.time(),
        ", ".join(runners) or None,
        next((job.corpus_sha for job in jobs if job.corpus_sha), None),
        ", ".join(sorted({job.backend for job in jobs if job.backend})) or None,
        dumps(next((job.targets for job in jobs if job.targets), None)),
        dumps(versions),
        source,
        dumps(sorted(document.identities())),
    )
    with connect(path) as connection:
        connection.execute("BEGIN IMMEDIATE")
        try:
            cursor = connection.execute(
                "INSERT INTO runs (started, stored, runner, corpus_sha, backend, targets, toolchain, source,"
                " run_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                run_row,
            )
            run_id = int(cursor.lastrowid or 0)
            connection.executemany(
                f"INSERT OR REPLACE INTO items VALUES ({', '.join('?' * ITEM_COLUMNS)})",
                [item_row(run_id, item) for item in document.items],
            )
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
    return run_id


def item_row(run_id: int, item: ItemRecord) -> tuple:
    """The columns a query reads, and the record whole (what is read back)."""
    return (
        run_id, item.case, item.expectation, item.target, item.kind, item.outcome.value,
        item.failure_kind, item.message, dumps(item.measured), dumps(item.limit),
        dumps(item.toolchain), item.framework, item.upstream, item.fix,
        dumps(item.attempts), item.duration, item.reproduce, dumps(item.device),
        item.toolchain_spec, dumps(item.as_json()),
    )  # fmt: skip


def dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, default=str)


def loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def recent_runs(path: Path, limit: int = 20) -> list[RunResults]:
    """The newest `limit` runs, oldest first, each as a results document (what compare reads)."""
    if not path.exists():
        raise HistoryError(
            f"{path}: no history yet (store runs with `pytest --history` or `kregress history add`)"
        )
    with connect(path) as connection:
        connection.row_factory = sqlite3.Row
        runs = connection.execute(
            "SELECT * FROM runs ORDER BY started DESC, id DESC LIMIT ?", (limit,)
        ).fetchall()
        documents = []
        for run in reversed(runs):
            rows = connection.execute(
                "SELECT * FROM items WHERE run_id = ? ORDER BY case_id, expectation, target", (run["id"],)
            ).fetchall()
            documents.append(RunResults(
                id=run["id"], started=run["started"], runner=run["runner"], corpus_sha=run["corpus_sha"],
                backend=run["backend"], targets=loads(run["targets"]), toolchain=loads(run["toolchain"]),
                source=run["source"], run_ids=loads(run["run_ids"]), items=[item_of(row) for row in rows],
            ))  # fmt: skip
    return documents


def item_of(row: sqlite3.Row) -> ItemRecord:
    """The record as it was stored whole; a row from before schema 4 from its columns."""
    if row["record"]:
        return ItemRecord.model_validate_json(row["record"])
    return ItemRecord(
        case=row["case_id"], expectation=row["expectation"], target=row["target"], kind=row["kind"],
        outcome=row["outcome"], failure_kind=row["failure_kind"], message=row["message"],
        measured=loads(row["measured"]), limit=loads(row["limit_value"]), toolchain=loads(row["toolchain"]),
        framework=row["framework"], upstream=row["upstream"], fix=row["fix"], duration=row["duration"],
        reproduce=row["reproduce"], device=loads(row["device"]), toolchain_spec=row["toolchain_spec"],
        **({"attempts": loads(row["attempts"])} if row["attempts"] else {}),
    )  # fmt: skip


def flake_history(path: Path, case: str, expectation: str | None, target: str | None) -> tuple[int, int]:
    """(runs that disagreed, runs) of a case's items in the history: every attempt of an item is
    a run; within one run, attempts against the item's majority disagree; across runs, outcomes
    under the same toolchain against that toolchain's majority disagree (a nightly that flipped with
    no compiler change); an UNSTABLE verdict is a disagreeing run. (0, 0) without a history."""
    if not path.exists():
        return 0, 0
    query = "SELECT outcome, attempts, toolchain, expectation, target FROM items WHERE case_id = ?"
    values: list[str] = [case]
    if expectation:
        query += " AND expectation = ?"
        values.append(expectation)
    if target:
        query += " AND target = ?"
        values.append(target)
    with connect(path) as connection:
        rows = connection.execute(query, values).fetchall()
    groups: dict[tuple[str, str, str], list[str]] = {}
    disagreed = runs = 0
    for outcome, attempts, toolchain, item_expectation, item_target in rows:
        seen = [str(a) for a in (loads(attempts) or [outcome])]
        runs += len(seen)
        disagreed += against_majority(seen)
        if outcome == Outcome.UNSTABLE:
            disagreed += 1
        groups.setdefault((item_expectation, item_target, toolchain or ""), []).append(outcome)
    disagreed += sum(against_majority(outcomes) for outcomes in groups.values())
    return min(disagreed, runs), runs


def against_majority(outcomes: list[str]) -> int:
    """How many of these outcomes differ from the most common one."""
    return len(outcomes) - max(outcomes.count(o) for o in set(outcomes))
