"""A compiler with a compiled part, built for real: `kcc`, whose `scale` multiplies by a factor that
a C library (compiled by the system's cc at build time, loaded with ctypes) returns, with Python
parts, a pinned-dependency file and files no build reads. Its in-tree PEP 517 backend appends a
line to $KCC_BUILD_LOG on every real build, so tests count builds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import git

PYPROJECT = """[build-system]
requires = []
build-backend = "kcc_build"
backend-path = ["backend"]
[project]
name = "kcc"
version = "1.0"
"""

# Compiles csrc/core.c into kcc/_core.so and writes a wheel of kcc/ (platform-specific, as a real
# compiler's is). The pinned file is read by the build, as Triton's build reads cmake/llvm-hash.txt.
BACKEND = """
import base64, hashlib, os, pathlib, subprocess, sys, sysconfig, tempfile, time, tomllib, zipfile


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = tomllib.loads(pathlib.Path("pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]
    pin = pathlib.Path("deps/pin.txt").read_text().strip()
    with tempfile.TemporaryDirectory() as scratch:
        library = pathlib.Path(scratch) / "_core.so"
        subprocess.run(["cc", "-shared", "-fPIC", "-O1", f"-DPIN=\\"{pin}\\"", "csrc/core.c", "-o",
                        str(library)], check=True)
        files = {f"{name}/_core.so": library.read_bytes()}
    for path in sorted(pathlib.Path(name).rglob("*.py")):
        files[path.as_posix()] = path.read_bytes()
    info = f"{name}-{version}.dist-info"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    tag = "cp{0}{1}-cp{0}{1}-{2}".format(*sys.version_info[:2], platform)
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n".encode()
    wheel_info = f"Wheel-Version: 1.0\\nGenerator: kcc\\nRoot-Is-Purelib: false\\nTag: {tag}\\n"
    files[f"{info}/WHEEL"] = wheel_info.encode()
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\\n".join(record) + "\\n").encode()
    wheel = f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(zipfile.ZipInfo(path, (2020, 1, 1, 0, 0, 0)), data)
    if os.environ.get("KCC_BUILD_LOG"):
        with open(os.environ["KCC_BUILD_LOG"], "a") as log:
            log.write(f"{time.time()}\\n")
    return wheel
"""

INIT = """import ctypes, pathlib

from kcc.scaling import scale

_core = ctypes.CDLL(str(pathlib.Path(__file__).with_name("_core.so")))
_core.factor.restype = ctypes.c_double
FACTOR = _core.factor()
"""

SCALING = """def scale(x):
    import kcc
    return x * kcc.FACTOR
"""

CORE = "double factor(void) { return %s; }\nconst char *pin(void) { return PIN; }\n"

RECIPE = """
[repositories.kcc]
url = "{url}"
build_cmd = "python -m pip wheel --no-deps --no-build-isolation -w {{out}} {{src}}"
unpackaged = ["docs/**", "*.md"]
pins = ["deps/pin.txt"]
[[repositories.kcc.uncompiled]]
source = "kcc"
installed = "kcc"
glob = "**/*.py"
"""


@dataclass
class Commit:
    subject: str
    files: dict[str, str | None]  # path -> new text; None deletes


BASE = Commit(
    "Initial kcc",
    {
        "pyproject.toml": PYPROJECT,
        "backend/kcc_build.py": BACKEND,
        "kcc/__init__.py": INIT,
        "kcc/scaling.py": SCALING,
        "csrc/core.c": CORE % "2.0",
        "deps/pin.txt": "llvm-1111\n",
        "docs/notes.md": "kcc\n",
        "README.md": "kcc\n",
    },
)


def make_kcc_repo(folder: Path, commits: list[Commit]) -> tuple[git.Repo, list[str]]:
    """A repository of `commits`, in order, on main; their shas."""
    repo = git.Repo.init(folder, initial_branch="main")
    with repo.config_writer() as config:
        config.set_value("user", "name", "kcc dev").set_value("user", "email", "dev@kcc.example")
    shas = [add_commit(repo, commit) for commit in commits]
    return repo, shas


def add_commit(repo: git.Repo, commit: Commit) -> str:
    root = Path(repo.working_dir)
    for path, text in commit.files.items():
        target = root / path
        if text is None:
            repo.index.remove([path], working_tree=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        repo.index.add([path])
    return repo.index.commit(commit.subject).hexsha
