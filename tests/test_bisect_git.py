"""`kregress bisect` over a real git repository made here, whose "compiler" is a tiny Python
package: it turns bad at a known commit, one commit cannot be built and one is flaky."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import git
import pytest

CASE = """
title = "tiny compiler doubles its input"
framework = "triton"
[upstream]
repo = "example/tinycc"
issue = "https://github.com/example/tinycc/issues/1"
[[expect]]
name = "numerics"
kind = "numerics"
check = "check"
rtol = 0
atol = 0
"""

REPRO = """
import os
from pathlib import Path

import numpy as np
import tinycc


def check(device):
    return tinycc.scale(np.arange(4.0)), np.arange(4.0) * 2
"""

PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"
[project]
name = "tinycc"
version = "0.{n}"
"""

GOOD = "def scale(x):\n    return x * 2\n"
BAD = "def scale(x):\n    return x * 2 + (x > 2)\n"
# Bad on its first run only, then good: a flaky commit (the counter file says which run this is).
FLAKY = """import os
def scale(x):
    counter = os.environ["TINYCC_FLAKY_COUNTER"]
    runs = int(open(counter).read()) if os.path.exists(counter) else 0
    open(counter, "w").write(str(runs + 1))
    return x * 2 + (1 if runs == 0 else 0)
"""


def make_repo(folder: Path) -> tuple[git.Repo, list[str]]:
    repo = git.Repo.init(folder, initial_branch="main")
    with repo.config_writer() as config:
        config.set_value("user", "name", "Test").set_value("user", "email", "test@example.com")
    package = folder / "tinycc"
    package.mkdir()
    steps = [
        ("Initial compiler", GOOD, True),
        ("Add a fast path", GOOD, True),
        ("Rework the scheduler (#37)", FLAKY, True),
        ("Break the build", GOOD, False),
        ("Fix the build", GOOD, True),
        ("Vectorize scale (#42)", BAD, True),
        ("Tidy up", BAD, True),
        ("More tidying", BAD, True),
        ("Fix scale for large inputs (#50)", GOOD, True),
        ("Update docs", GOOD, True),
    ]
    shas = []
    for n, (message, source, buildable) in enumerate(steps):
        (package / "__init__.py").write_text(source)
        (folder / "pyproject.toml").write_text(PYPROJECT.format(n=n) + ("" if buildable else "[[[broken\n"))
        repo.index.add(["tinycc/__init__.py", "pyproject.toml"])
        shas.append(repo.index.commit(message).hexsha)
    return repo, shas


def bisect(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    corpus = tmp_path / "corpus" / "tiny"
    corpus.mkdir(parents=True, exist_ok=True)
    (corpus / "case.toml").write_text(CASE)
    (corpus / "repro.py").write_text(REPRO)
    env = {
        **os.environ,
        "KREGRESS_CACHE_DIR": str(tmp_path / "cache"),
        "TINYCC_FLAKY_COUNTER": str(tmp_path / "flaky-runs"),
    }
    command = [sys.executable, "-m", "kregress.cli", "bisect", "tiny", "--corpus", str(tmp_path / "corpus"),
               "--target", "cpu:interpreter", *args]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=900, check=False)


@pytest.mark.slow
def test_bisect_finds_the_culprit_commit_around_skips_and_flakes(tmp_path: Path) -> None:
    repo, shas = make_repo(tmp_path / "tinycc")
    report = tmp_path / "report.md"
    args = ("--repo", str(repo.working_dir), "--good", shas[0], "--bad", shas[7], "--reruns", "3")
    done = bisect(tmp_path, *args, "--markdown", str(report))
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    text = report.read_text()
    assert f"First bad (fail): **{shas[5][:10]} Vectorize scale (#42)** (PR #42)" in text
    assert "cannot be built" in text  # the broken commit was stepped around, as a skip
    assert "good (bad/good/good)" in text  # the flaky commit: three votes, majority good
    assert "WRONG_RESULT" in text
    assert "Reproduce:" in text and "--toolchain" in text
    # Both ends are verified first: a "good" end that is bad stops with what was observed.
    wrong = bisect(tmp_path, "--repo", str(repo.working_dir), "--good", shas[5], "--bad", shas[7])
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert f"the good end {shas[5][:10]} Vectorize scale (#42) is bad" in wrong.stderr
    # Looking for the fix the other way round is the same search with --regress pass.
    fix = bisect(
        tmp_path, "--repo", str(repo.working_dir), "--good", shas[0], "--bad", shas[1], "--regress", "pass"
    )
    # A fix search names its ends as such: the broken one (--good) must not hold already.
    assert fix.returncode == 1 and f"the broken end {shas[0][:10]} Initial compiler" in fix.stderr
    assert "holds already" in fix.stderr or "cannot be judged" in fix.stderr


def test_usage_errors_exit_64(tmp_path: Path) -> None:
    assert bisect(tmp_path, "--good", "abc", "--bad", "def").returncode == 64  # git refs need --repo
    done = bisect(tmp_path, "--good", "triton==3.2.0", "--bad", "tilelang==0.1.0")
    assert done.returncode == 64 and "one package" in done.stderr
    assert bisect(tmp_path, "--good", "2026-01-01", "--bad", "2026-02-01").returncode == 64
    same = bisect(tmp_path, "--good", "triton-xpu==3.3.0b1", "--bad", "triton-xpu==3.3.0b1")
    assert same.returncode == 64 and "both name triton-xpu==3.3.0b1" in same.stderr, same.stderr
