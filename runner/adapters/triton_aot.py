"""Ahead-of-time Triton compiles that reproduce what a real launch would compile, in any release.

The JIT specializes on the launch arguments (pointer and integer divisibility by 16, constants);
a compile without that can show bugs that a real launch never hits. So every kernel is compiled
through the JIT's own public `warmup()` path with the case's example arguments, while a stand-in
driver tells the JIT which target it runs on. That path has the same shape from Triton 3.0 to
today, whereas the internals (binders, AttrsDescriptor, ASTSource arguments) drift every release.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kregress.adapters import (
    LEVEL_ZERO_WHY_NOT,
    CompilerBroken,
    ConfigResult,
    MeasurementError,
    Unsupported,
    binary_kind,
    config_label,
    cubin_figures,
    level_zero_headers,
    ocloc,
    ptxas_figures,
)
from kregress.code_identity import digest, stage_digests
from kregress.pass_trace import PASS_DUMPS

# Why kregress could not provision the Level Zero headers for this child (see kregress.level_zero).

TEXT_STAGES = ("ttir", "ttgir", "llir", "ptx", "amdgcn", "spv")
BINARY_STAGES = ("cubin", "hsaco", "spv", "zebin")


def gpu_target(backend: str, arch: str, warp_size: int, properties: dict[str, Any] | None = None) -> Any:
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
    if backend == "xpu" and not level_zero_headers():
        why = os.environ.get(LEVEL_ZERO_WHY_NOT) or (
            "kregress provisions them for the compile targets it runs (`kregress envs build level-zero` "
            "does it ahead of time), or install them with: apt-get install libze-dev"
        )
        raise Unsupported(
            f"triton {triton.__version__} builds xpu:{arch} against the Level Zero headers, which are "
            f"missing here; {why}"
        )
    if backend == "cuda":
        return GPUTarget("cuda", int(arch.removeprefix("sm_")), warp_size)
    if backend == "hip":
        return GPUTarget("hip", arch, warp_size)
    if not properties:
        raise Unsupported(
            f'the matrix gives no device properties for xpu:{arch} (targets."xpu:{arch}".properties)'
        )
    return GPUTarget("xpu", dict(properties, device_arch=arch), warp_size)


class AheadOfTimeDriver:
    """Stands in for the GPU driver: the JIT asks it for the current target, device and stream."""

    def __init__(self, target: Any) -> None:
        self.target = target

    def get_current_target(self) -> Any:
        return self.target

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def is_active(self) -> bool:
        return True

    def get_benchmarker(self) -> Any:
        """Autotuners ask for this when they are created (triton <= 3.3); it never runs here."""

        def no_device(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("no device: kregress compiles ahead of time and benchmarks nothing")

        return no_device


@contextlib.contextmanager
def compiling_for(target: Any) -> Iterator[None]:
    from triton.runtime.driver import driver

    driver.set_active(AheadOfTimeDriver(target))
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            driver.reset_active()


@dataclass
class Unwrapped:
    """A kernel as the case wrote it, taken apart once: the JITFunction under any @autotune and
    @heuristics, the heuristics' rules (constexprs computed from the args), the autotune configs."""

    fn: Any
    rules: dict[str, Any] = field(default_factory=dict)
    autotune_configs: list[Any] | None = None


def unwrap(kernel_fn: Any) -> Unwrapped:
    found = Unwrapped(kernel_fn)
    while not hasattr(found.fn, "params") and hasattr(found.fn, "fn"):
        found.rules.update(getattr(found.fn, "values", {}) or {})
        if found.autotune_configs is None and hasattr(found.fn, "configs"):
            found.autotune_configs = list(found.fn.configs)
        found.fn = found.fn.fn
    return found


