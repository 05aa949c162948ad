"""`kregress matrix`: the nightly's jobs, and where a target or a package is found, for workflows."""

from __future__ import annotations

import argparse
import json
import os
import sys

from kregress.errors import ExitCode
from kregress.matrix import load_matrix, nightly_jobs, runner_for
from kregress.results import package_of


def command_matrix(args: argparse.Namespace) -> ExitCode:
    """The nightly jobs as a workflow matrix, or the runner labels for one target."""
    matrix = load_matrix(args.matrix)
    if args.repository_for:
        package = package_of(args.repository_for, args.repository_for)
        entry = matrix.repositories.get(package)
        outputs = {
            "repository": entry.url if entry else "",
            "tag-pattern": entry.tag_pattern if entry else "",
            "build-cmd": (entry.build_cmd or "") if entry else "",
        }
        print(json.dumps({"package": package, **outputs}))
    elif args.runner_for:
        try:
            name = runner_for(matrix, args.runner_for)
        except ValueError as exc:
            print(f"kregress matrix: {exc}", file=sys.stderr)
            return ExitCode.USAGE
        outputs = {"labels": json.dumps(matrix.runners[name].labels)}
        print(outputs["labels"])
    else:
        outputs = {"matrix": json.dumps({"include": nightly_jobs(matrix)})}
        print(outputs["matrix"])
    if args.github_output:
        with open(os.environ.get("GITHUB_OUTPUT") or os.devnull, "a") as handle:
            handle.writelines(f"{key}={value}\n" for key, value in outputs.items())
    return ExitCode.OK


def register(commands: argparse._SubParsersAction) -> None:
    jobs = commands.add_parser(
        "matrix",
        help="the nightly jobs (one per runner) as a GitHub Actions matrix",
        description='Print {"include": [...]} for strategy.matrix: one job per runner of the matrix file, '
        "with its labels, backend, targets and the pytest arguments that judge them.",
    )
    jobs.add_argument("--runner-for", metavar="TARGET", help="print only the labels of the runner for TARGET")
    jobs.add_argument(
        "--repository-for",
        metavar="PACKAGE",
        help="print the source repository the matrix names for PACKAGE (or a requirement like "
        "triton==3.6.0): url, tag pattern and build command, empty when there is none",
    )
    jobs.add_argument("--github-output", action="store_true", help="also append it to $GITHUB_OUTPUT")
    jobs.set_defaults(run=command_matrix)
