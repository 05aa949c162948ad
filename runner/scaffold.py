"""`kregress new`: a case folder to start from, valid before its author writes a line, so the first
thing they run (`kregress check`, then pytest on it) already works and shows what to change."""

from __future__ import annotations

import json
import re
from pathlib import Path
from string import Template

from kregress.errors import KregressError
from kregress.frameworks import FRAMEWORKS
from kregress.manifest import CASE_ID, UPSTREAM_BUG

DRAFT = "draft: not shown yet"  # the guard of a case whose bad and good releases are not named


class ScaffoldError(KregressError):
    """The case cannot be written as asked (name, issue URL, framework, folder): a usage error."""


STARTERS = {name: f.starter for name, f in FRAMEWORKS.items() if f.starter is not None}

MANIFEST = """\
title = $title_toml
framework = "$framework"

[upstream]
repo = "$repo"
issue = "$issue"

# What must hold. Replace these with what the bug breaks: `kregress new --help` lists the kinds.
[[expect]]
name = "compiles"
kind = "compiles"
kernel = "$kernel"
$scope
$expectations
# The bug, where it is known (uncomment once `kregress bisect` has found the range):
# [[known_bad]]
# link = "$issue"
# reason = "what the compiler gets wrong, in one line"
# expect = ["numerics"]
# targets = ["$target"]
# versions = "<X.Y.Z"

# How the case shows that it catches its bug: FAIL under each `bad` release, PASS under each `good`
# one, on `targets` (`kregress verify $name` runs exactly this).
[reproduce]
targets = ["$target"]
$levels
"""


def toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_case(
    corpus: Path,
    name: str,
    framework: str,
    issue: str,
    title: str | None = None,
    target: str | None = None,
    bad: list[str] | None = None,
    good: list[str] | None = None,
) -> Path:
    """Write corpus/NAME/{case.toml,repro.py}; never over an existing folder."""
    if not CASE_ID.match(name):
        raise ScaffoldError(f"case name {name!r} must match {CASE_ID.pattern} (it is the folder's name)")
    if framework not in STARTERS:
        known = ", ".join(sorted(STARTERS))
        why = (
            FRAMEWORKS[framework].no_adapter if framework in FRAMEWORKS else "not a framework kregress knows"
        )
        raise ScaffoldError(f"--framework {framework}: no starting case ({why}); choose one of {known}")
    if not UPSTREAM_BUG.match(issue):
        raise ScaffoldError(
            f"--issue {issue!r} must be the bug's issue or pull request: "
            "https://github.com/OWNER/REPO/issues/N or https://github.com/OWNER/REPO/pull/N"
        )
    folder = corpus / name
    if folder.exists():
        raise ScaffoldError(f"{folder} already exists; pick another name or edit it")
    if good and not bad:
        raise ScaffoldError("--good needs --bad: a fixed release says nothing without one that had the bug")
    starter = STARTERS[framework]
    repo = re.sub(r"^https://github\.com/([^/]+/[^/]+)/.*$", r"\1", issue)
    title = title or f"{repo.split('/')[1]} #{issue.rsplit('/', 1)[1]}: what breaks, in a line"
    if bad:
        levels = f"bad = {list(bad)!r}".replace("'", '"') + "\n"
        levels += (
            f"good = {list(good)!r}".replace("'", '"')
            if good
            else 'no_good = "why no release without the bug can be named (still open upstream?)"'
        )
    else:
        levels = (
            f'guard = "{DRAFT}: replace this guard with bad and good releases, then run '
            f'kregress verify {name}"'
        )
    values = {
        "name": name,
        "title": title,
        "title_toml": toml_string(title),
        "framework": framework,
        "repo": repo,
        "issue": issue,
        "target": target or starter.target,
        "kernel": starter.kernel,
        "expectations": starter.expectations,
        "scope": f"targets = {json.dumps(list(starter.scope))}\n" if starter.scope else "",
        "levels": levels,
    }
    folder.mkdir(parents=True)
    (folder / "case.toml").write_text(Template(MANIFEST).substitute(values))
    (folder / "repro.py").write_text(Template(starter.repro).substitute(values))
    return folder


__all__ = ["DRAFT", "STARTERS", "ScaffoldError", "write_case"]
