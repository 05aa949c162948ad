"""Options of the plugin: usage errors list what is valid; --help explains; ids filter with -k."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from conftest import copy_corpus


def pytest_in(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_unknown_target_is_a_usage_error_listing_valid_ones(tmp_path: Path) -> None:
    done = pytest_in(tmp_path, "--target", "cuda:sm_75")
    assert done.returncode == 4  # pytest's usage error
    assert "--target 'cuda:sm_75' is not in the matrix file; valid targets: cpu:interpreter" in done.stderr
    assert "hip:gfx942" in done.stderr


def test_device_target_of_another_backend_is_refused(tmp_path: Path) -> None:
    done = pytest_in(tmp_path, "--backend", "cpu", "--target", "cuda:device")
    assert done.returncode == 4
    assert "use --backend cuda or a compile-only target" in done.stderr


def test_unknown_backend_lists_the_choices(tmp_path: Path) -> None:
    done = pytest_in(tmp_path, "--backend", "tpu")
    assert done.returncode == 4
    assert "invalid choice: 'tpu' (choose from 'cpu', 'cuda', 'hip', 'xpu')" in done.stderr


def test_help_explains_the_options(tmp_path: Path) -> None:
    done = pytest_in(tmp_path, "--help")
    for option in ("--backend", "--target", "--case-timeout", "--kregress-json", "--kregress-md", "--matrix"):
        assert option in done.stdout


def test_items_are_readable_and_filterable(tmp_path: Path) -> None:
    work = copy_corpus(tmp_path, "kinds/vector_add")
    done = pytest_in(work, "--collect-only", "-q", "corpus", "-k", "resource and sm_90")
    lines = [line for line in done.stdout.splitlines() if "::" in line]
    assert lines == [
        "corpus/vector_add/case.toml::resource-shared_bytes-add[cuda:sm_90]",
        "corpus/vector_add/case.toml::resource-spill_bytes-add[cuda:sm_90]",
    ]


def test_cpu_backend_covers_every_compile_only_target(tmp_path: Path) -> None:
    work = copy_corpus(tmp_path, "kinds/vector_add")
    done = pytest_in(work, "--collect-only", "-q", "corpus", "-k", "compiles")
    targets = sorted(line.split("[")[1].rstrip("]") for line in done.stdout.splitlines() if "::" in line)
    assert targets == [
        "cuda:sm_100", "cuda:sm_120", "cuda:sm_80", "cuda:sm_90", "hip:gfx942", "hip:gfx950", "xpu:bmg",
        "xpu:dg2", "xpu:ptl", "xpu:pvc",
    ]  # fmt: skip


def test_markdown_summary_goes_to_the_step_summary_and_junit_has_the_record(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "corpus",
            "-k",
            "numerics",
            "--kregress-md",
            str(tmp_path / "out.md"),
            "--junitxml",
            str(tmp_path / "junit.xml"),
        ],
        cwd=copy_corpus(tmp_path, "kinds/vector_add"),
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert done.returncode == 0, done.stdout
    text = summary.read_text()
    assert text == (tmp_path / "out.md").read_text() + "\n"
    assert "| [vector_add](https://github.com/example/kernels/issues/1) (guard) | ✅ PASS |" in text
    junit = ElementTree.parse(tmp_path / "junit.xml").getroot()
    records = [json.loads(p.get("value")) for p in junit.iter("property") if p.get("name") == "kregress"]
    assert any(r.get("outcome") == "PASS" and r["kind"] == "numerics" for r in records)


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
def test_perf_is_not_collected_on_the_interpreter_unless_the_case_asks(
    tmp_path: Path, workers: tuple
) -> None:
    """A perf expectation with no targets does not time interpreter runs (a GEMM there takes minutes):
    not collected, and counted, with xdist too, so the SKIPs left are the ones to read."""
    work = copy_corpus(tmp_path, "kinds/vector_add")
    manifest = work / "corpus" / "vector_add" / "case.toml"
    manifest.write_text(manifest.read_text().replace('targets = ["cpu:interpreter"]\n', ""))
    report = tmp_path / "r.json"
    done = pytest_in(work, "corpus", "-k", "perf or numerics", "-q", "--kregress-json", str(report), *workers)
    assert "skipped" not in done.stdout, done.stdout
    assert "pairs do not apply and were not collected: " in done.stdout
    assert "perf is timed on a device unless the case lists cpu:interpreter" in done.stdout
    counted = json.loads(report.read_text())["not_applicable"]
    assert counted["by_reason"]["perf is timed on a device unless the case lists cpu:interpreter"] == 1
