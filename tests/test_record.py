"""One item record, declared once (kregress.record): a results file that does not fit it is refused
naming the item and the field, and the history gives back every field it was given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kregress.history import recent_runs, store
from kregress.results import ResultsError, load_results

ITEM = {
    "nodeid": "corpus/c/case.toml::e[cuda:sm_90]", "case": "c", "expectation": "e", "kind": "ir",
    "target": "cuda:sm_90", "framework": "triton", "upstream": "https://github.com/o/r/issues/1",
    "fix": None, "reproduce": "reproduced", "outcome": "XFAIL", "failure_kind": "IR_MISMATCH",
    "message": "count 7 > 0", "measured": {"count": 7}, "limit": {"max_count": 0},
    "toolchain": {"triton": "3.2.0"}, "toolchain_spec": "triton==3.2.0", "job_seconds": 1.25,
    "known_bad": "https://github.com/o/r/issues/1", "device": None, "duration": 1.5,
}  # fmt: skip


def write(tmp_path: Path, *items: dict) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"kregress": 1, "items": list(items)}))
    return path


def test_the_history_gives_back_every_field_of_the_record(tmp_path: Path) -> None:
    """It once stored a column per field and lost toolchain_spec, job_seconds and known_bad."""
    document = load_results(write(tmp_path, ITEM))
    store(tmp_path / "history.sqlite", document)
    (run,) = recent_runs(tmp_path / "history.sqlite")
    assert [item.as_json() for item in run.items] == [ITEM]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"outcome": "PASSED"}, "items[0] does not fit an item record: outcome: Input should be 'PASS'"),
        ({"job_seconds": "fast"}, "items[0] does not fit an item record: job_seconds: "),
        ({"colour": "red"}, "items[0] does not fit an item record: colour: Extra inputs are not permitted"),
    ],
)
def test_a_results_file_that_does_not_fit_is_refused_naming_the_field(tmp_path: Path, change, words) -> None:
    path = write(tmp_path, {**ITEM, **change})
    with pytest.raises(
        ResultsError, match=r"results\.json: " + r"\s*".join(map(__import__("re").escape, words.split()))
    ):
        load_results(path)
