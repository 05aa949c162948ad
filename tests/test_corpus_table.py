"""The corpus README's table lists every case once, linking the issue its manifest names."""

from __future__ import annotations

import re

import tomllib

from conftest import REPO

CORPUS = REPO / "corpus"


def table_rows() -> dict[str, str]:
    rows = {}
    for line in (CORPUS / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 6 and cells[0] not in ("case", "---"):
            assert cells[0] not in rows, f"{cells[0]} is listed twice"
            rows[cells[0]] = cells[1]
    return rows


def test_every_case_is_in_the_table_with_its_upstream_issue() -> None:
    rows = table_rows()
    # Drafts that `kregress import` leaves beside the cases are git-ignored evidence, not cases.
    cases = sorted(p.parent.name for p in CORPUS.glob("*/case.toml") if "_draft" not in p.parent.name)
    assert sorted(rows) == cases
    for case in cases:
        issue = tomllib.loads((CORPUS / case / "case.toml").read_text())["upstream"]["issue"]
        link = re.search(r"\((https://[^)]+)\)", rows[case])
        assert link and link.group(1) == issue, f"{case}: the table links {rows[case]}, the manifest {issue}"
