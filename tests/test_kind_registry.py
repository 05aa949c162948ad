"""Adding an expectation kind is one new module in kregress/kinds: shown by adding one to a copy of
the package and judging a corpus that uses it, with nothing else changed."""

from __future__ import annotations

from pathlib import Path

from conftest import package_with, run_corpus
from kregress.kinds import KINDS, REGISTRY, figure
from kregress.matrix import load_matrix
from kregress.record import ItemRecord

IR_LINES = '''"""ir_lines: every config's IR stage stays within a number of lines (a code-size budget)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from kregress.child_results import ConfigResult
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

    def judge_configs(self, target: Target, configs: list[ConfigResult], folder: Path) -> Verdict:
        failed = compile_failures(configs)
        if failed:
            return failed
        lines = {c.label: len((folder / c.ir[self.stage]).read_text().splitlines()) for c in configs}
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
        assert cls.job_kind, kind
        assert "measure" in vars(cls.measurer()), f"{kind}: its measurement is a kind's own"
        assert cls.__doc__, f"{kind} says what it asserts"
    unknown = ItemRecord(
        case="c", expectation="e", target="t", outcome="PASS", kind="no-such-kind", measured={"x": 1}
    )
    assert figure(unknown) == ""


def test_the_kind_says_how_its_job_holds_the_device() -> None:
    """Timing holds the device alone; other jobs share it (the plugin's lock reads Job.exclusive)."""
    target = load_matrix().target("cuda:device")
    common = {"case_id": "c", "repro": Path("repro.py"), "framework": "triton", "target": target}
    timing = {"kind": "perf", "subject": "s", "baseline": "b", "min_ratio": 1}
    perf = REGISTRY["perf"].model_validate(timing)
    numerics = REGISTRY["numerics"].model_validate({"kind": "numerics", "check": "c", "rtol": 0, "atol": 0})
    timed, checked = perf.job(lambda _: None, **common), numerics.job(lambda _: None, **common)
    assert timed.exclusive and not checked.exclusive
    assert (
        timed.measure == "kregress.kinds.perf:Perf" and checked.measure == "kregress.kinds.numerics:Numerics"
    )
    assert REGISTRY["perf"].not_reducible and not REGISTRY["numerics"].not_reducible


def test_a_new_kind_is_one_module(tmp_path: Path) -> None:
    site = package_with(tmp_path, "kinds/ir_lines.py", IR_LINES)
    run = run_corpus(tmp_path, "kinds/vector_add", site=site, appended={"vector_add": USES_IT},
                     args=("-m", "ir_lines", "--target", "cuda:sm_90"))  # fmt: skip
    assert run.document, run.output[-3000:]
    items = {i["expectation"]: i for i in run.document["items"]}
    assert items["small-ttir"]["outcome"] == "PASS", items["small-ttir"]["message"]
    assert items["tiny-ttir"]["outcome"] == "FAIL"
    assert items["tiny-ttir"]["failure_kind"] == "OVER_LIMIT"
    assert items["tiny-ttir"]["kind"] == "ir_lines"
    assert run.returncode == 1


SOURCE_LINES = '''"""source_lines: a repro function's source stays within a number of lines."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Literal

from kregress.jobs import Job, JobOutcome
from kregress.judge import Outcome, Verdict
from kregress.kinds.base import ExpectationBase
from kregress.matrix import Target


class SourceLines(ExpectationBase):
    """A repro function's source is at most `max_lines` long."""

    job_kind: ClassVar[str] = "source_lines"
    device_alone: ClassVar[bool] = True

    kind: Literal["source_lines"]
    function: str
    max_lines: int

    @property
    def subject(self) -> str:
        return self.function

    def job(self, getoption: Callable[[str], Any], **common: Any) -> Job:
        return self.make_job(self.function, counted_by="inspect", **common)

    @staticmethod
    def measure(job: dict[str, Any], out_dir: Path) -> dict[str, Any]:
        from kregress.worker import attribute, load_repro

        function = attribute(load_repro(Path(job["repro"]), job["framework"]), job["attr"], "function")
        fn = getattr(function, "fn", function)
        return {"lines": len(inspect.getsource(fn).splitlines()), "by": job["counted_by"]}

    def judge(self, target: Target, outcome: JobOutcome, folder: Path) -> Verdict:
        lines = outcome.measured["lines"]
        measured = {"lines": lines, "by": outcome.measured["by"]}
        if lines > self.max_lines:
            return Verdict(Outcome.FAIL, f"OVER_LIMIT: {lines} lines > {self.max_lines}", "OVER_LIMIT",
                           measured, self.max_lines)
        return Verdict(Outcome.PASS, f"{lines} lines", None, measured, self.max_lines)
'''

COUNTS_ITS_LINES = """
[[expect]]
name = "short"
kind = "source_lines"
function = "add_kernel"
max_lines = 100

[[expect]]
name = "one-line"
kind = "source_lines"
function = "add_kernel"
max_lines = 1
"""


def test_a_new_kind_with_a_measurement_of_its_own_is_one_module(tmp_path: Path) -> None:
    """Its job runs in the child through the kind's own measure(), with a field Job does not have,
    holding the device alone as it declares; nothing else of kregress changes."""
    site = package_with(tmp_path, "kinds/source_lines.py", SOURCE_LINES)
    run = run_corpus(tmp_path, "kinds/vector_add", site=site, appended={"vector_add": COUNTS_ITS_LINES},
                     args=("-m", "source_lines", "--target", "cpu:interpreter"))  # fmt: skip
    assert run.document, run.output[-3000:]
    items = {i["expectation"]: i for i in run.document["items"]}
    assert items["short"]["outcome"] == "PASS", items["short"]["message"]
    assert items["short"]["measured"] == {"lines": items["short"]["measured"]["lines"], "by": "inspect"}
    assert 3 < items["short"]["measured"]["lines"] < 100
    assert items["one-line"]["outcome"] == "FAIL"
    assert items["one-line"]["failure_kind"] == "OVER_LIMIT"
    assert run.returncode == 1
