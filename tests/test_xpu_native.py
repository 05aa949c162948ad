"""Provisioning Intel's offline compiler: from .deb files made here with dpkg-deb (a stand-in ocloc
built with the C compiler, the machine's own loader), and, in the slow tests, the real one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from conftest import stand_in_debs
from kregress import level_zero
from kregress.adapters import ocloc
from kregress.toolchains import EnvironmentCache
from kregress.xpu_native import DEBS_VARIABLE, PACKAGES, NativeXpuError, child_variables, provision

# An ocloc that answers --version and "builds" an ELF file for `compile ... -o OUT`.
FAKE_OCLOC = r"""
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--version")) { puts("Command was: ocloc --version\n1.2.3"); return 0; }
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            FILE *out = fopen(argv[i + 1], "wb"); fputs("\177ELF", out); fclose(out); return 0;
        }
    }
    return 1;
}
"""


@pytest.fixture(scope="module")
def fake_debs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("debs")
    program = ("intel-ocloc", "usr/bin/ocloc-1.2.3", FAKE_OCLOC)
    return stand_in_debs(folder, PACKAGES, program, "usr/lib/x86_64-linux-gnu")


def provision_in(cache: str, debs: str, log_file: str) -> str:
    os.environ[DEBS_VARIABLE] = debs

    def log(message: str) -> None:
        with open(log_file, "a") as out:
            out.write(message + "\n")

    return provision(EnvironmentCache(Path(cache)), log=log)["path"]


def test_provisioned_twice_at_once_is_built_once(fake_debs: Path, tmp_path: Path) -> None:
    log = tmp_path / "log"
    with ProcessPoolExecutor(2) as pool:
        paths = list(
            pool.map(provision_in, [str(tmp_path / "envs")] * 2, [str(fake_debs)] * 2, [str(log)] * 2)
        )
    assert paths[0] == paths[1]
    assert log.read_text().count("unpacking") == 1, log.read_text()
    assert [p.name for p in (tmp_path / "envs").iterdir() if not p.name.endswith(".lock")] == [
        Path(paths[0]).parent.parent.name
    ]
    answer = subprocess.run([paths[0], "--version"], capture_output=True, text=True, check=True).stdout
    assert answer.splitlines()[-1] == "1.2.3"
    meta = json.loads((Path(paths[0]).parent.parent / "kregress-env.json").read_text())
    assert meta["versions"]["intel-ocloc"] == "1.0-11" and meta["versions"]["ocloc"] == "1.2.3"
    assert meta["source"] == f"the .deb files in {fake_debs}"
    listed = EnvironmentCache(tmp_path / "envs").entries()
    assert [e["toolchain"].split()[0] for e in listed] == ["xpu-native"]


def no_level_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about ocloc: the Level Zero packages the child also asks for come from an
    empty folder, so they fail at once (and say so) instead of being fetched from Debian."""
    (tmp_path / "no-level-zero").mkdir()
    monkeypatch.setenv(level_zero.DEBS_VARIABLE, str(tmp_path / "no-level-zero"))


def test_a_folder_lacking_a_package_names_it_and_what_to_do(
    fake_debs: Path, tmp_path: Path, monkeypatch
) -> None:
    partial = tmp_path / "partial"
    shutil.copytree(fake_debs, partial)
    next(partial.glob("libigc2_*.deb")).unlink()
    monkeypatch.setenv(DEBS_VARIABLE, str(partial))
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    no_level_zero(tmp_path, monkeypatch)
    with pytest.raises(NativeXpuError, match=r"lacks libigc2 \(it needs the .deb files of intel-ocloc"):
        provision()
    variables = child_variables()
    assert ocloc.CANDIDATES_VARIABLE not in variables
    why = json.loads(variables[ocloc.PROVISIONED_VARIABLE])["why_not"]
    assert "lacks libigc2" in why and "install intel-ocloc, or set KREGRESS_XPU_NATIVE_DEBS" in why


def test_child_prefers_a_working_ocloc_and_says_why_it_passed_over_a_broken_one(
    fake_debs: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv(DEBS_VARIABLE, str(fake_debs))
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    no_level_zero(tmp_path, monkeypatch)
    broken = tmp_path / "bin" / "ocloc"
    broken.parent.mkdir()
    broken.write_text("#!/bin/sh\necho 'ocloc: unknown option -o' >&2\nexit 2\n")
    broken.chmod(0o755)
    monkeypatch.setenv("PATH", f"{broken.parent}{os.pathsep}{os.environ['PATH']}")
    for name, value in child_variables().items():
        monkeypatch.setenv(name, value)
    spirv = b"\x03\x02\x23\x07" + bytes(60)
    chosen = ocloc.choose("pvc", spirv)
    assert chosen.path is not None and chosen.path.endswith("bin/ocloc") and chosen.path != str(broken)
    assert chosen.version == "1.2.3"
    assert chosen.rejected == [
        f"{broken} cannot build native code for pvc (exit 2: ocloc: unknown option -o)"
    ]
    # The probe build is cached by content: asked again, nothing runs.
    assert ocloc.build(chosen.path, spirv, "pvc", "", chosen.identity).cached


def test_nothing_that_builds_native_code_is_a_reason_naming_every_candidate(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv(ocloc.CANDIDATES_VARIABLE, raising=False)
    monkeypatch.setenv(ocloc.PROVISIONED_VARIABLE, json.dumps({"why_not": "install intel-ocloc"}))
    chosen = ocloc.choose("dg2", b"\x03\x02\x23\x07")
    assert chosen.path is None
    assert chosen.why_not == "there is no ocloc on this machine; install intel-ocloc"


def test_ze_info_figures_and_the_ptss_error_are_read_as_igc_writes_them() -> None:
    build = ocloc.NativeBuild(
        245,
        "Compilation from IR - skipping loading of FCL\n\nerror: in kernel 'k': total scratch space exceeds "
        "HW supported limit: 560896 bytes (max permitted PTSS 262144 bytes)\nerror: backend compiler "
        "failed build.\n\nBuild failed with error code: -11\n",
    )
    assert not build.ok
    assert build.scratch_overflow() == (560896, 262144)
    assert build.diagnosis().splitlines()[-1].startswith("error: in kernel 'k': total scratch space")
    assert ocloc.NativeBuild(1, "error: something else\n").scratch_overflow() is None


if sys.platform != "linux":  # the stand-in packages and loaders are Linux's
    pytestmark = pytest.mark.skip(reason="provisioning unpacks Debian packages: Linux only")
