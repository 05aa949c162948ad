"""Adding an expectation kind is one new module in kregress/kinds: shown by adding one to a copy of
the package and judging a corpus that uses it, with nothing else changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import copy_corpus, package_with
from kregress.kinds import KINDS, REGISTRY, figure

IR_LINES = '''"""ir_lines: every config's IR stage stays within a number of lines (a code-size budget)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from kregress.judge import Outcome, Verdict, compile_failures
from kregress.kinds.base import CompiledExpectation
from kregress.matrix import Target


class IrLines(CompiledExpectation):
    kind: Literal["ir_lines"]
    stage: str
    max_lines: int

    @property
    def subject(self) -> str:
        return f"{self.stage}-{self.kernel}"

    def judge_configs(self, target: Target, configs: list[dict[str, Any]], folder: Path) -> Verdict:
        failed = compile_failures(configs)
        if failed:
            return failed
        lines = {c["label"]: len((folder / c["ir"][self.stage]).read_text().splitlines()) for c in configs}
        if max(lines.values()) > self.max_lines:
            return Verdict(Outcome.FAIL, f"OVER_LIMIT: {self.stage} has {lines} lines > {self.max_lines}",
                           "OVER_LIMIT", {"lines": lines}, self.max_lines)
        return Verdict(Outcome.PASS, f"{self.stage}: {lines} lines", None, {"lines": lines}, self.max_lines)

    @staticmethod
    def figure(measured: dict[str, Any], limit: Any) -> str:
        return f"{max(measured['lines'].values())} lines (≤ {limit})"
'''

USES_IT = """
[[expect]]
name = "small-ttir"
kind = "ir_lines"
kernel = "add"
stage = "ttir"
max_lines = 100000

[[expect]]
name = "tiny-ttir"
kind = "ir_lines"
kernel = "add"
stage = "ttir"
max_lines = 3
"""


def test_every_kind_is_found_and_answers_for_itself() -> None:
    assert set(KINDS) == {"artifact", "compiles", "ir", "numerics", "perf", "resource"}
    for kind, cls in REGISTRY.items():
        assert cls.job_kind in ("compile", "numerics", "perf"), kind
        assert cls.__doc__, f"{kind} says what it asserts"
    assert figure({"kind": "no-such-kind", "measured": {"x": 1}}) == ""


def test_a_new_kind_is_one_module(tmp_path: Path) -> None:
    site = package_with(tmp_path, "kinds/ir_lines.py", IR_LINES)

    work = copy_corpus(tmp_path, "kinds/vector_add")
    manifest = work / "corpus" / "vector_add" / "case.toml"
    manifest.write_text(manifest.read_text() + USES_IT)
    report = tmp_path / "results.json"
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "-q", "-m", "ir_lines",
         "--target", "cuda:sm_90", "--kregress-json", str(report)],
        cwd=work, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert report.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    items = {i["expectation"]: i for i in json.loads(report.read_text())["items"]}
    assert items["small-ttir"]["outcome"] == "PASS", items["small-ttir"]["message"]
    assert items["tiny-ttir"]["outcome"] == "FAIL"
    assert items["tiny-ttir"]["failure_kind"] == "OVER_LIMIT"
    assert items["tiny-ttir"]["kind"] == "ir_lines"
    assert done.returncode == 1
