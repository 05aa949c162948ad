"""`kregress new`: start a case from a folder that already passes `kregress check` and runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kregress.errors import ExitCode
from kregress.scaffold import STARTERS, ScaffoldError, write_case


def command_new(args: argparse.Namespace) -> ExitCode:
    """Write a case folder that already passes `kregress check` and runs."""
    try:
        folder = write_case(
            args.corpus, args.name, args.framework, args.issue, args.title, args.target, args.bad, args.good
        )
    except ScaffoldError as exc:
        print(f"kregress new: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    target = args.target or STARTERS[args.framework].target
    print(f"wrote {folder}/case.toml and {folder}/repro.py")
    print("next:")
    print(f"  1. write the smallest kernel that shows the bug in {folder}/repro.py, and say what must hold")
    backend = target.split(":", 1)[0]
    on_device = f" --backend {backend}" if target.endswith(":device") else ""
    print(f"  2. pytest {folder}{on_device} --target {target}")
    if args.bad:
        print(f"  3. kregress verify {args.name}: FAIL under the bad releases, PASS under the good ones")
    else:
        print(f"  3. name the releases in [reproduce] (bad, good), then kregress verify {args.name}")
    return ExitCode.OK


def register(commands: argparse._SubParsersAction) -> None:
    new = commands.add_parser(
        "new",
        help="start a case: a case folder that passes `kregress check` and runs",
        description="Write corpus/NAME/case.toml (every required table, the upstream issue, a "
        "[reproduce] table) and corpus/NAME/repro.py (a kernel, its float64 reference and a check) "
        "for FRAMEWORK. Then make the kernel the bug's, and the expectations what the bug breaks. "
        "Expectation kinds: compiles, resource, ir, numerics, perf, artifact (README: Adding a case). "
        "Without --bad the case is a draft: valid, listed by `kregress check` as not shown yet. "
        "Exit 0 written, 64 usage (bad name, issue URL or framework; the folder exists).",
    )
    new.add_argument("name", help="the case id and folder name: lower case, digits, underscores")
    new.add_argument("--framework", required=True, choices=sorted(STARTERS), help="the compiler of the bug")
    new.add_argument("--issue", required=True, help="the upstream issue or pull request URL")
    new.add_argument("--title", help="one line saying what breaks (default: a placeholder)")
    new.add_argument(
        "--target",
        help="where the bug shows (default: "
        + "; ".join(f"{starter.target} for {name}" for name, starter in sorted(STARTERS.items()))
        + ")",
    )
    new.add_argument(
        "--bad", action="append", metavar="SPEC", help="a release with the bug, e.g. triton==3.2.0"
    )
    new.add_argument(
        "--good", action="append", metavar="SPEC", help="a release without it, e.g. triton==3.3.0"
    )
    new.add_argument("--corpus", type=Path, default=Path("corpus"), help="default: corpus")
    new.set_defaults(run=command_new)
