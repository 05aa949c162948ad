"""The `kregress` subcommands: one module each, found here by looking.

A module of this package adds a command with `register(commands)`: it adds its parser to
`commands` (argparse's subparsers) and sets `run` (args -> ExitCode) as that parser's default;
`kregress.cli` calls every module's `register` and runs what the command line chose. The commands
that drive a bisection live beside it in kregress.bisect, so they are named in LISTED, which also
keeps the order `kregress --help` shows; a module of this package that LISTED does not name comes
after those, by name.
"""

from __future__ import annotations

import importlib
import pkgutil
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
    "kregress.bisect.command",
    "kregress.bisect.comment",
    "kregress.bisect.bot",
    "kregress.bisect.verify",
    "kregress.bisect.reduce",
    "kregress.bisect.importer",
)


def discover() -> tuple[ModuleType, ...]:
    """Every command module, imported: LISTED in order, then the rest of this package by name."""
    here = sorted(f"{__name__}.{module.name}" for module in pkgutil.iter_modules(__path__))
    names = [*LISTED, *(name for name in here if name not in LISTED)]
    return tuple(importlib.import_module(name) for name in names)


COMMANDS = discover()

__all__ = ["COMMANDS", "LISTED", "discover"]
