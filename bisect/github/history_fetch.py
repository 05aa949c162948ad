"""`kregress history fetch`: the history a previous workflow run left as an artifact, through
GitHub's API (no `gh` needed on the runner). Added to the runner's `kregress history` command, which
knows nothing of GitHub."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from kregress.bisect.github.client import Reporter, ReportError, fetch_run_artifact
from kregress.errors import ExitCode


def command_history_fetch(args: argparse.Namespace) -> ExitCode:
    """The previous runs' history, through the API (no `gh` needed on the runner)."""
    token, repository = os.environ.get("GITHUB_TOKEN"), os.environ.get("GITHUB_REPOSITORY")
    if not token or not repository:
        print("kregress history fetch: set GITHUB_TOKEN and GITHUB_REPOSITORY", file=sys.stderr)
        return ExitCode.USAGE
    client = Reporter(token, os.environ.get("GITHUB_API_URL")).client
    this_run = os.environ.get("GITHUB_RUN_ID")
    try:
        found = fetch_run_artifact(
            client,
            repository,
            args.workflow,
            args.artifact,
            args.dir,
            branch=args.branch,
            skip_run=int(this_run) if this_run else None,
            limit=args.limit,
        )
    except ReportError as exc:
        print(f"kregress history fetch: {exc}", file=sys.stderr)
        return ExitCode.GITHUB
    if found is None:
        print(f"no completed run of {args.workflow} among the newest {args.limit} has {args.artifact!r}")
        return ExitCode.NOT_FOUND
    print(f"{args.artifact} from run {found.run_id}: {', '.join(found.files)} in {args.dir}")
    return ExitCode.OK


def register(commands: argparse._SubParsersAction) -> None:
    history_commands = commands.choices["history"].get_default("history_commands")
    fetch = history_commands.add_parser(
        "fetch",
        help="download the history a previous workflow run left as an artifact",
        description="Finds the newest completed run of WORKFLOW (on --branch) that still has the "
        "artifact and unpacks it into --dir: how the nightly carries its history from night to "
        "night. Token, repository and API URL from GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL. "
        "Exit 0 found, 1 no earlier run has it, 3 GitHub refused or failed.",
    )
    fetch.add_argument("--workflow", required=True, help="workflow file name, e.g. nightly.yml")
    fetch.add_argument("--artifact", required=True, help="artifact name, e.g. nightly-history")
    fetch.add_argument("--dir", type=Path, required=True, help="where to unpack it")
    fetch.add_argument("--branch", help="only runs of this branch (default: any)")
    fetch.add_argument("--limit", type=int, default=10, help="newest runs to look at (default 10)")
    fetch.set_defaults(run=command_history_fetch)
