"""The `kregress` command: look at the corpus and the matrix without running any compiler.

Judging is `pytest corpus/ --backend ...`; this command is for checking and listing.
Exit codes: 0 fine, 2 an invalid manifest or matrix file, 64 usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kregress.manifest import load_case
from kregress.matrix import load_matrix
from kregress.schema import SchemaError


def command_check(args: argparse.Namespace) -> int:
    """Validate every corpus/<case>/case.toml; print one line per case, every problem in full."""
    matrix = load_matrix(args.matrix)
    manifests = sorted(args.corpus.glob("*/case.toml"))
    if not manifests:
        print(f"{args.corpus}: no cases (no */case.toml)", file=sys.stderr)
        return 0
    bad = 0
    for path in manifests:
        try:
            case = load_case(path, set(matrix.targets))
        except SchemaError as exc:
            bad += 1
            print(f"INVALID {exc}")
            continue
        names = ", ".join(name for name, _ in case.expectations())
        print(f"ok      {case.id} ({case.manifest.framework}): {names}")
    print(f"{len(manifests) - bad} valid, {bad} invalid")
    return 2 if bad else 0


def command_targets(args: argparse.Namespace) -> int:
    """Print the matrix: targets with their limits, and what each backend judges by default."""
    matrix = load_matrix(args.matrix)
    for name, target in matrix.named.items():
        limits = ", ".join(f"{k}={v}" for k, v in target.limits.items()) or "-"
        print(f"{name:18} {target.kind:12} {limits}")
    for backend, entry in matrix.backends.items():
        print(f"--backend {backend}: {', '.join(entry.targets)}")
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="kregress",
        description="Regression corpus for GPU kernel compilers. Judge cases with "
        "`pytest corpus/ --backend {cpu,cuda,hip,xpu}`; this command checks and lists.",
    )
    top.add_argument("--matrix", type=Path, default=None, help="matrix file (default: the packaged one)")
    commands = top.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="validate every case manifest without running a compiler")
    check.add_argument("corpus", nargs="?", type=Path, default=Path("corpus"), help="default: corpus")
    check.set_defaults(run=command_check)
    targets = commands.add_parser("targets", help="list the matrix's targets, limits and backends")
    targets.set_defaults(run=command_targets)
    return top


def main(argv: list[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 64
    try:
        return args.run(args)
    except SchemaError as exc:
        print(f"INVALID {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
