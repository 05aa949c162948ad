"""The child process: load a case's repro.py, do one job, write result.json.

Run as `python -m kregress.worker JOB.json`. Whatever the compiler under test does (raise, abort,
segfault, hang), the parent classifies it from this process's exit and from result.json; the
pytest process itself never imports the compiler under test.
"""

from __future__ import annotations

import contextlib
import faulthandler
import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from kregress.adapters import CompilerBroken, HarnessError, MeasurementError, Unsupported
from kregress.child_results import STACKS_AFTER, TOOLCHAIN_FILE, CaseError, JobStatus
from kregress.frameworks import FRAMEWORKS


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


def measurer(path: str) -> Any:
    """The kind class (module:Class) whose `measure` does the job."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def run_job(job: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    """The job, done by the kind that owns its measurement (kregress.kinds)."""
    missing = device_missing(job)
    if missing:
        raise Unsupported(missing)
    return {"status": JobStatus.OK, "measured": measurer(job["measure"]).measure(job, out_dir)}


def framework_here(framework: str) -> bool:
    return any(importlib.util.find_spec(name) is not None for name in FRAMEWORKS[framework].imports)


def device_missing(job: dict[str, Any]) -> str | None:
    """Why a job of a device target cannot run here (no such device: a SKIP saying so, never a
    FAIL of the compiler); None where it can, where the backend's own tool (nvidia-smi) listed the
    device, or where torch is not there to ask."""
    from kregress.devices import DEVICE_LISTED

    target = job.get("target") or {}
    if target.get("kind") != "device" or job.get("compile_first") or os.environ.get(DEVICE_LISTED):
        return None
    if not framework_here(job["framework"]):
        return None  # a framework missing here: its adapter says what, which is the first thing to fix
    try:
        import torch
    except ImportError:
        return None
    backend = target.get("backend")
    runtime = getattr(torch, "xpu", None) if backend == "xpu" else torch.cuda
    if runtime is not None and runtime.is_available():
        return None
    return f"no {backend} device here: torch {torch.__version__} sees none"


def main(argv: list[str]) -> int:
    # Just before the parent stops this child for running too long, its Python stacks go to its log
    # (which the TIMEOUT record reads): where a spinning kernel or a hung compile was.
    if os.environ.get(STACKS_AFTER):
        faulthandler.dump_traceback_later(float(os.environ[STACKS_AFTER]))
    job_file = Path(argv[0])
    job = json.loads(job_file.read_text())
    out_dir = job_file.parent
    started = time.perf_counter()
    # Written before the job runs: a child the compiler kills (SIGABRT, SIGSEGV) or that hangs still
    # says which versions it ran, so a known_bad entry can cover its crash.
    (out_dir / TOOLCHAIN_FILE).write_text(json.dumps(toolchain_versions(job["framework"])))
    try:
        result = run_job(job, out_dir)
    except Unsupported as exc:
        result = {"status": JobStatus.UNSUPPORTED, "reason": str(exc)}
    except CompilerBroken as exc:
        result = {"status": JobStatus.COMPILER_BROKEN, "reason": str(exc),
                  "traceback": "".join(traceback.format_exception(exc.__cause__ or exc))[-8000:]}  # fmt: skip
    except CaseError as exc:
        result = {"status": JobStatus.CASE_ERROR, "reason": str(exc)}
    except HarnessError as exc:
        said = (
            "kregress could not measure the result"
            if isinstance(exc, MeasurementError)
            else f"kregress's {job['framework']} adapter failed, not the compiler"
        )
        result = {"status": JobStatus.HARNESS_ERROR, "reason": f"{said}: {exc}",
                  "traceback": traceback.format_exc()[-8000:]}  # fmt: skip
    except Exception as exc:  # raised by the compiler or the kernel under test
        result = {
            "status": JobStatus.RAISED,
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
