"""xpu:pvc is judged for real on a CPU machine, inside the triton-xpu environment the matrix names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import run_corpus
from kregress import level_zero
from kregress.adapters import LEVEL_ZERO_WHY_NOT


def level_zero_or_skip() -> None:
    """xpu items build against the Level Zero headers: a system-wide libze-dev, else the ones kregress
    provisions into its cache (here first; test_level_zero shows the SKIP where it cannot)."""
    why = level_zero.child_variables().get(LEVEL_ZERO_WHY_NOT)
    if why:
        pytest.skip(f"the Level Zero headers are missing here; {why}")


@pytest.mark.slow
def test_xpu_pvc_compiles_in_its_matrix_toolchain(tmp_path: Path) -> None:
    level_zero_or_skip()
    run = run_corpus(tmp_path, "kinds/vector_add", args=("--target", "xpu:pvc"))
    compiles = run.item("vector_add::compiles-add[xpu:pvc]")
    assert compiles["outcome"] == "PASS", run.output[-3000:]
    assert compiles["toolchain"]["triton"] == "3.3.0b1"
    assert compiles["toolchain_spec"] == "triton-xpu==3.3.0b1"
    shared = run.item("vector_add::resource-shared_bytes-add[xpu:pvc]")
    assert (shared["outcome"], shared["limit"]) == ("PASS", 131072)
    # Spills come from the native code IGC builds for PVC (.ze_info), with the ocloc that built it.
    spills = run.item("vector_add::resource-spill_bytes-add[xpu:pvc]")
    assert spills["outcome"] == "PASS", spills["message"]
    assert set(spills["measured"]["spill_bytes"].values()) == {0}
    assert spills["toolchain"]["ocloc"]


def scratch_run(tmp_path: Path, env: dict | None = None):
    level_zero_or_skip()
    return run_corpus(tmp_path, "xpu_native/scratch", args=("--target", "xpu:pvc"), env=env)


@pytest.mark.slow
def test_native_pvc_figures_and_the_ptss_limit_come_from_igc(tmp_path: Path) -> None:
    run = scratch_run(tmp_path)
    fits = run.item("scratch::spills-fit[xpu:pvc]")
    assert fits["outcome"] == "PASS", run.output[-3000:]
    assert (fits["measured"]["scratch_bytes"], fits["limit"]) == (
        {"num_warps=1,grf_mode=small": 131072},
        262144,
    )
    spills = run.item("scratch::no-spills[xpu:pvc]")
    assert spills["outcome"] == "FAIL" and spills["failure_kind"] == "OVER_LIMIT"
    measured = spills["measured"]["spill_bytes"]["num_warps=1,grf_mode=small"]
    assert measured > 100_000 and f"spill_bytes {measured} > limit 0" in spills["message"]
    assert run.item("scratch::small-grf[xpu:pvc]")["outcome"] == "PASS"
    assert run.item("scratch::simd[xpu:pvc]")["outcome"] == "PASS"
    overflow = run.item("scratch::overflow-fits[xpu:pvc]")
    assert (overflow["outcome"], overflow["failure_kind"]) == ("FAIL", "OUT_OF_RESOURCES")
    needed = overflow["measured"]["scratch_bytes"]["num_warps=1,grf_mode=small"]
    assert needed > 262144 and overflow["limit"] == 262144
    assert f"{needed} bytes (max permitted PTSS 262144 bytes)" in overflow["message"]


@pytest.mark.slow
def test_without_a_working_ocloc_native_figures_skip_naming_what_to_install(tmp_path: Path) -> None:
    broken = tmp_path / "bin" / "ocloc"
    broken.parent.mkdir()
    broken.write_text("#!/bin/sh\necho 'ocloc: unknown option -o' >&2\nexit 2\n")
    broken.chmod(0o755)
    (tmp_path / "no-debs").mkdir()
    env = {"KREGRESS_XPU_NATIVE_DEBS": str(tmp_path / "no-debs"),
           "PATH": f"{broken.parent}{os.pathsep}{os.environ['PATH']}"}  # fmt: skip
    run = scratch_run(tmp_path, env)
    for name in ("spills-fit", "no-spills", "small-grf", "overflow-fits"):
        item = run.item(f"scratch::{name}[xpu:pvc]")
        assert item["outcome"] == "SKIP", (name, item["message"])
        assert (
            f"{broken} cannot build native code for pvc (exit 2: ocloc: unknown option -o)" in item["message"]
        )
        assert "install intel-ocloc, or set KREGRESS_XPU_NATIVE_DEBS" in item["message"]
