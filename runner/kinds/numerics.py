"""numerics: a check function's result matches its float64 reference within rtol/atol."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from kregress.jobs import Job, JobOutcome
from kregress.judge import Outcome, Verdict
from kregress.kinds.base import ExpectationBase
from kregress.matrix import Target


class Numerics(ExpectationBase):
    """A check function's result matches its float64 reference within rtol/atol."""

    job_kind: ClassVar[str] = "numerics"

    kind: Literal["numerics"]
    check: str
    rtol: float = Field(ge=0)
    atol: float = Field(ge=0)

    @property
    def subject(self) -> str:
        return self.check

    def job(self, getoption: Callable[[str], Any], **common: Any) -> Job:
        first: Target | None = getoption("compile_first_target")
        target: Target = common["target"]
        if first is not None and target.kind == "device" and first.backend == target.backend:
            spec = {"name": first.name, "backend": first.backend, "arch": first.arch,
                    "warp_size": first.warp_size, "properties": first.properties}  # fmt: skip
            return self.make_job(self.check, compile_first=tuple(sorted(spec.items())), **common)
        return self.make_job(self.check, **common)

    @staticmethod
    def measure(job: dict[str, Any], out_dir: Path) -> dict[str, Any]:
        """Run the check on the job's device; keep actual and expected, in float64, in arrays.npz.
        With `compile_first`, run nothing: the code of every launch the check would make, compiled
        for that target on the CPU (kregress.launch_code), or why it cannot be known."""
        import numpy as np

        from kregress.worker import CaseError, as_named, attribute, load_repro, to_float64

        repro = load_repro(Path(job["repro"]), job["framework"])
        if job.get("compile_first"):
            from kregress.adapters.triton_aot import gpu_target
            from kregress.launch_code import CodeUnknown, launch_code

            spec = dict(job["compile_first"])
            target = gpu_target(spec["backend"], spec["arch"], spec["warp_size"], spec["properties"])
            try:
                return {"launch_code": launch_code(attribute(repro, job["attr"], "check"), target),
                        "compiled_for": spec["name"]}  # fmt: skip
            except CodeUnknown as exc:
                return {"code_unknown": str(exc), "compiled_for": spec["name"]}
        returned = attribute(repro, job["attr"], "check")(job["device"])
        if not (isinstance(returned, tuple) and len(returned) == 2):
            raise CaseError(f"{job['attr']}() must return (actual, expected), got {type(returned).__name__}")
        actual, expected = as_named(returned[0]), as_named(returned[1])
        if actual.keys() != expected.keys():
            raise CaseError(f"{job['attr']}(): actual has {sorted(actual)}, expected has {sorted(expected)}")
        arrays = {f"actual.{k}": to_float64(v) for k, v in actual.items()}
        arrays |= {f"expected.{k}": to_float64(v) for k, v in expected.items()}
        np.savez(out_dir / "arrays.npz", **arrays)
        return {"arrays": "arrays.npz"}

    def judge(self, target: Target, outcome: JobOutcome, folder: Path) -> Verdict:
        measured = outcome.measured
        if "compiled_for" in measured:  # compiled first: the code is the answer, not a verdict
            if "launch_code" in measured:
                count = len(measured["launch_code"])
                said = f"{count} launch{'es' if count != 1 else ''} compiled for {measured['compiled_for']}"
            else:
                said = f"code unknown: {measured['code_unknown']}"
            return Verdict(Outcome.SKIP, f"compiled first, not run on a device: {said}", measured=measured)
        return self.judge_arrays(folder, outcome.measured["arrays"])

    def judge_arrays(self, folder: Path, arrays_file: str) -> Verdict:
        import numpy as np

        with np.load(folder / arrays_file) as data:
            arrays = {name: data[name] for name in data.files}
        outputs = sorted(name.split(".", 1)[1] for name in arrays if name.startswith("actual."))
        measured: dict[str, Any] = {}
        problems = []
        for name in outputs:
            actual, expected = arrays[f"actual.{name}"], arrays[f"expected.{name}"]
            if actual.shape != expected.shape:
                problems.append(f"{name}: shape {actual.shape} != expected {expected.shape}")
                continue
            actual64, expected64 = actual.astype(np.float64), expected.astype(np.float64)
            abs_err = np.abs(actual64 - expected64)
            rel_err = abs_err / np.maximum(np.abs(expected64), np.finfo(np.float64).tiny)
            close = np.isclose(actual64, expected64, rtol=self.rtol, atol=self.atol, equal_nan=False)
            finite_abs = np.where(np.isfinite(abs_err), abs_err, np.inf)
            max_abs = float(finite_abs.max()) if finite_abs.size else 0.0
            max_rel = float(np.where(np.isfinite(rel_err), rel_err, np.inf).max()) if rel_err.size else 0.0
            bad = int((~close).sum())
            measured[name] = {
                "max_abs_err": max_abs,
                "max_rel_err": max_rel,
                "mismatched": bad,
                "elements": int(actual.size),
            }
            if bad:
                worst = np.unravel_index(int(np.argmax(np.where(close, -1.0, finite_abs))), actual.shape)
                problems.append(
                    f"{name}: {bad} of {actual.size} elements outside rtol={self.rtol:g} atol={self.atol:g}; "
                    f"max abs err {max_abs:.3g}, max rel err {max_rel:.3g}; "
                    f"worst at {tuple(map(int, worst))}: "
                    f"got {actual64[worst]:.6g}, expected {expected64[worst]:.6g}"
                )
        limit = {"rtol": self.rtol, "atol": self.atol}
        if problems:
            return Verdict(
                Outcome.FAIL, "WRONG_RESULT: " + "; ".join(problems), "WRONG_RESULT", measured, limit
            )
        summary = ", ".join(f"{k}: max abs err {v['max_abs_err']:.3g}" for k, v in measured.items())
        return Verdict(
            Outcome.PASS, f"within rtol={self.rtol:g} atol={self.atol:g} ({summary})", None, measured, limit
        )

    @staticmethod
    def figure(measured: dict[str, Any], limit: Any) -> str:
        error = max(v["max_abs_err"] for v in measured.values())
        return f"max abs err {error:.2g} (atol {limit['atol']:g})"
