"""One root for kregress's exceptions and one enum for its exit codes, checked by walking every
module of kregress and kregress.bisect, so a module added later is held to them too."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path
from types import ModuleType

import kregress
import kregress.bisect
from conftest import CORPORA
from kregress import cli
from kregress.commands import COMMANDS
from kregress.errors import ExitCode, KregressError

EXITING = ("sys.exit", "exit", "SystemExit", "os._exit")


def kregress_modules() -> list[ModuleType]:
    """Every module of kregress, and of kregress.bisect, which walk_packages skips (it is a
    namespace package: bisect/ has no __init__.py), with its subpackages."""
    names = ["kregress", *(m.name for m in pkgutil.walk_packages(kregress.__path__, "kregress."))]
    names += [m.name for m in pkgutil.walk_packages(kregress.bisect.__path__, "kregress.bisect.")]
    return [importlib.import_module(name) for name in names]


def test_every_exception_kregress_defines_derives_from_its_root() -> None:
    defined = {
        f"{module.__name__}.{name}": value
        for module in kregress_modules()
        for name, value in vars(module).items()
        if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__
    }
    reached = {
        "kregress.schema.SchemaError",
        "kregress.case.Unsupported",
        "kregress.bisect.github.client.ReportError",
    }
    assert reached <= set(defined)  # the walk reaches the child's modules and kregress.bisect
    assert sorted(name for name, cls in defined.items() if not issubclass(cls, KregressError)) == []


def literal_results(node: ast.expr | None) -> list[ast.expr]:
    """The int literals an expression can evaluate to, through `a if c else b` and `and`/`or`."""
    if isinstance(node, ast.UnaryOp):
        return literal_results(node.operand)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return [node]
    if isinstance(node, ast.IfExp):
        return literal_results(node.body) + literal_results(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [literal for value in node.values for literal in literal_results(value)]
    return []


def bare_exit_codes(module: ModuleType) -> list[str]:
    """Where a command module returns or exits with a number, or names an EXIT_ constant, instead
    of an ExitCode."""
    path = Path(inspect.getfile(module))
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Return):
            bare = literal_results(node.value)
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in EXITING:
            bare = [literal for argument in node.args for literal in literal_results(argument)]
        else:
            bare = [node] if isinstance(node, ast.Name) and node.id.startswith("EXIT_") else []
        found += [f"{path.name}:{literal.lineno}: {ast.unparse(node)}" for literal in bare]
    return found


def test_commands_exit_with_exit_codes_only() -> None:
    modules = [cli, *COMMANDS]
    assert {"kregress.commands.compare", "kregress.bisect.command"} <= {m.__name__ for m in modules}
    assert [place for module in modules for place in bare_exit_codes(module)] == []


def test_kregress_exits_with_an_exit_code(tmp_path: Path, capsys) -> None:
    """The values README lists, and `main` answers with the enum itself, refusals included."""
    assert sorted({int(code) for code in ExitCode}) == [0, 1, 2, 3, 64, 65]
    (tmp_path / "matrix.toml").write_text("[targets]\n")
    runs = {
        ("targets",): ExitCode.OK,
        ("check", str(CORPORA / "kinds")): ExitCode.OK,
        ("--help",): ExitCode.OK,
        ("frobnicate",): ExitCode.USAGE,
        ("--matrix", str(tmp_path / "matrix.toml"), "targets"): ExitCode.INVALID_FILE,
    }
    for argv, code in runs.items():
        answered = cli.main(list(argv))
        assert type(answered) is ExitCode and answered is code, argv
    capsys.readouterr()
