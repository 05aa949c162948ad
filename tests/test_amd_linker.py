"""The ld.lld that AMD code of Triton up to 3.4 links with, where the machine has none: provisioned
from .deb files made here (a stand-in ld.lld built with the C compiler), and, in the slow test,
Debian's real lld-19 linking a real gfx942 compile."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import stand_in_debs
from kregress import amd_linker, machine_tools
from kregress.debian import ProvisionError

FAKE_LLD = r"""
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--version")) {
            puts("Stand-in LLD 19.9.9 (compatible with GNU linkers)");
            return 0;
        }
    return 1;
}
"""


@pytest.fixture(scope="module")
def fake_debs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("debs")
    program = ("lld-19", amd_linker.PROGRAM, FAKE_LLD)
    # Debian 12's libc6 keeps its loader outside /usr
    return stand_in_debs(folder, amd_linker.PACKAGES, program, "lib/x86_64-linux-gnu")


@pytest.fixture
def machine_without_linker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(amd_linker, "machine_linker", lambda: None)
    amd_linker.identity.cache_clear()
    yield
    amd_linker.identity.cache_clear()


def test_a_machine_without_a_linker_hands_amd_children_the_provisioned_one(
    fake_debs: Path, machine_without_linker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(amd_linker.DEBS_VARIABLE, str(fake_debs))
    handed = machine_tools.child_variables("hip")
    linker = handed[amd_linker.LINKER_VARIABLE]
    assert linker.startswith(os.environ["KREGRESS_CACHE_DIR"]) and linker.endswith("bin/ld.lld")
    shown = subprocess.run([linker, "--version"], capture_output=True, text=True, check=True).stdout
    assert shown.startswith("Stand-in LLD 19.9.9")
    # A remembered judgement keys on the linker by its own words.
    assert machine_tools.identity("hip") == "Stand-in LLD 19.9.9 (compatible with GNU linkers)"
    assert machine_tools.child_variables("cuda") == {} and machine_tools.identity("cuda") is None


def test_a_machine_with_a_linker_keeps_it_and_provisions_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(amd_linker, "machine_linker", lambda: "/opt/rocm/llvm/bin/ld.lld")
    assert amd_linker.linker() == ("/opt/rocm/llvm/bin/ld.lld", "this machine's")
    assert machine_tools.child_variables("hip") == {}  # the child finds it itself
    assert not (tmp_path / "cache").exists()


def test_no_linker_to_be_had_says_what_to_install(
    fake_debs: Path, machine_without_linker: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    partial = tmp_path / "partial"
    partial.mkdir()
    for deb in fake_debs.glob("*.deb"):
        if not deb.name.startswith("libllvm19_"):
            shutil.copy(deb, partial)
    monkeypatch.setenv(amd_linker.DEBS_VARIABLE, str(partial))
    with pytest.raises(ProvisionError, match="lacks libllvm19"):
        amd_linker.provision()
    found, why = amd_linker.linker()
    assert found is None
    assert "install Debian's lld-19" in why and amd_linker.DEBS_VARIABLE in why
    assert machine_tools.child_variables("hip") == {}
    assert machine_tools.identity("hip") == "none"


@pytest.mark.slow
def test_debians_lld_provisioned_here_links_a_gfx942_compile_of_triton_3_3(tmp_path: Path) -> None:
    """The real packages, fetched by name from Debian 12, link what triton 3.3.0 builds for gfx942
    (a release that links with an external ld.lld): the case's items are judged, not SKIPped."""
    env = {**os.environ, "KREGRESS_CACHE_DIR": str(tmp_path / "cache")}
    env.pop(amd_linker.DEBS_VARIABLE, None)
    built = subprocess.run([sys.executable, "-m", "kregress.cli", "envs", "build", "amd-linker"], env=env,
                           capture_output=True, text=True, timeout=900, check=False)  # fmt: skip
    assert built.returncode == 0, built.stderr
    linker = built.stdout.split()[0]
    assert "Debian LLD 19" in built.stdout
    corpus = Path(__file__).parents[1] / "corpus"
    judged = subprocess.run(
        [sys.executable, "-m", "pytest", str(corpus / "amd_atomic_scope_cta"), "--backend", "cpu",
         "--target", "hip:gfx942", "--toolchain", "triton==3.3.0", "-p", "no:cacheprovider", "-q", "-rA"],
        env={**os.environ, amd_linker.LINKER_VARIABLE: linker},  # the run's own toolchain cache
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert "2 passed" in judged.stdout, judged.stdout[-3000:]
