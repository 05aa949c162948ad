"""The Level Zero headers and loader of xpu targets come from kregress's cache, not from apt: pinned
Debian packages unpacked there, found by the child through its search paths."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from conftest import run_corpus
from kregress import level_zero, xpu_native
from kregress.adapters import LEVEL_ZERO_WHY_NOT, level_zero_headers
from kregress.debian import download
from kregress.toolchains import META

UNREACHABLE = "http://127.0.0.1:9/debian"  # the discard port: every connection is refused at once
# What fetching and unpacking need (a Debian-like Linux; the tests of what happens without them
# need neither).
debian_tools = pytest.mark.skipif(
    sys.platform != "linux" or not (shutil.which("apt-get") and shutil.which("dpkg-deb")),
    reason="kregress fetches and unpacks the packages with apt-get and dpkg-deb",
)


@pytest.fixture
def no_headers_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh kregress cache and a compiler that finds no ze_api.h, wherever this test runs."""
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("CPATH", "ZE_PATH", "LIBRARY_PATH", "LD_LIBRARY_PATH", level_zero.DEBS_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(level_zero, "level_zero_headers", lambda: False)
    return tmp_path / "cache"


def test_headers_the_compiler_already_finds_are_used_and_nothing_is_provisioned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "include" / "level_zero").mkdir(parents=True)
    (tmp_path / "include" / "level_zero" / "ze_api.h").write_text("/* stand-in */\n")
    monkeypatch.setenv("CPATH", str(tmp_path / "include"))
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KREGRESS_XPU_NATIVE_MIRROR", UNREACHABLE)
    assert level_zero.child_variables() == {}
    assert not (tmp_path / "cache").exists()


