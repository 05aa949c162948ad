"""`kregress targets`: what the matrix names, without running anything."""

from __future__ import annotations

import argparse

from kregress.errors import ExitCode
from kregress.matrix import load_matrix


def command_targets(args: argparse.Namespace) -> ExitCode:
    """Print the matrix: targets with their limits and the first release that builds each, and what
    each backend judges by default."""
    matrix = load_matrix(args.matrix)
    for name, target in matrix.named.items():
        limits = ", ".join(f"{k}={v}" for k, v in target.limits.items()) or "-"
        since = "".join(f"; from {package} {first}" for package, first in target.since.items())
        print(f"{name:18} {target.kind:12} {limits}{since}")
    for backend, entry in matrix.backends.items():
        print(f"--backend {backend}: {', '.join(entry.targets)}")
    return ExitCode.OK


def register(commands: argparse._SubParsersAction) -> None:
    targets = commands.add_parser("targets", help="list the matrix's targets, limits and backends")
    targets.set_defaults(run=command_targets)
