"""An xdist run gives the same outcomes as a serial run."""

from __future__ import annotations

import pytest

from conftest import run_corpus

ARGS = ("--target", "cpu:interpreter", "--target", "cuda:sm_90")


def test_parallel_run_matches_serial(tmp_path_factory: pytest.TempPathFactory) -> None:
    corpora = ("kinds/vector_add", "kinds/broken", "outcomes/known_bad")
    serial = run_corpus(tmp_path_factory.mktemp("serial"), *corpora, args=ARGS)
    parallel = run_corpus(tmp_path_factory.mktemp("parallel"), *corpora, args=(*ARGS, "-n", "2"))
    assert serial.outcomes(), serial.output
    assert parallel.outcomes() == serial.outcomes()
    assert parallel.returncode == serial.returncode == 1