def configs_of(kernel: Any, autotune_configs: list[Any] | None, backend: str) -> list[dict[str, Any]]:
    """Every config to judge: the case's own list (for this backend, if scoped), else the
    autotuner's (all of them), else one."""
    configs = kernel.configs
    if isinstance(configs, dict):
        if backend not in configs:
            raise Unsupported(f"the case gives no config for {backend} (it has: {', '.join(configs)})")
        configs = configs[backend]
    if configs is not None:
        return [config_kwargs(c) if hasattr(c, "kwargs") else dict(c) for c in configs]
    if autotune_configs is not None:
        return [config_kwargs(c) for c in autotune_configs]
    return [{}]


def config_kwargs(config: Any) -> dict[str, Any]:
    if hasattr(config, "all_kwargs"):
        return dict(config.all_kwargs())
    options = {k: getattr(config, k) for k in ("num_warps", "num_stages", "num_ctas", "maxnreg")
               if getattr(config, k, None) is not None}  # fmt: skip
    return {**config.kwargs, **options}


def without_specialization(fn: Any) -> None:
    """Compile as if every argument were a plain runtime value: no divisibility, no constants."""
    for param in fn.params:
        if not param.is_constexpr:
            param.do_not_specialize = True
            if hasattr(param, "do_not_specialize_on_alignment"):
                param.do_not_specialize_on_alignment = True


ROCM_LLD = Path("/opt/rocm/llvm/bin/ld.lld")
LLD_HINT = "install Debian's lld-19 (apt-get install lld-19) or set TRITON_HIP_LLD_PATH to a recent ld.lld"


def find_hip_linker() -> str | None:
    """The ld.lld AMD compiles link with here, changing nothing: TRITON_HIP_LLD_PATH when set, else
    ROCm's, else the newest LLVM's on this machine (what `hip_linker` sets; the memo keys on it)."""
    if os.environ.get("TRITON_HIP_LLD_PATH"):
        return os.environ["TRITON_HIP_LLD_PATH"]
    if ROCM_LLD.exists():
        return str(ROCM_LLD)
    found = sorted(Path("/usr/lib").glob("llvm-*/bin/ld.lld"), key=lambda p: llvm_major(p.parent.parent.name))
    return str(found[-1]) if found else shutil.which("ld.lld")


def hip_linker() -> str | None:
    """For releases that link an AMD code object with an external ld.lld (up to 3.4; later ones link
    in-process and ignore it): ROCm's if installed, else the newest LLVM's ld.lld on this machine.
    Measured: Debian's lld-19 links gfx942 objects of 3.0.0 to 3.4.0; lld-14 only those of 3.0.0
    ("unknown abi version" from 3.4.0). Set in this child's environment, and reported."""
    if os.environ.get("TRITON_HIP_LLD_PATH") or ROCM_LLD.exists():
        return None
    chosen = find_hip_linker()
    if chosen:
        os.environ["TRITON_HIP_LLD_PATH"] = chosen
        NATIVE_VERSIONS["hip_lld"] = chosen
    return chosen


def llvm_major(folder: str) -> int:
    digits = folder.removeprefix("llvm-")
    return int(digits) if digits.isdigit() else 0


def probe(target: Any) -> Any:
    """Raise Unsupported when this toolchain cannot build the target at all on this machine; else
    return the compiled probe kernel."""
    import torch
    import triton

    from kregress.adapters.triton_probe import probe_kernel

    try:
        return probe_kernel.warmup(torch.empty(16), grid=(1,))
    except Exception as exc:
        last = str(exc).strip().splitlines()[-1:] or [type(exc).__name__]
        linker = "ld.lld" in str(exc) or "lld" in " ".join(map(str, getattr(exc, "cmd", None) or []))
        hint = f"; {LLD_HINT}" if linker else ""
        raise Unsupported(
            f"triton {triton.__version__} cannot build {describe_target(target)} on this machine "
            f"(a trivial kernel fails: {type(exc).__name__}: {last[0][:300]}){hint}"
        ) from None


def arch_of(target: Any) -> str:
    """The arch part of describe_target: sm_90, gfx942, pvc."""
    return describe_target(target).split(":", 1)[1]


def describe_target(target: Any) -> str:
    arch = target.arch.get("device_arch", "") if isinstance(target.arch, dict) else target.arch
    return f"{target.backend}:{'sm_' if target.backend == 'cuda' else ''}{arch}"


