"""Backends and frameworks are declared once (kregress.backends, kregress.frameworks): the plan,
the devices, the worker and the judge read those tables, and what a table claims of an adapter
holds when the adapter really compiles."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path
from typing import get_args

import pytest

from conftest import CORPORA, run_written_case
from kregress import level_zero
from kregress.adapters import LEVEL_ZERO_WHY_NOT
from kregress.backends import BACKENDS
from kregress.collection import plan
from kregress.frameworks import FRAMEWORKS
from kregress.kinds.resource import ResourceMetric
from kregress.manifest import Case, load_case
from kregress.matrix import Backend, load_matrix

METRICS = get_args(ResourceMetric)


def test_the_matrix_schema_knows_exactly_the_declared_backends() -> None:
    assert set(get_args(Backend)) == set(BACKENDS)
    assert {t.backend for t in load_matrix().targets.values()} <= set(BACKENDS)


def test_every_declared_adapter_has_the_compile_interface() -> None:
    for framework in FRAMEWORKS.values():
        if framework.adapter is None:
            assert framework.no_adapter, f"{framework.name}: say why it has no adapter"
            continue
        module = importlib.import_module(framework.adapter)
        for name in ("compile_session", "compile_kernel", "toolchain_versions"):
            assert callable(getattr(module, name, None)), f"{framework.adapter} lacks {name}"
        assert set(framework.figures) <= set(BACKENDS)
        assert all(figures <= set(METRICS) for figures in framework.figures.values())


def every_figure(framework: str) -> str:
    """A manifest with a resource expectation (a generous limit) on each figure kregress knows."""
    expect = "".join(
        f'[[expect]]\nkind = "resource"\nkernel = "add"\nmetric = "{m}"\nmax = 1_000_000\n\n' for m in METRICS
    )
    return (
        f'title = "figures"\nframework = "{framework}"\n\n[upstream]\nrepo = "example/kernels"\nissue = "https://github.com/example/kernels/issues/1"\n\n'
        f'[reproduce]\nguard = "a fixture of kregress\'s own tests"\n\n{expect}'
    )


def resource_case(tmp_path: Path, framework: str) -> Case:
    folder = tmp_path / "figures"
    folder.mkdir()
    (folder / "case.toml").write_text(every_figure(framework))
    (folder / "repro.py").write_text("")
    return load_case(folder / "case.toml")


@pytest.mark.parametrize(
    ("framework", "target", "metric", "expected"),
    [
        ("triton", "cuda:sm_90", "stack_bytes", None),  # ptxas reports it: judged after the compile
        ("triton", "xpu:pvc", "stack_bytes", "the Triton adapter does not read stack_bytes on xpu targets"),
        ("tilelang", "cuda:sm_90", "shared_bytes", "the TileLang adapter does not read shared_bytes on cuda"),
        # the framework's own refusal comes first: a build that cannot happen names that
        ("tilelang", "hip:gfx942", "registers", "the TileLang adapter builds CUDA targets only"),
    ],
)
def test_a_figure_the_adapter_never_reads_skips_at_plan_time(
    tmp_path: Path, framework: str, target: str, metric: str, expected: str | None
) -> None:
    case = resource_case(tmp_path, framework)
    expectation = next(e for e in case.manifest.expect if e.metric == metric)
    decided = plan(case, expectation, load_matrix().targets[target])
    assert decided.collect
    if expected is None:
        assert decided.skip is None
    else:
        assert decided.skip is not None and decided.skip.startswith(expected)


def test_no_compile_target_for_a_framework_without_one(tmp_path: Path) -> None:
    case = resource_case(tmp_path, "nvfuser")
    decided = plan(case, case.manifest.expect[0], load_matrix().targets["cuda:sm_90"])
    assert not decided.collect and decided.not_applicable


@pytest.mark.parametrize("target", ["cuda:sm_90", "hip:gfx942"])
def test_the_declared_figures_are_what_a_real_compile_measures(tmp_path: Path, target: str) -> None:
    """Each figure the Triton table claims for the backend is measured; the others SKIP unbuilt."""
    repro = (CORPORA / "kinds" / "vector_add" / "repro.py").read_text()
    run = run_written_case(tmp_path, "figures", repro, every_figure("triton"), args=("--target", target))
    declared = FRAMEWORKS["triton"].figures[target.split(":")[0]]
    for metric in METRICS:
        item = run.item(f"figures::resource-{metric}-add[{target}]")
        if metric in declared:
            assert item["outcome"] == "PASS", (metric, item["message"], run.output[-2000:])
            assert all(isinstance(v, int) for v in item["measured"][metric].values())
        else:
            assert item["outcome"] == "SKIP" and "does not read" in item["message"]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("dpkg") is None, reason="IGC is provisioned from Intel's debs")
def test_the_declared_xpu_figures_are_what_igc_reports(tmp_path: Path) -> None:
    # Level Zero: a system-wide libze-dev, else provisioned into kregress's cache (here first).
    why = level_zero.child_variables().get(LEVEL_ZERO_WHY_NOT)
    if why:
        pytest.skip(f"the Level Zero headers are missing here; {why}")
    repro = (CORPORA / "kinds" / "vector_add" / "repro.py").read_text()
    run = run_written_case(tmp_path, "figures", repro, every_figure("triton"), args=("--target", "xpu:pvc"))
    for metric in FRAMEWORKS["triton"].figures["xpu"]:
        item = run.item(f"figures::resource-{metric}-add[xpu:pvc]")
        assert item["outcome"] == "PASS", (metric, item["message"], run.output[-2000:])
    stack = run.item("figures::resource-stack_bytes-add[xpu:pvc]")
    assert stack["outcome"] == "SKIP" and "does not read stack_bytes" in stack["message"]
