"""TileLang: lower a prim_func for a CUDA target, keep the generated CUDA source and PTX, and read
registers/spills with the ptxas of the CUDA toolkit that produced the PTX.

Releases spell the target differently ({"kind": "cuda", "arch": "sm_90"} recently, "cuda -arch=sm_90"
earlier); each spelling is tried in turn. When TileLang lowers a kernel but nvcc cannot build the
result here (an old release's templates against a newer CUDA toolkit), the generated source is still
judged by ir expectations, and `compiles` SKIPs with the reason instead of blaming the compiler.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kregress.adapters import ConfigResult, MeasurementError, Unsupported, ptxas_figures
from kregress.pass_trace import PASS_DUMPS

PASS_DUMPS_FILE = "config0.tir-passes"


def ptxas_for_toolkit() -> str:
    toolkit = Path("/usr/local/cuda/bin/ptxas")
    found = shutil.which("ptxas") or (str(toolkit) if toolkit.exists() else None)
    if not found:
        raise Unsupported("TileLang resource figures need the CUDA toolkit's ptxas on PATH")
    return found


def target_spellings(arch: str) -> list[Any]:
    return [{"kind": "cuda", "arch": arch}, f"cuda -arch={arch}"]


def rejects_spelling(exc: Exception, spelling: Any) -> bool:
    """Did the release refuse how the target was written (rather than fail to compile)?"""
    return str(spelling) in str(exc) or (isinstance(exc, TypeError) and "target" in str(exc).lower())


def lowered_source(tilelang: Any, prim_func: Any, arch: str) -> str | None:
    """The CUDA source TileLang generates, without building it."""
    try:
        from tilelang import tvm

        with tvm.target.Target(f"cuda -arch={arch}"):
            return str(tilelang.lower(prim_func).kernel_source)
    except Exception:
        return None


def compile_with_some_spelling(tilelang: Any, kernel: Any, arch: str) -> Any:
    options = {"pass_configs": dict(kernel.pass_configs)} if kernel.pass_configs else {}
    last: Exception | None = None
    for spelling in target_spellings(arch):
        try:
            return tilelang.compile(kernel.build(), target=spelling, **options)
        except Exception as exc:
            if not rejects_spelling(exc, spelling):
                raise
            last = exc
    raise Unsupported(
        f"tilelang {tilelang.__version__} accepts none of the target spellings for {arch}: {last}"
    )


@contextlib.contextmanager
def compile_session(target_spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Refuse early what cannot be built here; the repro is imported inside."""
    if target_spec["backend"] != "cuda":
        raise Unsupported(f"the TileLang adapter builds CUDA targets only, not {target_spec['name']}")
    try:
        import tilelang  # noqa: F401
    except ImportError as exc:
        raise Unsupported(f"tilelang is not installed in this environment ({exc})") from None
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
    import tilelang

    result = ConfigResult(label="default")
    started = time.perf_counter()
    arch = target_spec["arch"]
    if trace_passes:  # written up to where the compile stops (nvcc may refuse an old release's source)
        result.ir[PASS_DUMPS] = PASS_DUMPS_FILE
    try:
        with (
            tir_pass_dumps(tilelang, out_dir / PASS_DUMPS_FILE) if trace_passes else contextlib.nullcontext()
        ):
            compiled = compile_with_some_spelling(tilelang, kernel, arch)
        source = compiled.get_kernel_source()
    except Unsupported:
        raise
    except Exception as exc:
        source = lowered_source(tilelang, kernel.build(), arch)
        result.status = "source_only" if source is not None else "compile_error"
        message = without_source(str(exc)) + diagnosis(str(exc))
        result.error_type, result.message = type(exc).__name__, message[-4000:]
        if source is not None:
            (out_dir / "config0.cuda_source").write_text(source)
            result.ir["cuda_source"] = "config0.cuda_source"
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