def release_ptxas_options() -> tuple[str, ...]:
    """The options this Triton release gives ptxas on every compile beside -v and the GPU name, as
    its make_cubin spells them: from 3.7.0 `--regAllocOptLevel=2` (a workaround for ptxas 13), which
    changes the register allocation (measured under 3.9.0 on sm_120: 84 registers in the cubin, 80 in
    a `ptxas -v` without it). The figures must come from the binary's own allocation."""
    import inspect

    from triton.backends.nvidia import compiler as nvidia

    try:
        source = inspect.getsource(nvidia.CUDABackend.make_cubin)
    except (AttributeError, OSError, TypeError):
        return ()
    return tuple(dict.fromkeys(re.findall(r"['\"](--regAllocOptLevel=\d+)['\"]", source)))


def ptxas_path(arch: int) -> str:
    """The ptxas this Triton release itself compiles the target's PTX with: releases bundle more
    than one (3.9 uses a newer one for sm_90 than for sm_80) and name the choice differently."""
    from triton.backends.nvidia import compiler as nvidia

    if hasattr(nvidia, "get_ptxas"):
        try:
            tool = nvidia.get_ptxas(arch)
        except TypeError:
            tool = nvidia.get_ptxas()
        return str(tool.path if hasattr(tool, "path") else tool[0])
    if hasattr(nvidia, "_path_to_binary"):
        return str(nvidia._path_to_binary("ptxas")[0])
    import triton

    bundled = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    found = str(bundled) if bundled.exists() else shutil.which("ptxas")
    if not found:
        raise Unsupported("no ptxas found (neither bundled with triton nor on PATH)")
    return found


def amdgcn_figures(amdgcn: str) -> dict[str, int]:
    """VGPRs, spills and scratch per lane from the kernel descriptor and metadata in AMDGCN text."""

    def grab(*patterns: str) -> int:
        """The first pattern found (releases write some figures in more than one place)."""
        for pattern in patterns:
            found = re.search(pattern, amdgcn, re.MULTILINE)
            if found:
                return int(found.group(1))
        # a figure that cannot be read is never a 0 that passes every bound
        raise ValueError(f"the AMDGCN text has no line matching {patterns[0]!r}: its format changed?")

    return {
        "registers": grab(r"^\s*\.vgpr_count:\s+(\d+)"),
        "spill_bytes": 4 * grab(r"^\s*\.vgpr_spill_count:\s+(\d+)"),
        # the scratch per lane: a comment from LLVM's printer, or (3.0.0) the metadata's own field
        "stack_bytes": grab(r"^; ScratchSize:\s+(\d+)", r"^\s*\.private_segment_fixed_size:\s+(\d+)"),
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


def measure(compiled: Any, target: Any) -> tuple[dict[str, int], dict[str, Any]]:
    asm, meta = compiled.asm, compiled.metadata
    num_warps = int(meta.num_warps)
    metrics: dict[str, int] = {"shared_bytes": int(meta.shared)}
    if target.backend == "cuda":
        options = release_ptxas_options()
        metrics.update(ptxas_figures(ptxas_path(target.arch), asm["ptx"], f"sm_{target.arch}", options))
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
    }
    if "registers" in metrics:
        artifacts["registers"] = metrics["registers"]
    return metrics, artifacts


