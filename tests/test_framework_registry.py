"""A framework is one module of kregress.frameworks: found there, and nowhere else named.

Shown twice: a toy framework added to a copy of the package as its only change is planned, built
and judged by the plugin; and nvFuser, written against its own frontend as one module, registers,
scaffolds a case, refuses toolchains its wheels cannot serve, and SKIPs saying what is missing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, package_with
from kregress.frameworks import FRAMEWORKS, framework_of_source
from kregress.manifest import load_case
from kregress.scaffold import STARTERS, write_case
from kregress.toolchains import EnvironmentCache, Toolchain, ToolchainError

NVFUSER = "nvfuser-cu128-torch210==0.2.36.dev20260301"

LISTING = '''"""listing: a kernel is its own assembly text; the adapter "compiles" it by writing it out."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

from kregress.frameworks.base import Framework


@dataclass(frozen=True)
class ListingKernel:
    text: str


@contextmanager
def compile_session(target_spec):
    yield target_spec


def compile_kernel(kernel, target_spec, out_dir, trace_passes=False):
    from kregress.adapters import ConfigResult

    (out_dir / "config0.lst").write_text(kernel.text)
    return [ConfigResult(label="default", ir={"listing": "config0.lst"})]


def toolchain_versions():
    return {"listing": "1.0"}


