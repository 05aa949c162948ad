"""bisect/ must never shadow the standard library's bisect, yet kregress.bisect must import."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO


def test_repo_root_keeps_the_standard_bisect() -> None:
    code = (
        "import random, bisect, sysconfig, pathlib;"
        "std = pathlib.Path(sysconfig.get_paths()['stdlib']);"
        "assert pathlib.Path(bisect.__file__).parent == std, bisect.__file__;"
        "assert hasattr(bisect, 'bisect_left');"
        "import kregress.bisect.search;"
        "print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False)
    assert done.stdout.strip() == "ok", done.stderr


def test_python_dash_m_pytest_starts_from_the_repo_root() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--version"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_bisect_folder_has_no_init() -> None:
    assert not (REPO / "bisect" / "__init__.py").exists()


def test_no_module_of_the_runner_imports_or_names_kregress_bisect() -> None:
    """The runner judges; bisect searches, reports and triages on top of it, never the other way:
    no import of kregress.bisect in runner/, not even a module named in a string."""
    import ast

    found = []
    for path in sorted((REPO / "runner").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names = [node.value] if node.value.startswith("kregress.bisect") else []
            found += [
                f"{path.relative_to(REPO)}:{node.lineno}: {n}"
                for n in names
                if n.startswith("kregress.bisect")
            ]
    assert found == []


def test_bisect_is_three_packages_by_concept() -> None:
    """The search and its driver at the top; GitHub; triage (import, reduce, verify)."""
    import kregress.bisect.command
    import kregress.bisect.github.client
    import kregress.bisect.triage.verify

    assert kregress.bisect.command.__name__ and kregress.bisect.github.client.Reporter
    assert kregress.bisect.triage.verify.Verifier
    top = {p.stem for p in (REPO / "bisect").glob("*.py")}
    assert not top & {"github", "comment", "bot", "importer", "reduce", "ast_edits", "verify", "ledger"}


def test_the_plugin_module_holds_pytest_hooks_only() -> None:
    """Collection, the item, the run's state and a GPU run's order live in modules of their own; the
    plugin is what pytest calls, and nothing imports it back."""
    import ast

    tree = ast.parse((REPO / "runner" / "plugin.py").read_text())
    defined = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert defined and all(name.startswith("pytest_") for name in defined), defined
    importers = [
        path.name
        for path in (REPO / "runner").rglob("*.py")
        if path.name != "plugin.py"
        and re.search(r"from kregress\.plugin import|import kregress\.plugin", path.read_text())
    ]
    assert importers == []