@dataclass
class OclocFront:
    """`ocloc_front.py` put on PATH as `ocloc` for XPU compiles: what ocloc was asked to do, per
    config, and the real ocloc it forwards to (or why none here builds native code)."""

    folder: Path
    chosen: ocloc.Chosen

    @property
    def log(self) -> Path:
        return self.folder / "invocations.jsonl"

    def invocations(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


def ocloc_front(folder: Path, device_arch: str, spirv: bytes) -> OclocFront:
    """Find a real ocloc that turns the probe kernel's SPIR-V into a native binary for this device;
    put the recording front before it on PATH either way."""
    chosen = ocloc.choose(device_arch, spirv)
    front = OclocFront(folder, chosen)
    script = folder / "ocloc"
    script.write_text(f"#!{sys.executable}\n" + (Path(__file__).parent / "ocloc_front.py").read_text())
    script.chmod(0o755)
    os.environ["PATH"] = f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ["KREGRESS_OCLOC_LOG"] = str(front.log)
    os.environ["KREGRESS_OCLOC_REAL"] = chosen.path or ""
    if chosen.path:
        NATIVE_VERSIONS["ocloc"] = chosen.version
        provisioned = json.loads(os.environ.get(ocloc.PROVISIONED_VARIABLE) or "{}")
        if chosen.path == os.environ.get(ocloc.CANDIDATES_VARIABLE) and provisioned.get("versions"):
            NATIVE_VERSIONS.update(
                {k: v for k, v in provisioned["versions"].items() if k.startswith(("intel-", "libigc"))}
            )
    return front


NATIVE_VERSIONS: dict[str, str] = {}  # of the ocloc and IGC this child built native code with


@dataclass
class Session:
    """What compile_kernel needs to know about the target it builds for."""

    target: Any
    on_device: bool
    ocloc: OclocFront | None = None


@contextlib.contextmanager
def compile_session(target_spec: dict[str, Any]) -> Iterator[Session]:
    """Install the stand-in driver before the repro is imported (some releases' autotuners ask the
    driver for a benchmarker at import) and make sure this toolchain can build the target at all.
    On a device target the real driver stays, so the binary can be loaded and its registers read."""
    try:
        import triton  # noqa: F401
    except Exception as exc:  # e.g. triton-xpu 3.0.0b2 downloads at import, and there is no network
        raise CompilerBroken(
            f"triton in this toolchain does not import here: {type(exc).__name__}: {exc}"
        ) from exc
    on_device = target_spec["kind"] == "device"
    if on_device:
        from triton.runtime.driver import driver

        try:
            target = driver.active.get_current_target()
        except Exception as exc:
            backend = target_spec["backend"]
            raise Unsupported(f"no {backend} device here: {type(exc).__name__}: {exc}") from None
        arch = arch_of(target)
    else:
        arch = target_spec["arch"]
        target = gpu_target(
            target_spec["backend"], arch, target_spec["warp_size"], target_spec.get("properties")
        )
    with contextlib.ExitStack() as stack:
        if not on_device:
            stack.enter_context(compiling_for(target))
        if target.backend == "hip" and not on_device:
            hip_linker()
        probed = probe(target)
        session = Session(target, on_device=on_device)
        if target.backend == "xpu":
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="kregress-ocloc-"))
            session.ocloc = ocloc_front(Path(folder), arch, probed.asm["spv"])
        yield session


def forget_compiled(fn: Any) -> None:
    """Drop the JIT's in-memory kernels so the next warmup goes to the on-disk cache."""
    for name in ("device_caches", "cache"):
        caches = getattr(fn, name, None)
        if caches is not None:
            caches.clear()


def cache_files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}


@contextlib.contextmanager
def cache_folder(folder: str | None) -> Iterator[None]:
    """Point Triton's on-disk cache at `folder` (every release reads TRITON_CACHE_DIR per compile)."""
    if folder is None:
        yield
        return
    before = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = folder
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = before


@contextlib.contextmanager
def pass_dumps(path: Path) -> Iterator[None]:
    """MLIR prints the IR before each pass to the process's stderr (file descriptor 2, below
    Python): point it at `path` for the compile, and turn the printing on (read per compile)."""
    sys.stderr.flush()
    saved = os.dup(2)
    before = os.environ.get("MLIR_ENABLE_DUMP")
    os.environ["MLIR_ENABLE_DUMP"] = "1"
    with open(path, "wb") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            if before is None:
                os.environ.pop("MLIR_ENABLE_DUMP", None)
            else:
                os.environ["MLIR_ENABLE_DUMP"] = before


