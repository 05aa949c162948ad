"""`kregress history`: the SQLite history of runs: add result files, list runs (`fetch`, which reads
the previous run's through GitHub, is added by kregress.bisect.github.history_fetch)."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from kregress.errors import ExitCode
from kregress.history import default_path, recent_runs, store
from kregress.results import ResultsError, load_results, merge


def history_file(args: argparse.Namespace) -> Path:
    return args.history or default_path()


def add_history_option(parser: argparse.ArgumentParser) -> None:
    """--history, for every command that reads or writes the history (`report` too)."""
    parser.add_argument("--history", type=Path, help="history file (default: in the user cache dir)")


def command_history_add(args: argparse.Namespace) -> ExitCode:
    """Store result files: each as a run, or with --merge all of them as one run."""
    try:
        documents = [load_results(path) for path in args.results]
    except ResultsError as exc:
        print(f"kregress history: {exc}", file=sys.stderr)
        return ExitCode.INVALID_FILE
    path = history_file(args)
    if args.merge:
        batches = [(merge(documents), ", ".join(map(str, args.results)))]
    else:
        batches = [(document, str(source)) for document, source in zip(documents, args.results, strict=True)]
    for document, source in batches:
        run_id = store(path, document, source=source)
        print(f"stored run {run_id} ({len(document.items)} items) from {source} in {path}")
    return ExitCode.OK


def command_history_runs(args: argparse.Namespace) -> ExitCode:
    for run in recent_runs(history_file(args), args.limit):
        counts = Counter(item.outcome.value for item in run.items)
        shown = ", ".join(f"{n} {o}" for o, n in sorted(counts.items()))
        started = time.strftime("%Y-%m-%d %H:%M", time.gmtime(run.started or 0))
        print(f"{run.id:5}  {started}  {run.runner or '?':14} {shown}")
    return ExitCode.OK


def register(commands: argparse._SubParsersAction) -> None:
    history = commands.add_parser(
        "history",
        help="the SQLite history of runs: add result files, list runs",
        description="Runs are stored by `pytest --history [PATH]` or `kregress history add`; "
        "default file: ~/.cache/kregress/history.sqlite (KREGRESS_CACHE_DIR moves it).",
    )
    history_commands = history.add_subparsers(dest="history_command", required=True)
    # where another package adds a history subcommand (kregress.bisect.github.history_fetch: fetch)
    history.set_defaults(history_commands=history_commands)
    add = history_commands.add_parser("add", help="store --kregress-json files")
    add.add_argument("results", nargs="+", type=Path, help="results files")
    add.add_argument("--merge", action="store_true", help="store the files as one run (one per runner)")
    add_history_option(add)
    add.set_defaults(run=command_history_add)
    runs = history_commands.add_parser("runs", help="list the newest runs")
    runs.add_argument("--limit", type=int, default=20, help="how many (default 20)")
    add_history_option(runs)
    runs.set_defaults(run=command_history_runs)
