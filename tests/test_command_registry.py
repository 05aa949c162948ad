"""Adding a `kregress` subcommand is one new module in kregress/commands: shown by adding one to a
copy of the package and running it, with nothing else changed."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import package_with
from kregress.cli import parser
from kregress.commands import COMMANDS

HELLO = '''"""`kregress hello`: say hello to a case (a command, to show that one is a module)."""

from __future__ import annotations

import argparse

from kregress.errors import ExitCode


def command_hello(args: argparse.Namespace) -> ExitCode:
    print(f"hello {args.case}")
    return ExitCode.NOT_FOUND if args.case == "nobody" else ExitCode.OK


def register(commands: argparse._SubParsersAction) -> None:
    hello = commands.add_parser("hello", help="say hello to a case")
    hello.add_argument("case", help="the case's name")
    hello.set_defaults(run=command_hello)
'''

IN_COMMANDS = ["check", "new", "targets", "matrix", "compare", "history", "report", "envs", "build"]
IN_BISECT = ["bisect", "comment", "bot", "verify", "reduce", "import"]
SHOWN = IN_COMMANDS + IN_BISECT  # in the order `kregress --help` has always shown them


def test_every_command_is_found_and_registers_itself() -> None:
    (subcommands,) = [a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(subcommands.choices) == SHOWN
    for module in COMMANDS:
        assert callable(module.register), module.__name__
        assert module.__doc__, f"{module.__name__} says what it is for"


def test_a_new_command_is_one_module(tmp_path: Path) -> None:
    site = package_with(tmp_path, "commands/hello.py", HELLO)

    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}

    def kregress(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kregress.cli", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    helped = kregress("--help")
    assert helped.returncode == 0, helped.stderr
    assert "{" + ",".join([*SHOWN, "hello"]) + "}" in helped.stdout  # after the commands listed
    assert re.search(r"^ +hello +say hello to a case$", helped.stdout, re.M), helped.stdout
    ran = kregress("hello", "vector_add")
    assert (ran.returncode, ran.stdout) == (0, "hello vector_add\n"), ran.stderr
    assert kregress("hello", "nobody").returncode == 1  # its ExitCode is kregress's exit
    assert kregress("hello").returncode == 64  # a usage error, as for every command
    where = subprocess.run(
        [sys.executable, "-c", "import kregress.commands.hello as m; print(m.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()) == site / "kregress" / "commands" / "hello.py"
