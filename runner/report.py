"""Results of a corpus run: a JSON file for machines, a markdown summary for people and CI pages.

Runs on the controller only. Each item's outcome record, made by the judge, rides on its pytest
report (`kregress_record`), which xdist serializes whole, so the controller reads the worker's
object and never pytest's report text. The record is also a `user_properties` entry, for JUnit XML.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kregress.job_durations import remember_durations
from kregress.judge import Outcome
from kregress.record import ItemRecord, RunResults
from kregress.results import SYMBOL, WORST_FIRST, worst_outcome
from kregress.run_state import STATE, run_devices

RECORD = "kregress_record"  # the report attribute that carries an item's outcome record


class ResultsCollector:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.records: dict[str, ItemRecord] = {}
        self.not_applicable: dict[str, str] = {}  # case::expectation[target] -> why it is not collected
        self.durations: Counter[str] = Counter()
        self.started = time.time()
        self.run_id = uuid.uuid4().hex  # tells this run from every other: never its own past in compare
        option = config.getoption("history")
        self.history: Path | None = None
        if option:
            from kregress.history import default_path

            self.history = default_path() if option == "default" else Path(option)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker ended: what it found not to apply (every worker collects everything)."""
        self.not_applicable.update(json.loads(node.workeroutput.get("kregress_not_applicable", "{}")))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        run = session.config.stash.get(STATE, None)
        self.not_applicable.update(run.not_applicable if run else {})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.durations[report.nodeid] += report.duration  # setup measures, call judges: both count
        record = getattr(report, RECORD, None)  # the judge's own record, carried on the report
        if record is not None:  # typed here, where it crossed from the worker; durations: summed above
            self.records[report.nodeid] = ItemRecord.model_validate({"nodeid": report.nodeid, **record})

    def devices(self) -> list[dict[str, str]]:
        return run_devices(self.config)

    def document(self) -> RunResults:
        reasons = dict(Counter(self.not_applicable.values()))
        items = [
            ItemRecord.model_validate({**record.as_json(), "duration": round(self.durations[nodeid], 3)})
            for nodeid, record in sorted(self.records.items())
        ]
        return RunResults.model_validate(
            {
                "kregress": 1,
                "backend": self.config.getoption("backend"),
                "targets": [t for t in self.config.getoption("target")] or None,
                "toolchain": self.config.getoption("toolchain"),
                "runner": os.environ.get("KREGRESS_RUNNER")
                or os.environ.get("RUNNER_NAME")
                or platform.node(),
                "corpus_sha": corpus_sha(self.config.rootpath),
                "run_id": self.run_id,
                "devices": self.devices(),
                "started": self.started,
                "seconds": round(time.time() - self.started, 3),
                "counts": dict(Counter(r.outcome.value for r in items)),
                "not_applicable": {"count": len(self.not_applicable), "by_reason": reasons},
                "items": items,
            }
        )

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        document = self.document()
        json_path = self.config.getoption("kregress_json")
        if json_path:
            json_path.parent.mkdir(parents=True, exist_ok=True)
            json_path.write_text(json.dumps(document.model_dump(mode="json", exclude_unset=True), indent=2))
        markdown = summary_markdown(document)
        md_path = self.config.getoption("kregress_md")
        if md_path:
            md_path.parent.mkdir(parents=True, exist_ok=True)
            md_path.write_text(markdown)
        # the order the next run of the backend hands its jobs out in
        backend = self.config.getoption("backend")
        remember_durations(backend, {nodeid: self.durations[nodeid] for nodeid in self.records})
        if self.history and document.items:
            from kregress.history import store

            store(self.history, document, source="pytest")
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary and document.items:
            with open(summary, "a") as handle:
                handle.write(markdown + "\n")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        items = self.records.values()
        xpassed = [r for r in items if r.outcome == Outcome.XPASS]
        if xpassed:
            terminalreporter.section("kregress: looks fixed (XPASS)")
            for record in xpassed:
                terminalreporter.line(
                    f"{record.case} / {record.expectation} on {record.target}: {record.message}"
                )
        written = [
            str(p)
            for p in (
                self.config.getoption("kregress_json"),
                self.config.getoption("kregress_md"),
                self.history,
            )
            if p
        ]
        if self.not_applicable:
            reasons = Counter(self.not_applicable.values())
            terminalreporter.line(
                f"kregress: {len(self.not_applicable)} (expectation, target) pairs do not apply and were not "
                "collected: " + "; ".join(f"{n} {reason}" for reason, n in reasons.most_common())
            )
        if written and items:
            terminalreporter.line(f"kregress results written to {', '.join(written)}")


def corpus_sha(root: Any) -> str | None:
    """The commit of the corpus that ran, so a history can tell a corpus change from a compiler's."""
    if os.environ.get("GITHUB_SHA"):
        return os.environ["GITHUB_SHA"]
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        command = ["git", "rev-parse", "HEAD"]
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=10, check=False)
        if done.returncode == 0:
            return done.stdout.strip()
    return None


def summary_markdown(document: RunResults) -> str:
    items = document.items
    counts = Counter(r.outcome.value for r in items)
    lines = [f"## kregress — backend `{document.backend}`", ""]
    lines.append(
        " · ".join(f"{SYMBOL[o]} {o} {counts[o]}" for o in WORST_FIRST if counts.get(o)) or "no items"
    )
    lines.append("")
    cases = sorted({r.case for r in items})
    targets = sorted({r.target for r in items})
    if cases:
        lines += ["| case | " + " | ".join(f"`{t}`" for t in targets) + " |", "|---|" + "---|" * len(targets)]
        for case in cases:
            cells = []
            for target in targets:
                worst = worst_outcome(r.outcome for r in items if r.case == case and r.target == target)
                cells.append(f"{SYMBOL[worst]} {worst}" if worst else "—")
            upstream = next(r.upstream for r in items if r.case == case)
            level = next((r.reproduce for r in items if r.case == case and r.reproduce), None)
            shown = f" ({level})" if level else " (not shown to catch its bug)"
            lines.append(f"| [{case}]({upstream}){shown} | " + " | ".join(cells) + " |")
        lines.append("")
    notable = [
        r for r in items if r.outcome in (Outcome.FAIL, Outcome.ERROR, Outcome.XPASS, Outcome.UNSTABLE)
    ]
    if notable:
        lines += ["| outcome | case / expectation | target | message |", "|---|---|---|---|"]
        for r in notable:
            message = next(iter((r.message or "").splitlines()), "").replace("|", "\\|")[:300]
            lines.append(
                f"| {SYMBOL[r.outcome]} {r.outcome.value} | {r.case} / {r.expectation} | "
                f"`{r.target}` | {message} |"
            )
        lines.append("")
    return "\n".join(lines)
