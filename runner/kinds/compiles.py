"""compiles: every config of a kernel compiles for the target."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from kregress.child_results import ConfigResult, ConfigStatus
from kregress.judge import Outcome, Verdict, compile_failures, last_line
from kregress.kinds.base import CompiledExpectation
from kregress.matrix import Target


class Compiles(CompiledExpectation):
    """Every config of the kernel compiles: no OutOfResources, no compiler error."""

    kind: Literal["compiles"]

    @property
    def subject(self) -> str:
        return self.kernel

    def judge_configs(self, target: Target, configs: list[ConfigResult], folder: Path) -> Verdict:
        failed = compile_failures(configs)
        if failed:
            return failed
        unbuilt = [c for c in configs if c.status is ConfigStatus.SOURCE_ONLY]
        if unbuilt:
            first = unbuilt[0]
            return Verdict.skip(
                "the compiler generated source, but nvcc failed only in the CUDA toolkit's own headers "
                "(or said nowhere), which says more about this machine's toolkit than the compiler: "
                f"{first.error_type}: {last_line(first.message)}"
            )
        labels = ", ".join(c.label for c in configs)
        return Verdict(
            Outcome.PASS,
            f"{len(configs)} config(s) compiled: {labels}",
            measured={"configs": [c.label for c in configs]},
        )
