"""`kregress check`: validate every case manifest without running a compiler."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kregress.errors import ExitCode
from kregress.history import default_path as default_history
from kregress.manifest import Case, load_case, reproduction_problems
from kregress.matrix import load_matrix
from kregress.scaffold import DRAFT
from kregress.schema import SchemaError


def command_check(args: argparse.Namespace) -> ExitCode:
    """Validate every corpus/<case>/case.toml (schema, targets, and that it says how it is shown to
    catch its bug); print one line per case, every problem in full."""
    matrix = load_matrix(args.matrix)
    manifests = sorted(args.corpus.glob("*/case.toml"))
    if not manifests:
        print(f"{args.corpus}: no cases (no */case.toml)", file=sys.stderr)
        return ExitCode.OK
    bad = drafts = 0
    for path in manifests:
        try:
            case = load_case(path, set(matrix.targets))
        except SchemaError as exc:
            bad += 1
            print(f"INVALID {exc}")
            continue
        problems = reproduction_problems(case, matrix)
        if problems:
            bad += 1
            print(f"INVALID {path}:" + "".join(f"\n  - {problem}" for problem in problems))
            continue
        names = ", ".join(name for name, _ in case.expectations())
        reproduce = case.manifest.reproduce
        levels = "+".join(reproduce.levels) if reproduce else ""
        if reproduce and (reproduce.guard or "").startswith(DRAFT):
            drafts += 1  # valid, so it runs while written, but it proves nothing yet
            print(f"draft   {case.id} ({case.manifest.framework}): not shown to catch its bug yet: {names}")
            continue
        print(f"ok      {case.id} ({case.manifest.framework}, {levels}): {names}")
        if args.history:
            print_noisy_floors(case, args.history)
    shown = f" ({drafts} drafts)" if drafts else ""
    print(f"{len(manifests) - bad} valid{shown}, {bad} invalid")
    return ExitCode.INVALID_FILE if bad else ExitCode.OK


def print_noisy_floors(case: Case, history: Path) -> None:
    """Each perf floor that sits inside its item's night-to-night range on some GPU model: such a
    floor cannot tell one night from another, so the item is judged against the nights there."""
    from kregress.night_window import windows_of

    for name, expectation in case.expectations():
        if expectation.kind != "perf":
            continue
        for (target, model), window in windows_of(history, case.id, name).items():
            if not window.enough:
                nights = len(window.ratios)
                print(f"          {name} on {target} ({model}): {nights} nights, too few to judge")
            elif window.holds_floor(expectation.min_ratio):
                print(f"  noisy   {name} on {target}: the floor {expectation.min_ratio} sits inside "
                      f"{window.described()}; move it out of that range")  # fmt: skip
            else:
                print(f"          {name} on {target}: the floor {expectation.min_ratio} is clear of "
                      f"{window.described()}")  # fmt: skip


def register(commands: argparse._SubParsersAction) -> None:
    check = commands.add_parser(
        "check", help="validate every case manifest (and its [reproduce]) without running a compiler"
    )
    check.add_argument("corpus", nargs="?", type=Path, default=Path("corpus"), help="default: corpus")
    check.add_argument(
        "--history", type=Path, nargs="?", const=default_history(), metavar="PATH",
        help="also say, for each perf floor, whether it sits inside the item's night-to-night range on "
        "each GPU model this history measured it on (default path: the user cache dir)",
    )  # fmt: skip
    check.set_defaults(run=command_check)
