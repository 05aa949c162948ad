"""One item (case, expectation, target) judged the same way wherever it is judged: by the pytest
plugin (and through it by bisect and verify) and by `kregress reduce`. The caller says how a job
runs (memoized and under the device lock in the plugin, in a scratch folder in reduce); the rest is
here: the kind's job, the verdict, known_bad, and a kind's second look (a compile traced pass by
pass).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from kregress.frameworks import FRAMEWORKS
from kregress.jobs import Interpreter, Job, JobOutcome
from kregress.judge import Verdict, judge
from kregress.kinds import Expectation
from kregress.manifest import Case, KnownBad
from kregress.matrix import Target
from kregress.toolchains import EnvironmentCache, Toolchain, handed_environment

RunJob = Callable[[Job], JobOutcome]


@dataclass
class ItemJudgement:
    verdict: Verdict
    outcome: JobOutcome
    known_bad: KnownBad | None


def judged(
    case: Case, name: str, expectation: Expectation, target: Target, outcome: JobOutcome
) -> ItemJudgement:
    """The verdict on an outcome, with the known_bad entry that covers the version that ran."""
    framework = FRAMEWORKS[case.manifest.framework].released_as
    version = outcome.toolchain.get(framework)
    written_for = case.manifest.written_for
    if written_for is not None and version is not None and not written_for.admits(version):
        reason = (
            f"the case's kernel is written for {framework}{written_for.versions} ({written_for.reason}); "
            f"this run has {framework} {version}"
        )
        return ItemJudgement(Verdict.skip(reason), outcome, None)
    known_bad = case.known_bad_for(name, target.name, version)
    verdict = judge(expectation, target, outcome, known_bad, f"{framework} {version}")
    return ItemJudgement(verdict, outcome, known_bad)


def judge_item(
    case: Case,
    name: str,
    expectation: Expectation,
    target: Target,
    run: RunJob,
    getoption: Callable[[str], Any],
) -> ItemJudgement:
    job = expectation.job(
        getoption, case_id=case.id, repro=case.repro, framework=case.manifest.framework, target=target
    )
    first = judged(case, name, expectation, target, run(job))
    again_job = expectation.retrace(getoption, job, first.outcome, first.verdict)
    if again_job is None:
        return first
    again = judged(case, name, expectation, target, run(again_job))
    # The second look replaces the first only when it is the same verdict; otherwise the first
    # stands and says what the second did.
    if (
        again.verdict.outcome == first.verdict.outcome
        and again.verdict.failure_kind == first.verdict.failure_kind
    ):
        return again
    said = f"traced again on FAIL, the compile judged {again.verdict.outcome}: {again.verdict.message}"
    first.verdict.detail = "\n".join(part for part in (first.verdict.detail, said) if part)
    return first


def toolchain_interpreter(spec: str | None, log: Callable[[str], None]) -> Interpreter:
    """The environment of a toolchain spec (built once, cached), or this one's without a spec.
    Raises ToolchainError."""
    if not spec:
        return Interpreter()
    toolchain = Toolchain.parse(spec)
    environment = handed_environment(toolchain) or EnvironmentCache().get(toolchain, log=log)
    return environment.interpreter()


def with_machine_tools(
    target: Target, interpreter: Interpreter, variables: Callable[[str], dict[str, str]]
) -> Interpreter:
    """Compile targets also get the variables of the tools their backend takes from the machine
    (kregress.machine_tools: XPU's ocloc, AMD's linker); where one cannot be provisioned, the
    children say why in the SKIPs of what needs it."""
    if target.kind != "compile":
        return interpreter
    return replace(interpreter, env={**interpreter.env, **variables(target.backend)})