def with_cause(exc: BaseException) -> str:
    """The error and what raised it: Triton's CompilationError shows the source and a caret, and the
    diagnosis (`ValueError: ...`) is its cause."""
    cause = exc.__cause__
    text = str(exc)
    if cause is not None and str(cause) and str(cause) not in text:
        text += f"\n{type(cause).__name__}: {cause}"
    elif cause is not None and not str(cause):  # `assert x` in the frontend: the class is what it says
        text += f"\n{type(cause).__name__} (no message)"
    return text


def compile_kernel(
    kernel: Any, session: Session, out_dir: Path, trace_passes: bool = False
) -> list[ConfigResult]:
    """Compile every config of the kernel inside a compile_session; with `trace_passes`, on a cold
    cache (a cached compile runs no pass) with the IR printed before every MLIR pass."""
    target = session.target
    unwrapped = unwrap(kernel.fn)
    fn, rules = unwrapped.fn, unwrapped.rules
    if not kernel.specialize:
        without_specialization(fn)
    with contextlib.ExitStack() as stack:
        # One cold cache for all the configs: each config is its own cache key, so each still
        # compiles from nothing, while what the backend builds for itself in the cache (XPU's
        # driver modules, seconds of g++ each) is built once per kernel rather than per config.
        cold_cache = kernel.cold_cache or trace_passes
        cold = stack.enter_context(tempfile.TemporaryDirectory()) if cold_cache else None
        return [
            compile_config(fn, rules, index, config, kernel, session, out_dir, trace_passes, cold)
            for index, config in enumerate(configs_of(kernel, unwrapped.autotune_configs, target.backend))
        ]


def compile_config(
    fn: Any,
    rules: dict[str, Any],
    index: int,
    config: dict[str, Any],
    kernel: Any,
    session: Session,
    out_dir: Path,
    trace_passes: bool,
    cold: str | None,
) -> ConfigResult:
    target = session.target
    result = ConfigResult(label=config_label(config), options=dict(config))
    launch = {**kernel.args(), **config}
    for name, rule in rules.items():
        launch.setdefault(name, rule(launch))
    seen_before = len(session.ocloc.invocations()) if session.ocloc else 0
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        stack.enter_context(cache_folder(cold))
        if trace_passes:
            dump = f"config{index}.mlir-passes"
            stack.enter_context(pass_dumps(out_dir / dump))
            result.ir[PASS_DUMPS] = dump
        forget_compiled(fn)
        try:
            compiled = fn.warmup(grid=(1,), **launch)
        except Exception as exc:  # the compiler under test failed: that is data, not a harness error
            result.status = "compile_error"
            result.error_type = type(exc).__name__
            result.message = with_cause(exc)[-4000:]
        result.seconds = time.perf_counter() - started
        if result.status == "ok":
            result.code = stage_digests(compiled.asm)
            try:
                result.metrics, result.artifacts = measure(compiled, target)
                describe_artifacts(result, compiled, session, seen_before)
                native_step(result, compiled, session)
                if cold is not None:
                    result.artifacts["cache_hit"] = recompiles_from_cache(fn, launch, Path(cold))
                else:
                    result.unavailable["cache_hit"] = SHARED_CACHE
            except Exception as exc:  # reading the figures failed: never blame the compiler for it
                raise MeasurementError(f"[{result.label}] {type(exc).__name__}: {exc}") from exc
            for stage in TEXT_STAGES:
                text = compiled.asm.get(stage)
                if isinstance(text, str):
                    name = f"config{index}.{stage}"
                    (out_dir / name).write_text(text)
                    result.ir[stage] = name
    return result


SHARED_CACHE = "the kernel compiles with the shared cache; set cold_cache=True in the repro to check it"


def recompiles_from_cache(fn: Any, launch: dict[str, Any], cache: Path) -> bool:
    """Compile once more from the same on-disk cache: a hit writes no new file there."""
    before = cache_files(cache)
    forget_compiled(fn)
    fn.warmup(grid=(1,), **launch)
    return cache_files(cache) <= before


