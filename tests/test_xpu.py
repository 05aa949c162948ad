"""xpu:pvc is judged for real on a CPU machine, inside the triton-xpu environment the matrix names."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_corpus

LEVEL_ZERO = Path("/usr/include/level_zero/ze_api.h")


@pytest.mark.slow
def test_xpu_pvc_compiles_in_its_matrix_toolchain(tmp_path: Path) -> None:
    run = run_corpus(tmp_path, "kinds/vector_add", args=("--target", "xpu:pvc"))
    compiles = run.item("vector_add::compiles-add[xpu:pvc]")
    if not LEVEL_ZERO.exists():
        assert compiles["outcome"] == "SKIP"
        assert "apt-get install libze-dev" in compiles["message"]
        pytest.skip("Level Zero headers missing: the item SKIPs with the command that fixes it (checked)")
    assert compiles["outcome"] == "PASS", run.output[-3000:]
    assert compiles["toolchain"]["triton"] == "3.3.0b1"
    assert compiles["toolchain_spec"] == "triton-xpu==3.3.0b1"
    shared = run.item("vector_add::resource-shared_bytes-add[xpu:pvc]")
    assert (shared["outcome"], shared["limit"]) == ("PASS", 131072)
    # What the XPU toolchain does not report is a reasoned SKIP, never a PASS.
    spills = run.item("vector_add::resource-spill_bytes-add[xpu:pvc]")
    assert spills["outcome"] == "SKIP"
    assert spills["message"] == "xpu:pvc does not report spill_bytes with this toolchain"
