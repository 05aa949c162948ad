"""The `kregress` command: look at the corpus and the matrix without running any compiler.

Judging is `pytest corpus/ --backend ...`; this command checks, lists, compares and bisects.
Each subcommand is one module with `register(commands)`, found by kregress.commands; this one
builds the top parser, runs what was chosen and turns kregress's refusals into exit codes.
Exit codes (kregress.errors.ExitCode): 0 fine, 2 an invalid manifest, matrix or results file,
3 a toolchain that cannot be installed, 64 usage error; `kregress compare` exits 1 when something
newly FAILs, and `kregress bisect` documents its own (0 found, 1 not found, 3 infrastructure).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kregress.commands import COMMANDS
from kregress.debian import ProvisionError
from kregress.errors import ExitCode
from kregress.history import HistoryError
from kregress.schema import SchemaError
from kregress.toolchains import ToolchainError


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="kregress",
        description="Regression corpus for GPU kernel compilers. Judge cases with "
        "`pytest corpus/ --backend {cpu,cuda,hip,xpu}`; this command checks cases, shows that they "
        "catch their bugs (verify), compares runs, bisects and reports.",
    )
    top.add_argument("--matrix", type=Path, default=None, help="matrix file (default: the packaged one)")
    commands = top.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.register(commands)
    return top


def main(argv: list[str] | None = None) -> ExitCode:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return ExitCode.OK if exc.code == 0 else ExitCode.USAGE
    try:
        return args.run(args)
    except SchemaError as exc:
        print(f"INVALID {exc}", file=sys.stderr)
        return ExitCode.INVALID_FILE
    except ToolchainError as exc:
        print(f"kregress: {exc}", file=sys.stderr)
        return ExitCode.INFRASTRUCTURE
    except HistoryError as exc:
        print(f"kregress: {exc}", file=sys.stderr)
        return ExitCode.INVALID_FILE
    except ProvisionError as exc:  # xpu_native.NativeXpuError, and level_zero's
        print(f"kregress: {exc}", file=sys.stderr)
        return ExitCode.INFRASTRUCTURE


if __name__ == "__main__":
    sys.exit(main())