FRAMEWORK = Framework(
    "listing",
    "Listing",
    target_kinds=frozenset({"compile"}),
    unsupported_kinds="a listing only compiles",
    compile_backends=frozenset({"cuda"}),
    adapter=__name__,
    ir_stages=("listing",),
    wrappers=(ListingKernel,),
)
'''

LISTING_CASE = """
title = "two adds where one was wanted"
framework = "listing"
[upstream]
repo = "o/r"
issue = "https://github.com/o/r/issues/1"
[[expect]]
name = "one-add"
kind = "ir"
kernel = "adds"
stage = "listing"
pattern = "^add"
max_count = 1
[[expect]]
name = "has-adds"
kind = "ir"
kernel = "adds"
stage = "listing"
pattern = "^add"
min_count = 2
"""

LISTING_REPRO = """
from kregress.case import ListingKernel

adds = ListingKernel("add r1, r2\\nadd r3, r4\\nret\\n")
"""


def test_a_new_framework_is_one_module(tmp_path: Path) -> None:
    site = package_with(tmp_path, "frameworks/listing.py", LISTING)
    case = tmp_path / "work" / "corpus" / "two_adds"
    case.mkdir(parents=True)
    (case / "case.toml").write_text(LISTING_CASE)
    (case / "repro.py").write_text(LISTING_REPRO)
    report = tmp_path / "results.json"
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "-q",
         "--kregress-json", str(report)],
        cwd=case.parent.parent, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert report.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    items = {(i["expectation"], i["target"]): i for i in json.loads(report.read_text())["items"]}
    assert items[("has-adds", "cuda:sm_90")]["outcome"] == "PASS", items
    assert items[("one-add", "cuda:sm_90")]["outcome"] == "FAIL"
    assert items[("one-add", "cuda:sm_90")]["toolchain"]["listing"] == "1.0"
    assert items[("one-add", "hip:gfx942")]["outcome"] == "SKIP"  # the adapter builds CUDA only
    assert "Listing adapter builds CUDA targets only" in items[("one-add", "hip:gfx942")]["message"]
    assert not any(target == "cpu:interpreter" for _, target in items)  # not applicable: not collected
    assert done.returncode == 1


def test_no_module_but_its_own_names_nvfuser() -> None:
    named = [
        path.relative_to(REPO)
        for folder in ("runner", "bisect")
        for path in (REPO / folder).rglob("*.py")
        if re.search("nvfuser", path.read_text(), re.I)
    ]
    assert named == [Path("runner/frameworks/nvfuser.py")]


def test_without_its_module_nvfuser_is_gone_and_the_rest_stands(tmp_path: Path) -> None:
    site = package_with(tmp_path, "frameworks/unused.py", "")
    (site / "kregress" / "frameworks" / "nvfuser.py").unlink()
    probe = (
        "from kregress.frameworks import FRAMEWORKS; from kregress.scaffold import STARTERS; "
        "from kregress.toolchains import COMPANIONS; import kregress.plugin; "
        "print(sorted(FRAMEWORKS), sorted(STARTERS), any('nvfuser' in c.package for c in COMPANIONS))"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=False)
    expected = "['gluon', 'tilelang', 'triton'] ['gluon', 'tilelang', 'triton'] False"
    assert done.stdout.strip() == expected, done.stderr


def test_nvfuser_registers_with_its_frontend_and_its_source_stage() -> None:
    nvfuser = FRAMEWORKS["nvfuser"]
    assert nvfuser.target_kinds == {"device"} and nvfuser.compiles_on == "device"
    assert nvfuser.adapter == "kregress.frameworks.nvfuser"
    assert "cuda_source" in nvfuser.ir_stages
    assert framework_of_source("from nvfuser_direct import FusionDefinition\n") is nvfuser
    assert framework_of_source("import triton\n").name == "triton"


def test_nvfuser_starter_is_a_valid_case_of_its_framework(tmp_path: Path) -> None:
    folder = write_case(tmp_path, "row_sum", "nvfuser", "https://github.com/NVIDIA/Fuser/issues/1")
    case = load_case(folder / "case.toml")
    assert case.manifest.framework == "nvfuser"
    assert {e.kind for _, e in case.expectations()} == {"compiles", "numerics", "ir"}
    assert "FusionDefinition" in (folder / "repro.py").read_text()
    assert STARTERS["nvfuser"].target == "cuda:device"


def test_nvfuser_items_skip_naming_what_is_missing(tmp_path: Path) -> None:
    """Here (CPython 3.11, torch without nvFuser): every item SKIPs, and says which Python and
    torch nvFuser's wheels need; its compile targets are not collected at all."""
    if (sys.version_info.major, sys.version_info.minor) == (3, 12):
        pytest.skip("this check is for an interpreter nvFuser's wheels do not serve")
    folder = write_case(tmp_path / "corpus", "row_sum", "nvfuser", "https://github.com/NVIDIA/Fuser/issues/1")
    report = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(folder), "--backend", "cuda", "-p", "no:cacheprovider", "-q",
         "--kregress-json", str(report)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    items = json.loads(report.read_text())["items"]
    assert {i["expectation"] for i in items} == {"compiles", "numerics", "one-kernel"}, done.stdout[-2000:]
    for item in items:
        assert item["outcome"] == "SKIP", item
        assert "needs nvfuser_direct" in item["message"]
        assert f"Python {sys.version_info.major}.{sys.version_info.minor}" in item["message"]
        assert "CPython 3.10 or 3.12" in item["message"]
    assert done.returncode == 0
    assert "nvFuser compiles only at run time on a CUDA device" in done.stdout


def test_an_nvfuser_line_brings_its_torch() -> None:
    toolchain = Toolchain.parse(NVFUSER)
    assert toolchain.companions() == ["torch==2.10.*"]
    assert toolchain.brings("torch") and not Toolchain.parse("triton==3.2.0").brings("torch")


@pytest.mark.parametrize(
    ("spec", "python", "refused"),
    [
        (NVFUSER, "3.12", None),
        (NVFUSER, "3.10", None),
        (NVFUSER, "3.11", "built for CPython 3.10 and 3.12 only, and this environment's Python is 3.11"),
        (f"{NVFUSER} torch==2.11.0", "3.12", "torch 2.10.x only, and the toolchain also names torch==2.11.0"),
        (f"{NVFUSER} torch==2.10.1", "3.12", None),
        ("nvfuser-cu128==0.2.36", "3.12", "stubs that download the real wheel from NVIDIA's own index"),
        ("triton==3.2.0", "3.11", None),
    ],
)
def test_a_toolchain_nvfuser_cannot_use_is_refused(spec: str, python: str, refused: str | None) -> None:
    why = Toolchain.parse(spec).refusal(python)
    assert (why is None) if refused is None else (refused in (why or "")), why


def test_a_refused_toolchain_is_refused_before_installing(tmp_path: Path) -> None:
    if (sys.version_info.major, sys.version_info.minor) in ((3, 10), (3, 12)):
        pytest.skip("nvFuser's wheels serve this interpreter")
    with pytest.raises(ToolchainError, match=r"CPython 3\.10 and 3\.12 only"):
        EnvironmentCache(tmp_path).get(Toolchain.parse(NVFUSER))
    assert not any(tmp_path.iterdir())  # nothing built, nothing left


@pytest.mark.slow
def test_an_nvfuser_line_resolves_for_python_312_with_its_torch(tmp_path: Path) -> None:
    """Resolved against PyPI for CPython 3.12 on Linux, without installing: the line and its torch."""
    from kregress.toolchains import uv_binary

    uv = uv_binary()  # the one kregress builds environments with (.venv's, where PATH has none)
    if uv is None:
        pytest.skip("no uv on PATH nor beside this interpreter")
    toolchain = Toolchain.parse(NVFUSER)
    requirements = tmp_path / "requirements.in"
    requirements.write_text("\n".join([*toolchain.requirements, *toolchain.companions()]) + "\n")
    done = subprocess.run(
        [uv, "pip", "compile", "--python-version", "3.12", "--python-platform", "x86_64-manylinux_2_28",
         "--no-header", str(requirements)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    if done.returncode != 0 and re.search(r"(?i)(connect|dns|network|timed out)", done.stderr):
        pytest.skip(f"PyPI cannot be reached: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert NVFUSER in done.stdout
    assert re.search(r"^torch==2\.10\.\d+", done.stdout, re.M), done.stdout
