"""Ahead-of-time Triton compiles that reproduce what a real launch would compile.

The JIT specializes on the launch arguments (pointer and integer divisibility by 16, constants);
a compile without that can show bugs that a real launch never hits. So the example arguments go
through Triton's own binder, exactly as `kernel[grid](...)` does, for the target's backend.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Any

from kregress.adapters import ConfigResult, Unsupported, binary_kind, config_label, ptxas_figures

TEXT_STAGES = ("ttir", "ttgir", "llir", "ptx", "amdgcn", "spv")
BINARY_STAGES = ("cubin", "hsaco", "spv", "zebin")

# Device properties of a Data Center GPU Max (PVC) that the XPU backend reads at compile time.
PVC_PROPERTIES: dict[str, Any] = {
    "arch": 0,
    "device_arch": "pvc",
    "has_subgroup_matrix_multiply_accumulate": True,
    "has_subgroup_matrix_multiply_accumulate_tensor_float32": False,
    "has_subgroup_2d_block_io": True,
    "max_work_group_size": 1024,
    "max_num_sub_groups": 64,
    "sub_group_sizes": [16, 32],
    "has_fp64": True,
    "has_bfloat16_conversions": True,
    "has_16bit_atomics": True,
}


def gpu_target(backend: str, arch: str, warp_size: int) -> Any:
    import triton
    from triton.backends import backends as installed
    from triton.backends.compiler import GPUTarget

    needed = {"cuda": "nvidia", "hip": "amd", "xpu": "intel"}[backend]
    if needed not in installed:
        hint = (
            "xpu targets need the triton-xpu toolchain (it replaces the `triton` module, so it lives in "
            "its own environment)"
            if backend == "xpu"
            else f"this Triton build has no {needed} backend"
        )
        raise Unsupported(f"triton {triton.__version__} here cannot build {backend}:{arch}: {hint}")
    if backend == "cuda":
        return GPUTarget("cuda", int(arch.removeprefix("sm_")), warp_size)
    if backend == "hip":
        return GPUTarget("hip", arch, warp_size)
    return GPUTarget("xpu", dict(PVC_PROPERTIES, device_arch=arch), warp_size)


def jit_function(fn: Any) -> Any:
    """Unwrap @autotune / @heuristics down to the JITFunction."""
    while not hasattr(fn, "params") and hasattr(fn, "fn"):
        fn = fn.fn
    return fn


def configs_of(kernel: Any) -> list[dict[str, Any]]:
    """Every config to judge: the case's own list, else the autotuner's (all of them), else one."""
    if kernel.configs is not None:
        return [dict(c.all_kwargs()) if hasattr(c, "all_kwargs") else dict(c) for c in kernel.configs]
    if hasattr(kernel.fn, "configs"):
        return [dict(c.all_kwargs()) for c in kernel.fn.configs]
    return [{}]


def specialized_source(fn: Any, target: Any, launch: dict[str, Any], specialize: bool) -> tuple[Any, dict]:
    """Build the ASTSource and options a launch with these arguments would compile."""
    from triton.compiler import ASTSource, make_backend
    from triton.runtime.jit import create_function_from_signature

    backend = make_backend(target)
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    bound, specialization, options = binder(**launch)
    options, signature, constexprs, attrs = fn._pack_args(backend, launch, bound, specialization, options)
    if not specialize:
        attrs = {}
    return ASTSource(fn, signature, constexprs, attrs), options.__dict__


def ptxas_path() -> str:
    import triton

    bundled = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    found = str(bundled) if bundled.exists() else shutil.which("ptxas")
    if not found:
        raise Unsupported("no ptxas found (neither bundled with triton nor on PATH)")
    return found


def amdgcn_figures(amdgcn: str) -> dict[str, int]:
    """VGPRs, spills and scratch per lane from the kernel descriptor and metadata in AMDGCN text."""

    def grab(pattern: str) -> int:
        found = re.search(pattern, amdgcn, re.MULTILINE)
        return int(found.group(1)) if found else 0

    return {
        "registers": grab(r"^\s*\.vgpr_count:\s+(\d+)"),
        "spill_bytes": 4 * grab(r"^\s*\.vgpr_spill_count:\s+(\d+)"),
        "stack_bytes": grab(r"^; ScratchSize:\s+(\d+)"),
        "scratch_bytes": grab(r"^\s*\.amdhsa_private_segment_fixed_size\s+(\d+)"),
    }


def target_arch_in_asm(asm: dict[str, Any]) -> str | None:
    if "ptx" in asm:
        found = re.search(r"^\.target\s+(\S+)", asm["ptx"], re.MULTILINE)
        return found.group(1).rstrip(",") if found else None
    if "amdgcn" in asm:
        found = re.search(r'\.amdgcn_target\s+"[^"]*--(\w+)', asm["amdgcn"])
        return found.group(1) if found else None
    return None


def measure(compiled: Any, target: Any, num_warps: int) -> tuple[dict[str, int], dict[str, Any]]:
    asm, meta = compiled.asm, compiled.metadata
    metrics: dict[str, int] = {"shared_bytes": int(meta.shared)}
    if target.backend == "cuda":
        metrics.update(ptxas_figures(ptxas_path(), asm["ptx"], f"sm_{target.arch}"))
    elif target.backend == "hip":
        metrics.update(amdgcn_figures(asm["amdgcn"]))
    threads = num_warps * target.warp_size
    if "scratch_bytes" in metrics:
        metrics["scratch_bytes_per_block"] = metrics["scratch_bytes"] * threads
    binary = next((asm[s] for s in BINARY_STAGES if isinstance(asm.get(s), bytes)), b"")
    kind = binary_kind(binary)
    if target.backend == "xpu" and kind != "spirv":
        kind = "native"
    artifacts: dict[str, Any] = {
        "binary_kind": {"elf": "cubin" if target.backend == "cuda" else "hsaco"}.get(kind, kind),
        "arch": target_arch_in_asm(asm),
        "num_warps": num_warps,
        "threads_per_block": threads,
        "build_flags": getattr(meta, "build_flags", None),
        "n_regs": getattr(compiled, "n_regs", None),
    }
    if "registers" in metrics:
        artifacts["registers"] = metrics["registers"]
    return metrics, artifacts


def compile_kernel(kernel: Any, target_spec: dict[str, Any], out_dir: Path) -> list[ConfigResult]:
    import triton

    target = gpu_target(target_spec["backend"], target_spec["arch"], target_spec["warp_size"])
    fn = jit_function(kernel.fn)
    results = []
    for index, config in enumerate(configs_of(kernel)):
        result = ConfigResult(label=config_label(config))
        launch = {**kernel.args(), **config}
        started = time.perf_counter()
        try:
            src, options = specialized_source(fn, target, launch, kernel.specialize)
            compiled = triton.compile(src, target=target, options=options)
            result.metrics, result.artifacts = measure(compiled, target, options["num_warps"])
        except Unsupported:
            raise
        except Exception as exc:  # the compiler under test failed: that is data, not a harness error
            result.status = "compile_error"
            result.error_type = type(exc).__name__
            result.message = str(exc)[-4000:]
        else:
            for stage in TEXT_STAGES:
                text = compiled.asm.get(stage)
                if isinstance(text, str):
                    name = f"config{index}.{stage}"
                    (out_dir / name).write_text(text)
                    result.ir[stage] = name
        result.seconds = time.perf_counter() - started
        results.append(result)
    return results


def toolchain_versions() -> dict[str, str]:
    import triton

    return {"triton": triton.__version__}
