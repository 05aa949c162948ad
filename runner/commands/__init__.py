"""The `kregress` subcommands: one module each, found here by looking.

A module of this package adds a command with `register(commands)`: it adds its parser to
`commands` (argparse's subparsers) and sets `run` (args -> ExitCode) as that parser's default;
`kregress.cli` calls every module's `register` and runs what the command line chose. LISTED keeps
the order `kregress --help` shows; a module of this package that LISTED does not name comes after
those, by name. Commands of other packages (kregress.bisect's: bisect, comment, bot, verify,
reduce, import, and `history fetch`) come through the `kregress.commands` entry points
(pyproject.toml), each a list of module names in their order, after LISTED: the runner names no
module of theirs.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
import sys
from types import ModuleType

LISTED = (
    f"{__name__}.check",
    f"{__name__}.new",
    f"{__name__}.targets",
    f"{__name__}.matrix",
    f"{__name__}.compare",
    f"{__name__}.history",
    f"{__name__}.report",
    f"{__name__}.envs",
    f"{__name__}.build",
)
ENTRY_POINTS = "kregress.commands"


def discover() -> tuple[ModuleType, ...]:
    """Every command module, imported: LISTED in order, the entry points', then the rest of this
    package by name."""
    here = sorted(f"{__name__}.{module.name}" for module in pkgutil.iter_modules(__path__))
    others = [name for entry in importlib.metadata.entry_points(group=ENTRY_POINTS) for name in entry.load()]
    if not others:  # an install made before the entry point existed: say so, never lose them silently
        print(f"kregress: no {ENTRY_POINTS} entry point is installed, so bisect, verify, reduce, import, "
              "comment, bot and history fetch are missing: reinstall kregress (bash .ci/setup)",
              file=sys.stderr)  # fmt: skip
    names = [*LISTED, *others, *(name for name in here if name not in LISTED)]
    return tuple(importlib.import_module(name) for name in dict.fromkeys(names))


COMMANDS = discover()

__all__ = ["COMMANDS", "ENTRY_POINTS", "LISTED", "discover"]
