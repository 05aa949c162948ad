"""What cannot run here is a SKIP with its reason; what broke is an ERROR with its cause and line;
a figure that cannot be read is an ERROR, never a 0 that passes every bound."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import CORPORA, run_corpus
from kregress.adapters import Unsupported
from kregress.adapters.triton_aot import amdgcn_figures
from kregress.worker import CaseError, load_repro


def broken_case(tmp_path: Path, repro: str) -> Path:
    folder = tmp_path / "corpora" / "case_under_test"
    shutil.copytree(CORPORA / "kinds" / "vector_add", folder)
    (folder / "repro.py").write_text(repro)
    return folder


def judge(tmp_path: Path, repro: str) -> dict:
    folder = broken_case(tmp_path, repro)
    run = run_corpus(tmp_path, str(folder), args=("--target", "cpu:interpreter", "-k", "numerics"))
    return run.item("case_under_test::numerics-check_add[cpu:interpreter]") | {"output": run.output}


@pytest.mark.parametrize(
    ("repro", "line", "error"),
    [
        ("import torch\n\ndef check_add(:\n    pass\n", 3, "SyntaxError: invalid syntax"),
        (
            "import torch\nimport no_such_module_here\n",
            2,
            "ModuleNotFoundError: No module named 'no_such_module_here'",
        ),
        ("x = 1\nraise RuntimeError('repro broke at import')\n", 2, "RuntimeError: repro broke at import"),
    ],
)
def test_a_repro_that_does_not_import_is_an_error_at_its_line(
    tmp_path: Path, repro: str, line: int, error: str
) -> None:
    item = judge(tmp_path, repro)
    assert item["outcome"] == "ERROR", item["output"][-2000:]
    assert f"repro.py:{line}: {error}" in item["message"]
    assert "Verdict(" not in item["output"] and "kregress/plugin.py" not in item["output"]
    assert f"repro.py:{line}: {error}" in item["output"]


def test_a_missing_framework_the_case_declares_is_a_skip_and_any_other_module_an_error(
    tmp_path: Path,
) -> None:
    repro = tmp_path / "repro.py"
    repro.write_text("import nvfuser\n")
    with pytest.raises(Unsupported, match=r"repro\.py needs nvfuser, which this environment lacks"):
        load_repro(repro, "nvfuser")
    with pytest.raises(CaseError, match=r"repro.py:1: ModuleNotFoundError: No module named 'nvfuser'"):
        load_repro(repro, "triton")


def test_an_amdgcn_figure_that_cannot_be_read_raises_instead_of_reading_zero() -> None:
    complete = (
        "  .vgpr_count:     24\n  .vgpr_spill_count: 0\n; ScratchSize: 0\n"
        "  .amdhsa_private_segment_fixed_size 0\n"
    )
    assert amdgcn_figures(complete) == {
        "registers": 24,
        "spill_bytes": 0,
        "stack_bytes": 0,
        "scratch_bytes": 0,
    }
    with pytest.raises(ValueError, match=r"no line matching .*vgpr_spill_count"):
        amdgcn_figures(complete.replace(".vgpr_spill_count", ".spill_vgprs"))
