"""`kregress compare`: what is new in this run against earlier ones, and what to bisect."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kregress.errors import ExitCode
from kregress.history import recent_runs
from kregress.matrix import load_matrix
from kregress.paths import write_output
from kregress.results import (
    ResultsError,
    bisect_requests,
    compare,
    load_results,
    merge,
    package_of,
    render_changes,
)


def command_compare(args: argparse.Namespace) -> ExitCode:
    """Merge this run's result files, compare with earlier runs, say what is new."""
    try:
        current = merge([load_results(path) for path in args.results])
        previous = [merge([load_results(path)]) for path in args.previous]
    except ResultsError as exc:
        print(f"kregress compare: {exc}", file=sys.stderr)
        return ExitCode.INVALID_FILE
    if args.history:
        if args.history.exists():
            previous += recent_runs(args.history, args.window)
        else:
            print(f"kregress compare: {args.history} does not exist yet: no earlier runs", file=sys.stderr)
    itself = [d for d in previous if current.identities() & d.identities()]
    if itself:  # stored before it is compared (pytest --history): never its own past
        print(f"kregress compare: {len(itself)} earlier run(s) are this run itself, stored already: "
              "left out", file=sys.stderr)  # fmt: skip
    changes = compare(current, previous, window=args.window)
    markdown = render_changes(changes)
    print(markdown)
    if args.merged:
        merged = {"kregress": current.kregress, **current.model_dump(mode="json", exclude_unset=True)}
        write_output(args.merged, json.dumps(merged, indent=2))  # a results file `history add` reads
    if args.json:
        write_output(args.json, json.dumps(changes.as_dict(), indent=2))
    if args.markdown:
        write_output(args.markdown, markdown + "\n")
    if args.bisect_requests:
        matrix = load_matrix(args.matrix)
        packages = {name: package_of(t.toolchain, "") for name, t in matrix.targets.items() if t.toolchain}
        repositories = {package: entry.url for package, entry in matrix.repositories.items()}
        requests = bisect_requests(changes, previous, packages, repositories)
        write_output(args.bisect_requests, json.dumps({"include": requests}))
    return ExitCode.REGRESSED if changes.new_fail or changes.lost_coverage else ExitCode.OK


def register(commands: argparse._SubParsersAction) -> None:
    comparing = commands.add_parser(
        "compare",
        help="what is new since earlier runs: new FAIL, fixed, new XPASS, lost coverage, flaky",
        description="Merge RESULTS (one run, e.g. one file per runner; an item judged twice keeps every "
        "attempt) and compare with --previous runs. Flaky: attempts in this run disagree, or the item "
        "flipped between PASS and FAIL twice in the window. Exit 0 nothing newly FAILs, 1 something "
        "does, 2 a results file is unreadable, 64 usage.",
    )
    comparing.add_argument("results", nargs="+", type=Path, help="this run's --kregress-json files")
    comparing.add_argument("--previous", nargs="*", type=Path, default=[], help="earlier runs' files")
    comparing.add_argument(
        "--history",
        type=Path,
        help="also the newest runs of this history (kregress history); none yet is fine",
    )
    comparing.add_argument("--window", type=int, default=5, help="earlier runs read (default 5)")
    comparing.add_argument("--json", type=Path, help="write the changes as JSON")
    comparing.add_argument("--markdown", type=Path, help="write the changes as markdown")
    comparing.add_argument("--merged", type=Path, help="write the merged run (the next run's --previous)")
    comparing.add_argument(
        "--bisect-requests",
        type=Path,
        help="write {include: [case, target, good, bad, repository]} for each new FAIL",
    )
    comparing.set_defaults(run=command_compare)
