"""The child process: load a case's repro.py, do one job, write result.json.

Run as `python -m kregress.worker JOB.json`. Whatever the compiler under test does (raise, abort,
segfault, hang), the parent classifies it from this process's exit and from result.json; the
pytest process itself never imports the compiler under test.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from kregress.adapters import CompilerBroken, MeasurementError, Unsupported
from kregress.errors import KregressError
from kregress.frameworks import FRAMEWORKS


class CaseError(KregressError):
    """The case itself is broken (bad repro.py, missing attribute): an ERROR, not a compiler FAIL."""


def load_repro(path: Path, framework: str = "") -> Any:
    spec = importlib.util.spec_from_file_location(f"kregress_repro_{path.parent.name}", path)
    if spec is None or spec.loader is None:
        raise CaseError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:
        missing = (exc.name or "").split(".", 1)[0]
        declared = FRAMEWORKS.get(framework)
        if missing and declared and missing in declared.modules:  # the framework is absent: SKIP
            hint = declared.why_missing(missing)
            raise Unsupported(
                f"{path.name} needs {missing}, which this environment lacks: {exc}"
                + (f"; {hint}" if hint else "")
            ) from None
        raise CaseError(where_in_repro(path, exc)) from None
    except Exception as exc:  # a syntax error, or the repro's own code raising at import
        raise CaseError(where_in_repro(path, exc)) from None
    return module


def where_in_repro(path: Path, exc: BaseException) -> str:
    """The repro's own line and error, as a failing test would show them."""
    if isinstance(exc, SyntaxError) and exc.filename == str(path):
        line, text = exc.lineno, (exc.text or "").rstrip()
    else:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
        line, text = (frames[-1].lineno, frames[-1].line or "") if frames else (None, "")
    place = f"{path}:{line}" if line else str(path)
    shown = f"\n    {text.strip()}" if text else ""
    return f"{path.name} fails to import: {place}: {type(exc).__name__}: {exc}{shown}"


def attribute(repro: Any, name: str, field: str) -> Any:
    if not hasattr(repro, name):
        raise CaseError(f"repro.py has no attribute {name!r} (named by `{field}` in case.toml)")
    return getattr(repro, name)


def adapter_for(framework: str) -> Any:
    declared = FRAMEWORKS[framework]
    if declared.adapter is None:
        raise Unsupported(f"no ahead-of-time compile for {framework}: {declared.no_adapter}")
    return importlib.import_module(declared.adapter)


def toolchain_versions(framework: str) -> dict[str, str]:
    """The versions that ran: the framework under test, and torch (the fork server preloads both
    torch and triton, so what is merely imported says nothing)."""
    versions = {"python": sys.version.split()[0]}
    if FRAMEWORKS[framework].adapter:
        with contextlib.suppress(Exception):  # reporting must never cost the job its result
            versions.update(adapter_for(framework).toolchain_versions())
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        versions["torch"] = str(torch.__version__)
        if getattr(torch.version, "cuda", None) and torch.cuda.is_initialized():
            versions["cuda_runtime"] = str(torch.version.cuda)  # the runtime a device job ran with
    return versions


def to_float64(value: Any) -> Any:
    import numpy as np

    if hasattr(value, "detach"):
        value = value.detach().cpu()
        value = value.double() if value.is_floating_point() else value
        return value.numpy()
    return np.asarray(value)


def as_named(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, (tuple, list)):
        return {f"out{i}": v for i, v in enumerate(value)}
    return {"out": value}


def run_numerics(repro: Any, job: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    import numpy as np

    check = attribute(repro, job["attr"], "check")
    returned = check(job["device"])
    if not (isinstance(returned, tuple) and len(returned) == 2):
        raise CaseError(f"{job['attr']}() must return (actual, expected), got {type(returned).__name__}")
    actual, expected = as_named(returned[0]), as_named(returned[1])
    if actual.keys() != expected.keys():
        raise CaseError(f"{job['attr']}(): actual has {sorted(actual)}, expected has {sorted(expected)}")
    arrays = {f"actual.{k}": to_float64(v) for k, v in actual.items()}
    arrays |= {f"expected.{k}": to_float64(v) for k, v in expected.items()}
    np.savez(out_dir / "arrays.npz", **arrays)
    return {"arrays": "arrays.npz"}


def run_perf(repro: Any, job: dict[str, Any]) -> dict[str, Any]:
    from kregress.timing import interleaved

    benches = {role: attribute(repro, job[role], role) for role in ("subject", "baseline")}
    fns = {role: bench.setup(job["device"]) for role, bench in benches.items()}
    timed = interleaved(fns["subject"], fns["baseline"], job["device"], job["rounds"])
    timed["names"] = {role: job[role] for role in benches}
    timed["flops"] = {role: bench.flops for role, bench in benches.items()}
    return timed


def run_job(job: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    result: dict[str, Any] = {"status": "ok"}
    if job["kind"] == "compile":
        adapter = adapter_for(job["framework"])
        with adapter.compile_session(job["target"]) as target:
            kernel = attribute(load_repro(Path(job["repro"]), job["framework"]), job["attr"], "kernel")
            trace = bool(job.get("trace_passes"))
            configs = adapter.compile_kernel(kernel, target, out_dir, trace_passes=trace)
        result["configs"] = [dataclasses.asdict(c) for c in configs]
        return result
    repro = load_repro(Path(job["repro"]), job["framework"])
    if job["kind"] == "numerics":
        result["numerics"] = run_numerics(repro, job, out_dir)
    elif job["kind"] == "perf":
        result["perf"] = run_perf(repro, job)
    else:
        raise CaseError(f"unknown job kind {job['kind']!r}")
    return result


def main(argv: list[str]) -> int:
    job_file = Path(argv[0])
    job = json.loads(job_file.read_text())
    out_dir = job_file.parent
    started = time.perf_counter()
    try:
        result = run_job(job, out_dir)
    except Unsupported as exc:
        result = {"status": "unsupported", "reason": str(exc)}
    except CompilerBroken as exc:
        result = {"status": "compiler_broken", "reason": str(exc),
                  "traceback": "".join(traceback.format_exception(exc.__cause__ or exc))[-8000:]}  # fmt: skip
    except CaseError as exc:
        result = {"status": "case_error", "reason": str(exc)}
    except MeasurementError as exc:
        result = {"status": "harness_error", "reason": f"kregress could not measure the result: {exc}",
                  "traceback": traceback.format_exc()[-8000:]}  # fmt: skip
    except Exception as exc:  # raised by the compiler or the kernel under test
        result = {
            "status": "raised",
            "error_type": type(exc).__name__,
            "reason": f"{type(exc).__name__}: {exc}"[-4000:],
            "traceback": traceback.format_exc()[-8000:],
        }
    result["toolchain"] = toolchain_versions(job["framework"])
    result["seconds"] = time.perf_counter() - started
    result["pid"] = os.getpid()
    (out_dir / "result.json").write_text(json.dumps(result, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
