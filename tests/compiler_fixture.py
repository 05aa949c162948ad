"""A tiny compiler for bisect tests, made for real: a Python package `tinycc` whose `scale` turns
wrong at a known commit, in a git repository with release tags; built by an in-tree PEP 517
backend (so nothing comes from a package index), and released as wheels on a local simple index
served over HTTP, as a compiler's releases are on PyPI."""

from __future__ import annotations

import functools
import html
import http.server
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import git

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
import numpy as np
import tinycc


def check(device):
    return tinycc.scale(np.arange(4.0)), np.arange(4.0) * 2
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

PYPROJECT = """[build-system]
requires = []
build-backend = "tinycc_build"
backend-path = ["backend"]
[project]
name = "tinycc"
version = "{version}"
"""

# The backend writes a wheel of tinycc/ with the version of pyproject.toml; an unparseable
# pyproject.toml is a failed build.
BACKEND = """
import base64, hashlib, pathlib, tomllib, zipfile


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = tomllib.loads(pathlib.Path("pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": pathlib.Path(name, "__init__.py").read_text(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\\nGenerator: tinycc_build\\nRoot-Is-Purelib: true\\n"
        "Tag: py3-none-any\\n",
    }
    record = [
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
        f"{len(text.encode())}"
        for path, text in files.items()
    ]
    files[f"{info}/RECORD"] = "\\n".join([*record, f"{info}/RECORD,,"]) + "\\n"
    wheel = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel
"""


@dataclass(frozen=True)
class Step:
    """One commit of the compiler's history; `release` makes it a release (tagged v{release}
    unless `tagged` is false)."""

    message: str
    source: str
    buildable: bool = True
    release: str | None = None
    tagged: bool = True
    files: dict[str, str] = field(default_factory=dict)  # other files the commit writes (a pin)


def make_compiler_repo(folder: Path, steps: list[Step]) -> tuple[git.Repo, list[str]]:
    repo = git.Repo.init(folder, initial_branch="main")
    with repo.config_writer() as config:
        config.set_value("user", "name", "Test").set_value("user", "email", "test@example.com")
    (folder / "tinycc").mkdir(parents=True)
    (folder / "backend").mkdir()
    (folder / "backend" / "tinycc_build.py").write_text(BACKEND)
    shas = []
    for n, step in enumerate(steps):
        (folder / "tinycc" / "__init__.py").write_text(step.source)
        version = step.release or f"0.0.dev{n}"
        broken = "" if step.buildable else "[[[broken\n"
        (folder / "pyproject.toml").write_text(PYPROJECT.format(version=version) + broken)
        for name, text in step.files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        repo.index.add(["tinycc/__init__.py", "pyproject.toml", "backend/tinycc_build.py", *step.files])
        shas.append(repo.index.commit(step.message).hexsha)
        if step.release and step.tagged:
            repo.create_tag(f"v{step.release}")
    return repo, shas


def build_release(repo: git.Repo, sha: str, out: Path) -> Path:
    """The wheel of one commit, as a release would be built from its tag."""
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryFile() as archive:
        repo.archive(archive, treeish=sha, format="tar")
        archive.seek(0)
        with tarfile.open(fileobj=archive) as tar:
            tar.extractall(folder, filter="data")
        code = "import sys; sys.path.insert(0, 'backend'); import tinycc_build; "
        code += "print(tinycc_build.build_wheel(sys.argv[1]))"
        out.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [sys.executable, "-c", code, str(out)], cwd=folder, capture_output=True, text=True, check=True
        )
        return out / done.stdout.strip()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def publish(root: Path, wheels: list[Path]) -> None:
    """Make `wheels` the releases on the index in `root` (a later call publishes new releases)."""
    files = root / "files"
    files.mkdir(parents=True, exist_ok=True)
    page = root / "simple" / "tinycc"
    page.mkdir(parents=True, exist_ok=True)
    links = []
    for wheel in wheels:
        shutil.copy(wheel, files / wheel.name)
        links.append(f'<a href="../../files/{html.escape(wheel.name)}">{html.escape(wheel.name)}</a><br>')
    (page / "index.html").write_text(
        "<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n"
    )


@contextmanager
def local_index(root: Path, wheels: list[Path]) -> Iterator[str]:
    """A PEP 503 index of `wheels` (HTML project page) served on 127.0.0.1; yields its URL."""
    publish(root, wheels)
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()
        server.server_close()


def run_bisect(tmp_path: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """`kregress bisect tiny ...` on the cpu interpreter, with a cache of its own under tmp_path."""
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
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout, check=False)