def describe_artifacts(result: ConfigResult, compiled: Any, session: Session, seen_before: int) -> None:
    """The artifact properties only some targets have, each either measured or explained."""
    artifacts, why = result.artifacts, result.unavailable
    target = session.target
    if target.backend == "cuda" and isinstance(compiled.asm.get("cubin"), bytes):
        figures = cubin_figures(compiled.asm["cubin"], compiled.metadata.name)
        artifacts["binary_arch"], artifacts["binary_registers"] = figures["arch"], figures["registers"]
    if session.on_device:
        compiled._init_handles()
        artifacts["n_regs"] = compiled.n_regs
        # A device target's arch is the device's own (the matrix cannot know which GPU runs it).
        artifacts["device_arch"] = arch_of(target)
    else:
        why["n_regs"] = "n_regs is set by the driver when it loads the binary: only device targets have it"
    if session.ocloc is None:
        return
    builds = [a for a in session.ocloc.invocations()[seen_before:] if a[:1] == ["compile"]]
    if not builds:
        why["native_device"] = why["native_options"] = "ocloc was not run for this config (native code off)"
        return
    last = builds[-1]
    artifacts["native_device"] = last[last.index("-device") + 1] if "-device" in last else None
    artifacts["native_options"] = last[last.index("-options") + 1] if "-options" in last else ""
    artifacts["ocloc_invocations"] = [" ".join(a) for a in builds]
    if session.ocloc.chosen.path is None:
        artifacts["binary_kind"] = None
        why["binary_kind"] = (
            f"{session.ocloc.chosen.why_not}; the ocloc invocation was recorded and the stored "
            "binary stays SPIR-V, so the native binary is checked on an XPU runner"
        )


NATIVE_FIGURES = ("registers", "simd_size", "spill_bytes", "scratch_bytes", "scratch_bytes_per_block")


def native_step(result: ConfigResult, compiled: Any, session: Session) -> None:
    """XPU: the native binary of this config and IGC's figures for it. Where the compiler built
    native code itself (through the front), its binary is read; otherwise ocloc builds the SPIR-V
    for the target's device with the build flags the compiler chose, as the driver would at load."""
    chosen = session.ocloc.chosen if session.ocloc else None
    if chosen is None:
        return
    binary, name = compiled.asm["spv"], compiled.metadata.name
    device = arch_of(session.target)
    if binary_kind(binary) == "elf":
        zebin = binary
        result.artifacts["binary_device"] = ocloc.product_family(zebin)
    elif chosen.path is None:
        for figure in (*NATIVE_FIGURES, "binary_device"):
            result.unavailable[figure] = f"native code comes from Intel's ocloc, and {chosen.why_not}"
        return
    else:
        flags = getattr(compiled.metadata, "build_flags", "") or ""
        built = ocloc.build(chosen.path, binary, device, flags, chosen.identity)
        if not built.ok:
            overflow = built.scratch_overflow()
            result.status = "compile_error"
            result.error_type = "OutOfResources" if overflow else "NativeCompileError"
            if overflow:
                result.metrics["scratch_bytes"] = overflow[0]
            # The last line is what a summary shows: IGC's own diagnosis.
            result.message = (
                f"{' '.join(built.command)} (ocloc {chosen.version}) exited {built.returncode}:\n"
                f"{built.log.strip()}\n{built.diagnosis()}"
            )[-4000:]
            return
        zebin = built.binary or b""
        result.unavailable["binary_device"] = (
            f"the compiler produced SPIR-V; kregress built its native code for {device} itself"
        )
    result.code["zebin"] = digest("zebin", zebin)
    figures = ocloc.figures(zebin, name)
    hardware_threads = -(-result.artifacts["threads_per_block"] // figures["simd_size"])
    result.metrics.update(
        registers=figures["registers"],
        spill_bytes=figures["spill_bytes"],
        scratch_bytes=figures["scratch_bytes"],
        scratch_bytes_per_block=figures["scratch_bytes"] * hardware_threads,
    )
    result.artifacts.update(registers=figures["registers"], simd_size=figures["simd_size"])


def toolchain_versions() -> dict[str, str]:
    import triton

    return {"triton": triton.__version__, **NATIVE_VERSIONS}