def test_files_that_differ_from_the_pins_are_never_unpacked(
    no_headers_here: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    debs = tmp_path / "debs"
    debs.mkdir()
    (debs / "libze-dev_1.8.12-1_amd64.deb").write_bytes(b"not the pinned package")
    monkeypatch.setenv(level_zero.DEBS_VARIABLE, str(debs))
    why = level_zero.child_variables()[LEVEL_ZERO_WHY_NOT]
    pin = level_zero.PINNED["libze-dev"]
    assert f"KREGRESS_LEVEL_ZERO_DEBS={debs} lacks the pinned libze-dev 1.8.12-1 (sha256 {pin.sha256})" in why
    assert "libze-dev_1.8.12-1_amd64.deb has sha256 " in why
    assert f"libze1 1.8.12-1 (sha256 {level_zero.PINNED['libze1'].sha256}): missing" in why
    assert "install them with `apt-get install libze-dev`" in why
    assert "holding libze-dev_1.8.12-1_amd64.deb and libze1_1.8.12-1_amd64.deb" in why
    assert not list(no_headers_here.glob(f"envs/*/{META}"))


def test_xpu_children_get_level_zero_with_the_native_compiler(
    no_headers_here: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compile targets of xpu get xpu_native's variables (kregress.run_state): Level Zero rides with
    them, whether or not ocloc could be provisioned."""
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(level_zero.DEBS_VARIABLE, str(tmp_path / "empty"))
    monkeypatch.setenv(xpu_native.DEBS_VARIABLE, str(tmp_path / "empty"))
    variables = xpu_native.child_variables()
    assert "lacks the pinned libze-dev" in variables[LEVEL_ZERO_WHY_NOT]
    assert "lacks intel-ocloc" in json.loads(variables["KREGRESS_OCLOC_PROVISIONED"])["why_not"]


def fetched_debs(folder: Path) -> Path:
    """The pinned packages, fetched by name as kregress does (network)."""
    names = [f"{package}={pin.version}" for package, pin in level_zero.PINNED.items()]
    return download(folder, level_zero.SUITE, names, level_zero.DEBS_VARIABLE)


@pytest.mark.slow
@debian_tools
def test_provisioned_from_debian_by_name_into_the_cache_only(
    no_headers_here: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logged: list[str] = []
    found = level_zero.provision(log=logged.append)
    assert found["path"] == str(no_headers_here / "envs" / "level-zero-1.8.12-1")
    assert found["versions"] == {"libze-dev": "1.8.12-1", "libze1": "1.8.12-1"}
    assert logged[0].startswith("fetching libze-dev, libze1 from Debian bookworm (")
    assert Path(found["include"], "level_zero", "ze_api.h").is_file()
    loader = Path(found["libraries"], "libze_loader.so")
    assert loader.resolve().name == "libze_loader.so.1.8.0"
    assert not (Path(found["path"]) / "apt").exists() and not (Path(found["path"]) / "debs").exists()
    variables = level_zero.child_variables()
    assert variables == {"CPATH": found["include"], "LIBRARY_PATH": found["libraries"],
                         "LD_LIBRARY_PATH": found["libraries"]}  # fmt: skip
    # Asked again, it is there: nothing runs.
    assert level_zero.provision(log=logged.append) == found and len(logged) == 2
    # The same pinned files from a folder (a machine without apt or network) give the same files.
    debs = fetched_debs(tmp_path / "fetched")
    monkeypatch.setenv(level_zero.DEBS_VARIABLE, str(debs))
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "other-cache"))
    again = level_zero.provision(log=logged.append)
    assert logged[2:] == [f"unpacking the Level Zero headers and loader from the .deb files in {debs}"]
    assert tree(Path(again["path"]) / "root") == tree(Path(found["path"]) / "root")


def tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): os.readlink(p) if p.is_symlink() else level_zero.sha256_of(p)
            for p in folder.rglob("*") if p.is_file() or p.is_symlink()}  # fmt: skip


@pytest.mark.slow
@debian_tools
@pytest.mark.skipif(shutil.which("g++") is None, reason="triton-xpu builds its helper with g++")
def test_xpu_pvc_compiles_with_no_system_wide_level_zero(tmp_path: Path) -> None:
    """The README's first command on a machine where nobody ran apt: xpu:pvc PASSes."""
    if level_zero_headers():
        pytest.skip("the Level Zero headers are installed here (a system-wide libze-dev): nothing to prove")
    (tmp_path / "no-debs").mkdir()  # no ocloc: this test is about Level Zero, the native figures SKIP
    env = {
        "KREGRESS_CACHE_DIR": str(tmp_path / "cache"),
        "KREGRESS_XPU_NATIVE_DEBS": str(tmp_path / "no-debs"),
    }
    run = run_corpus(tmp_path, "kinds/vector_add", args=("--target", "xpu:pvc"), env=env)
    compiles = run.item("vector_add::compiles-add[xpu:pvc]")
    assert compiles["outcome"] == "PASS", (compiles["message"], run.output[-3000:])
    assert compiles["toolchain"]["triton"] == "3.3.0b1"
    shared = run.item("vector_add::resource-shared_bytes-add[xpu:pvc]")
    assert (shared["outcome"], shared["limit"]) == ("PASS", 131072)
    provisioned = tmp_path / "cache" / "envs" / "level-zero-1.8.12-1"
    assert json.loads((provisioned / META).read_text())["versions"]["libze-dev"] == "1.8.12-1"
    assert not level_zero_headers()  # still: nothing was installed system-wide


@pytest.mark.slow
@debian_tools
def test_xpu_pvc_skip_says_why_level_zero_could_not_be_provisioned(tmp_path: Path) -> None:
    if level_zero_headers():
        pytest.skip("the Level Zero headers are installed here (a system-wide libze-dev): nothing to prove")
    (tmp_path / "no-debs").mkdir()
    env = {"KREGRESS_CACHE_DIR": str(tmp_path / "cache"), "KREGRESS_XPU_NATIVE_MIRROR": UNREACHABLE,
           "KREGRESS_XPU_NATIVE_DEBS": str(tmp_path / "no-debs")}  # fmt: skip
    run = run_corpus(tmp_path, "kinds/vector_add", args=("--target", "xpu:pvc"), env=env)
    compiles = run.item("vector_add::compiles-add[xpu:pvc]")
    assert compiles["outcome"] == "SKIP", run.output[-3000:]
    message = compiles["message"]
    assert "builds xpu:pvc against the Level Zero headers, which are missing here; kregress could not " \
        "provision them (apt-get update for Debian bookworm failed (exit 100):" in message  # fmt: skip
    assert f"Failed to fetch {UNREACHABLE}/dists/bookworm/InRelease" in message
    assert "install them with `apt-get install libze-dev`, or set KREGRESS_LEVEL_ZERO_DEBS to a folder " \
        "holding libze-dev_1.8.12-1_amd64.deb and libze1_1.8.12-1_amd64.deb" in message  # fmt: skip
    assert not list((tmp_path / "cache" / "envs").glob(f"level-zero-*/{META}"))
