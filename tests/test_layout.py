"""bisect/ must never shadow the standard library's bisect, yet kregress.bisect must import."""

from __future__ import annotations

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
