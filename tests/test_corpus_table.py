"""The corpus README's table lists every case once, linking the issue its manifest names, with the
targets its expectations name (as the manifest says them: a backend, a target, or every target)."""

from __future__ import annotations

import re

import tomllib

from conftest import REPO

CORPUS = REPO / "corpus"
COLUMNS = ("case", "upstream", "framework", "targets", "bug class", "level", "bad → good")


def table_rows() -> dict[str, dict[str, str]]:
    rows = {}
    for line in (CORPUS / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == len(COLUMNS) and cells[0] not in ("case", "---"):
            assert cells[0] not in rows, f"{cells[0]} is listed twice"
            rows[cells[0]] = dict(zip(COLUMNS, cells, strict=True))
    return rows


def named_targets(manifest: dict) -> str:
    """Where a case's expectations are judged, as its manifest names them."""
    named: list[str] = []
    for expectation in manifest["expect"]:
        if not expectation.get("targets"):
            return "every target"
        named += [t for t in expectation["targets"] if t not in named]
    return ", ".join(named)


def test_every_case_is_in_the_table_with_its_upstream_issue_and_targets() -> None:
    rows = table_rows()
    # Drafts that `kregress import` leaves beside the cases are git-ignored evidence, not cases.
    cases = sorted(p.parent.name for p in CORPUS.glob("*/case.toml") if "_draft" not in p.parent.name)
    assert sorted(rows) == cases
    for case in cases:
        manifest = tomllib.loads((CORPUS / case / "case.toml").read_text())
        link = re.search(r"\((https://[^)]+)\)", rows[case]["upstream"])
        issue = manifest["upstream"]["issue"]
        assert link and link.group(1) == issue, (
            f"{case}: the table links {rows[case]['upstream']}, the manifest {issue}"
        )
        assert rows[case]["targets"] == named_targets(manifest), f"{case}: targets in the table"
