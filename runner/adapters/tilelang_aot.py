"""TileLang: lower a prim_func for a CUDA target, keep the generated CUDA source and PTX, and read
registers/spills with the ptxas of the CUDA toolkit that produced the PTX."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from kregress.adapters import ConfigResult, MeasurementError, Unsupported, ptxas_figures


def ptxas_for_toolkit() -> str:
    found = shutil.which("ptxas") or (
        "/usr/local/cuda/bin/ptxas" if Path("/usr/local/cuda/bin/ptxas").exists() else None
    )
    if not found:
        raise Unsupported("TileLang resource figures need the CUDA toolkit's ptxas on PATH")
    return found


def compile_kernel(kernel: Any, target_spec: dict[str, Any], out_dir: Path) -> list[ConfigResult]:
    if target_spec["backend"] != "cuda":
        raise Unsupported(f"the TileLang adapter builds CUDA targets only, not {target_spec['name']}")
    try:
        import tilelang
    except ImportError as exc:
        raise Unsupported(f"tilelang is not installed in this environment ({exc})") from None
    if shutil.which("nvcc") is None:
        raise Unsupported("TileLang compiles CUDA with nvcc, which is not on PATH")

    result = ConfigResult(label="default")
    started = time.perf_counter()
    arch = target_spec["arch"]
    try:
        compiled = tilelang.compile(
            kernel.build(), target={"kind": "cuda", "arch": arch}, pass_configs=dict(kernel.pass_configs)
        )
        source = compiled.get_kernel_source()
    except Exception as exc:
        result.status, result.error_type, result.message = (
            "compile_error",
            type(exc).__name__,
            str(exc)[-4000:],
        )
        result.seconds = time.perf_counter() - started
        return [result]
    (out_dir / "config0.cuda_source").write_text(source)
    result.ir["cuda_source"] = "config0.cuda_source"
    result.artifacts = {"binary_kind": "cubin", "arch": arch}
    get_ptx = getattr(compiled, "_get_ptx", None)  # absent in some releases: then no resource figures
    if get_ptx is not None:
        ptx = get_ptx()
        (out_dir / "config0.ptx").write_text(ptx)
        result.ir["ptx"] = "config0.ptx"
        try:
            result.metrics = ptxas_figures(ptxas_for_toolkit(), ptx, arch)
        except Exception as exc:  # reading the figures failed: never blame the compiler for it
            raise MeasurementError(f"{type(exc).__name__}: {exc}") from exc
        result.artifacts["registers"] = result.metrics["registers"]
    result.seconds = time.perf_counter() - started
    return [result]


def toolchain_versions() -> dict[str, str]:
    import tilelang

    return {"tilelang": tilelang.__version__}
