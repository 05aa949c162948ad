"""Which of kregress's own code judges a case, as a digest: part of every remembered judgement's key.

A verdict remembered past a change to the code that reached it is a check that cannot fail, so the
memo and the verify ledger key on this digest. It covers the modules a judgement runs — the pytest
plugin, the child (worker, fork server) and what they import — plus, per case, the modules of its
expectation kinds and of its framework and adapter, which are found by looking, never imported by
name: a changed adapter re-judges exactly the cases of its framework, a changed kind those that
use it. A module counts by its syntax tree without docstrings, so a comment, a docstring or a
reformat changes nothing; a module file another names as a string (`ocloc_front.py`, written out
and run) counts beside it.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path

# What every judgement runs: the plugin in the pytest process, the worker or the fork server in the
# child. What the case's repro.py imports of kregress (kregress.case; a draft's kregress.pasted)
# counts for that case.
ENTRIES = ("kregress.plugin", "kregress.worker", "kregress.zygote")


@functools.cache
def module_file(name: str) -> Path | None:
    """The source file of a kregress module, without importing it (None: not a module of ours)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


@functools.cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


@functools.cache
def imported_modules(path: Path) -> frozenset[str]:
    """The kregress modules `name` imports anywhere in its body (a function's late import too)."""
    found: set[str] = set()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:  # all absolute here
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)  # `from kregress import jobs`
    return frozenset(m for m in found if m.split(".")[0] == "kregress" and module_file(m) is not None)


@functools.cache
def named_siblings(path: Path) -> frozenset[Path]:
    """Files beside `path` that it names in a string: scripts it writes out or runs."""
    siblings = {p.name: p for p in path.parent.glob("*.py")}
    return frozenset(
        siblings[node.value]
        for node in ast.walk(parsed(path))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in siblings
    )


def closure(entries: Iterable[str]) -> dict[str, Path]:
    """Every kregress module reachable from `entries` by static imports, with its file; packages'
    `__init__` included (importing a submodule runs its parents)."""
    seen: dict[str, Path] = {}
    pending = list(entries)
    while pending:
        name = pending.pop()
        path = module_file(name)
        if name in seen or path is None:
            continue
        seen[name] = path
        parents = [".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)]
        pending += [*imported_modules(path), *parents]
    return seen


@functools.cache
def syntax_digest(path: Path) -> str:
    """A module by what it does: its syntax tree with docstrings dropped (read once a process: the
    code that judges does not change under a running judgement)."""
    tree = ast.parse(path.read_text(), str(path))  # its own copy: the cached tree stays whole
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.dump(tree, include_attributes=False).encode()).hexdigest()


def files_digest(files: dict[str, Path]) -> str:
    digest = hashlib.sha256()
    for name, path in sorted(files.items()):
        digest.update(name.encode() + b"\0" + syntax_digest(path).encode())
        for sibling in sorted(named_siblings(path)):
            digest.update(sibling.name.encode() + b"\0" + sibling.read_bytes())
    return digest.hexdigest()[:16]


def framework_modules(framework: str) -> list[str]:
    """The module that declares `framework`, and its adapter's."""
    from kregress.frameworks import FRAMEWORKS

    declared = FRAMEWORKS[framework]
    home = next(
        name
        for name, module in list(sys.modules.items())
        if name.startswith("kregress.frameworks.") and getattr(module, "FRAMEWORK", None) is declared
    )
    return [home, *([declared.adapter] if declared.adapter else [])]


def case_modules(case_folder: Path) -> dict[str, Path]:
    """The modules judging this case runs; every kind and framework when its manifest cannot be read
    (then nothing narrower is known)."""
    from kregress.frameworks import FRAMEWORKS
    from kregress.kinds import REGISTRY
    from kregress.manifest import load_case
    from kregress.schema import SchemaError

    repro = case_folder / "repro.py"
    try:
        imported = sorted(imported_modules(repro)) if repro.is_file() else []
    except SyntaxError:  # judged as an ERROR of the repro; nothing narrower is known of its imports
        imported = []
    try:
        case = load_case(case_folder / "case.toml")
    except (SchemaError, OSError):
        kinds = [kind.__module__ for kind in REGISTRY.values()]
        frameworks = [m for name in FRAMEWORKS for m in framework_modules(name)]
    else:
        kinds = [type(expectation).__module__ for _, expectation in case.expectations()]
        frameworks = framework_modules(case.manifest.framework)
    return closure([*ENTRIES, *imported, *kinds, *frameworks])


def judging_code_digest(case_folder: Path) -> str:
    """The digest of the kregress code that judges the case in `case_folder`."""
    return files_digest(case_modules(case_folder))
