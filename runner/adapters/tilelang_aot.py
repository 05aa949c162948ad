"""TileLang: lower a prim_func for a CUDA target, keep the generated CUDA source and PTX, and read
registers/spills with the ptxas of the CUDA toolkit that produced the PTX.

Every release takes a TVM `Target` object (plain dicts only recent ones), so the adapter builds
one with the release's own TVM. When TileLang lowers a kernel but nvcc cannot build the result here
(an old release's templates against a newer CUDA toolkit), the generated source is still judged by
ir expectations, and `compiles` SKIPs naming nvcc instead of blaming the compiler. An exception
raised in the adapter's own code is kregress's ERROR, never either of those.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kregress.adapters import (
    AdapterError,
    ConfigResult,
    MeasurementError,
    Unsupported,
    ptxas_figures,
    raised_in_kregress,
)
from kregress.code_identity import stage_digests
from kregress.pass_trace import PASS_DUMPS
from kregress.paths import file_identity, kept_text

PASS_DUMPS_FILE = "config0.tir-passes"


def ptxas_for_toolkit() -> str:
    toolkit = Path("/usr/local/cuda/bin/ptxas")
    found = shutil.which("ptxas") or (str(toolkit) if toolkit.exists() else None)
    if not found:
        raise Unsupported("TileLang resource figures need the CUDA toolkit's ptxas on PATH")
    return found


def target_spellings(arch: str) -> list[Any]:
    return [{"kind": "cuda", "arch": arch}, f"cuda -arch={arch}"]


def cuda_target(tilelang: Any, arch: str) -> Any:
    """The target as a TVM `Target` made by the release's own TVM: the one form every release's
    `tilelang.compile` takes (0.1.7.x reads a dict's `.kind` and fails)."""
    from tilelang import tvm

    refused = []
    for spelling in target_spellings(arch):
        try:
            return tvm.target.Target(spelling)
        except Exception as exc:  # this TVM parses the other spelling
            refused.append(f"{spelling!r}: {type(exc).__name__}: {exc}")
    raise AdapterError(
        f"tilelang {tilelang.__version__}'s TVM accepts none of the target spellings for {arch}: "
        + "; ".join(refused)
    )


NATIVE_BUILD_FILES = ("jit/adapter/libgen.py", "contrib/nvcc.py")


def native_build_failed(exc: BaseException) -> bool:
    """Whether nvcc (run by TileLang on the generated source) is what failed, not the lowering."""
    if str(exc).startswith("Compilation Failed!"):
        return True
    frames = traceback.extract_tb(exc.__traceback__)
    return any(frame.filename.replace("\\", "/").endswith(NATIVE_BUILD_FILES) for frame in frames)


# What the CUDA runtime says where there is no GPU: a kernel built, whose host code's initialization
# (its dynamic shared memory set, TileLang 0.1.6's `init`) needs the device to tell whether it holds.
NO_GPU_HERE = re.compile(
    r"CUDA driver version is insufficient for CUDA runtime version|no CUDA-capable device is detected"
    r"|CUDA_ERROR_NO_DEVICE"
)


def needs_a_gpu_to_tell(exc: BaseException) -> str | None:
    """The runtime's words where the kernel was built and only its initialization failed, for want
    of a GPU on this machine (never the compiler's failure, nor a verdict on it)."""
    found = NO_GPU_HERE.search(str(exc))
    return found.group(0) if found else None


NVCC_ERROR = re.compile(r"^(?P<file>\S.*?)\((?P<line>\d+)\): (?:catastrophic )?error\b", re.MULTILINE)
PTXAS_ERROR = re.compile(r"^ptxas (?:error|fatal)\b", re.MULTILINE | re.IGNORECASE)


def toolkit_refused(message: str) -> bool:
    """Whether nvcc's failure is this machine's CUDA toolkit, not the compiler under test.

    The compiler's: an error in the kernel file it generated (a call to a function that does not
    exist), in a header it ships (its templates, its CUTLASS: a static_assert refusing a block
    size), or ptxas refusing its PTX for the target. The machine's: errors only in the toolkit's own
    headers. Releases that pass on no nvcc output (0.1.6.x) leave nothing to blame the compiler
    with, so that is the machine's too."""
    if PTXAS_ERROR.search(message):
        return False
    files = [found["file"] for found in NVCC_ERROR.finditer(message)]
    return not any(name.endswith(".cu") or "/tilelang/" in name for name in files)


def lowered_source(tilelang: Any, prim_func: Any, target: Any) -> str | None:
    """The CUDA source TileLang generates, without building it."""
    try:
        with target:
            return str(tilelang.lower(prim_func).kernel_source)
    except Exception:
        return None


def compile_for(tilelang: Any, kernel: Any, target: Any) -> Any:
    options = {"pass_configs": dict(kernel.pass_configs)} if kernel.pass_configs else {}
    return tilelang.compile(kernel.build(), target=target, **options)


@contextlib.contextmanager
def compile_session(target_spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Refuse early what cannot be built here; the repro is imported inside."""
    if target_spec["backend"] != "cuda":
        raise Unsupported(f"the TileLang adapter builds CUDA targets only, not {target_spec['name']}")
    try:
        import tilelang  # noqa: F401
    except ImportError as exc:
        raise Unsupported(f"tilelang is not installed in this environment ({exc})") from None
    except OSError as exc:  # a release built against a runtime this machine lacks (0.1.7.post2: nvrtc 13)
        if "cannot open shared object file" not in str(exc):
            raise
        raise Unsupported(f"this tilelang release cannot load here: {exc}") from None
    if shutil.which("nvcc") is None:
        raise Unsupported("TileLang compiles CUDA with nvcc, which is not on PATH")
    yield target_spec


@contextlib.contextmanager
def tir_pass_dumps(tilelang: Any, path: Path) -> Iterator[None]:
    """The TIR after every TVM pass, in the header format of MLIR's dumps (pass_trace reads both).
    Every release opens its own PassContext, so the instrument joins each context made while the
    kernel compiles; the kernel cache is turned off, since a cached kernel runs no pass."""
    from tilelang import tvm

    from kregress.pass_trace import dump_header

    out = path.open("w")

    @tvm.instrument.pass_instrument
    class DumpAfterEachPass:
        def __init__(self) -> None:
            self.started = False

        def write(self, when: str, mod: Any, info: Any) -> None:
            try:
                text = mod.script()
            except Exception:  # a module TVMScript cannot print: its plain form
                text = str(mod)
            out.write(f"{dump_header(when, info.name, 'IRModule')}\n{text}\n")

        def run_before_pass(self, mod: Any, info: Any) -> None:
            if not self.started:  # the input, once per context
                self.started = True
                self.write("Before", mod, info)

        def run_after_pass(self, mod: Any, info: Any) -> None:
            self.write("After", mod, info)

    context = tvm.transform.PassContext
    original = context.__init__

    def with_dumps(self: Any, *args: Any, instruments: Any = None, **kwargs: Any) -> None:
        original(self, *args, instruments=[*(instruments or []), DumpAfterEachPass()], **kwargs)

    for switch in (getattr(tilelang, "disable_cache", None), getattr(tilelang.env, "disable_cache", None)):
        if switch is not None:
            switch()
            break
    context.__init__ = with_dumps
    try:
        yield
    finally:
        context.__init__ = original
        out.close()


def compile_kernel(
    kernel: Any, target_spec: dict[str, Any], out_dir: Path, trace_passes: bool = False
) -> list[ConfigResult]:
    """The kernel compiled, and each later compile call of a reporter's code as a config of its own
    (`call 2`, …: "this one compiles, this one raises")."""
    results = compile_one(kernel, target_spec, out_dir, trace_passes, "default", 0)
    for index, later in enumerate(getattr(kernel, "later", ()), start=1):
        results += compile_one(later, target_spec, out_dir, False, f"call {index + 1}", index)
    return results


def compile_one(
    kernel: Any, target_spec: dict[str, Any], out_dir: Path, trace_passes: bool, label: str, index: int
) -> list[ConfigResult]:
    import tilelang

    result = ConfigResult(label=label)
    started = time.perf_counter()
    arch = target_spec["arch"]
    target = cuda_target(tilelang, arch)
    if trace_passes:  # written up to where the compile stops (nvcc may refuse an old release's source)
        result.ir[PASS_DUMPS] = PASS_DUMPS_FILE
    try:
        with (
            tir_pass_dumps(tilelang, out_dir / PASS_DUMPS_FILE) if trace_passes else contextlib.nullcontext()
        ):
            compiled = compile_for(tilelang, kernel, target)
        source = compiled.get_kernel_source()
    except Unsupported:
        raise
    except Exception as exc:
        if raised_in_kregress(exc):
            raise AdapterError(f"{type(exc).__name__}: {exc}") from exc
        no_gpu = needs_a_gpu_to_tell(exc)
        build_failed = native_build_failed(exc) or no_gpu is not None
        source = lowered_source(tilelang, kernel.build(), target) if build_failed else None
        refused_here = source is not None and (no_gpu is not None or toolkit_refused(str(exc)))
        result.status = "source_only" if refused_here else "compile_error"
        message = without_source(str(exc)) + diagnosis(str(exc))
        if no_gpu is not None:
            message = f"built, but its host code's initialization needs a GPU to tell, and here: {no_gpu}"
        result.error_type, result.message = type(exc).__name__, message[-4000:]
        if source is not None:
            result.code = stage_digests({"cuda_source": source})
            (out_dir / f"config{index}.cuda_source").write_text(source)
            result.ir["cuda_source"] = f"config{index}.cuda_source"
        result.seconds = time.perf_counter() - started
        return [result]
    (out_dir / f"config{index}.cuda_source").write_text(source)
    result.ir["cuda_source"] = f"config{index}.cuda_source"
    result.artifacts = {"binary_kind": "cubin", "arch": arch}
    get_ptx = getattr(compiled, "_get_ptx", None)  # absent in some releases: then no resource figures
    ptx = kept_ptx(get_ptx, tilelang.__version__, kernel, source, arch) if get_ptx is not None else None
    result.code = stage_digests({"cuda_source": source, "ptx": ptx})
    if ptx is not None:
        (out_dir / f"config{index}.ptx").write_text(ptx)
        result.ir["ptx"] = f"config{index}.ptx"
        try:
            result.metrics = ptxas_figures(ptxas_for_toolkit(), ptx, arch)
        except Exception as exc:  # reading the figures failed: never blame the compiler for it
            raise MeasurementError(f"{type(exc).__name__}: {exc}") from exc
        result.artifacts["registers"] = result.metrics["registers"]
    result.seconds = time.perf_counter() - started
    return [result]


def kept_ptx(get_ptx: Any, version: str, kernel: Any, source: str, arch: str) -> str:
    """The PTX nvcc makes of the generated source, kept by what decides it (the release, whose
    flags nvcc gets, the kernel's pass configs, nvcc itself, the arch, the source): TileLang's own
    cache keeps the built library but not the PTX, and nvcc takes seconds a kernel."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return get_ptx()
    configs = repr(sorted(dict(kernel.pass_configs or {}).items()))
    decided_by = [version, configs, *file_identity(nvcc), arch]
    return kept_text("tilelang-ptx", decided_by, source, get_ptx, suffix=".ptx")


def diagnosis(message: str) -> str:
    """nvcc's error lines from a failed build's message, kept after the command that failed (the
    source they point into is dropped): the last line says what went wrong, as a reader and a
    search for the quoted error look for it."""
    errors = [line.strip() for line in message.splitlines() if re.search(r"\berror\b\s*:", line)]
    return "".join(f"\n{line}" for line in errors[-3:])


def without_source(message: str) -> str:
    """TileLang appends the whole generated source to a failed build's message; the command
    (and the diagnosis nvcc printed to the log) say what failed, the source is kept anyway."""
    head, _, _ = message.partition("\n")
    return head if head.startswith("Compilation Failed!") else message


def toolchain_versions() -> dict[str, str]:
    import tilelang

    return {"tilelang": tilelang.__version__}
