"""A remembered judgement keys on the kregress code that judged it (kregress.judging_code): a
changed adapter re-judges exactly the cases of its framework, a changed kind those that use it, a
changed core module every case, and a changed comment or docstring none."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO
from kregress.schema import read_toml

DIGESTS = """
import json, sys
from pathlib import Path
from kregress.judging_code import judging_code_digest
corpus = Path(sys.argv[1])
print(json.dumps({p.parent.name: judging_code_digest(p.parent) for p in sorted(corpus.glob("*/case.toml"))}))
"""


def digests(site: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-c", DIGESTS, str(REPO / "corpus")], env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(done.stdout)


def changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {case for case in before if before[case] != after[case]}


def manifests() -> dict[str, dict]:
    return {p.parent.name: read_toml(p) for p in (REPO / "corpus").glob("*/case.toml")}


def test_a_change_re_judges_exactly_the_cases_its_code_judges(tmp_path: Path) -> None:
    site = tmp_path / "site"
    package = site / "kregress"
    shutil.copytree(REPO / "runner", package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "bisect", package / "bisect", ignore=shutil.ignore_patterns("__pycache__"))
    before = digests(site)
    cases = manifests()
    tilelang = {name for name, m in cases.items() if m.get("framework") == "tilelang"}
    artifact = {name for name, m in cases.items() if any(e["kind"] == "artifact" for e in m["expect"])}
    assert tilelang and artifact and tilelang | artifact != set(cases)  # the test can tell them apart

    def edit(module: str, old: str, new: str) -> dict[str, str]:
        path = package / module
        text = path.read_text()
        assert old in text, module
        path.write_text(text.replace(old, new, 1))
        return digests(site)

    # a comment and a docstring: nothing a judgement runs
    after = edit("jobs.py", '"""', '"""Reworded. ')
    after = edit("jobs.py", "\nimport ", "\n# a comment\nimport ")
    assert changed(before, after) == set()
    # TileLang's adapter: the TileLang cases, and only those
    after = edit("adapters/tilelang_aot.py", "\nimport ", "\nLIMIT = 1\nimport ")
    assert changed(before, after) == tilelang
    before = after
    # a kind: the cases with an expectation of that kind
    after = edit("kinds/artifact.py", "\nimport ", "\nLIMIT = 1\nimport ")
    assert changed(before, after) == artifact
    before = after
    # the child that runs every job: every case
    after = edit("worker.py", "\nimport ", "\nLIMIT = 1\nimport ")
    assert changed(before, after) == set(cases)
