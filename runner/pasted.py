"""A reporter's pasted Triton code, run as a triager runs it on a machine without their GPU.

The code is kept as it was pasted (a draft's pasted.py); what changes is how it runs. On the CPU
its device strings name the CPU and each launch runs in the interpreter (the job sets
TRITON_INTERPRET=1); on a device it runs as written; for a compile target its first launch is
captured (the kernel, its bound arguments and launch options) and compiled for the target instead
of run, through the same adapter as every case; an ahead-of-time `triton.compile(ASTSource(...))`
is captured the same way, its arguments made from the source's signature. Child side: imported
inside toolchain environments.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import math
import os
import re
import sys
import traceback
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kregress.child_results import CaseError
from kregress.errors import KregressError

DEVICE_STRING = re.compile(r"""(["'])(cuda|xpu|hip)(:\d+)?\1""")
# A runtime scalar's value where a completed kernel's body implies only that it is a number: a size
# as launches pass them (not 1, which Triton specializes into a constant; divisible by 16).
SCALAR = 1024
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "grf_mode")
# Triton's signature strings for the pointers and scalars of an ahead-of-time ASTSource.
SIGNATURE_DTYPES = {"fp64": "float64", "fp32": "float32", "fp16": "float16", "bf16": "bfloat16",
                    "i64": "int64", "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8",
                    "i1": "bool", "u32": "uint32", "u64": "uint64", "fp8e4nv": "float8_e4m3fn",
                    "fp8e5": "float8_e5m2"}  # fmt: skip


# A tensor's device as torch is told it: `device="cuda"`, `torch.device("cuda:0")`
TENSOR_DEVICE = re.compile(r"""(\bdevice\s*=\s*|\btorch\.device\(\s*)(["'])(cuda|xpu|hip)(:\d+)?\2""")


def on_cpu(source: str, every_string: bool = True) -> str:
    """The code with its GPU device strings, `.cuda()` and `torch.cuda.synchronize()` on the CPU, and
    a GPU's device context (`with torch.cuda.device(x.device.index):`, `torch.cuda.set_device(0)`)
    one that selects nothing: on the CPU there is no device to select. `every_string=False`: only
    the devices torch is told (`device="cuda"`), for code whose other "cuda" strings name the
    compiler's target (TileLang's `target="cuda"`)."""
    if every_string:
        source = DEVICE_STRING.sub(r"\1cpu\1", source)
    else:
        source = TENSOR_DEVICE.sub(r"\1\2cpu\2", source)
    source = re.sub(r"\.cuda\(\)", ".cpu()", source)
    selects = "(lambda *_, **__: __import__('contextlib').nullcontext())("
    source = re.sub(r"\btorch\.(?:cuda|xpu)\.device\(", selects, source)
    source = re.sub(r"\btorch\.(?:cuda|xpu)\.set_device\(", "(lambda *_, **__: None)(", source)
    return re.sub(r"torch\.(cuda|xpu)\.synchronize\(\)", "torch.cpu.synchronize()", source)


def execute(
    path: Path,
    source: str,
    then: Callable[[types.ModuleType], Any] | None = None,
    otherwise: Callable[[types.ModuleType, BaseException], Any] | None = None,
    raised_below: Callable[[types.ModuleType, BaseException], Any] | None = None,
) -> Any:
    """Run the code as the main module of a script, as its reporter did: a module of its own stands
    in for __main__ while it runs (frontends that parse a kernel's source, as TileLang's does, look
    its names up through the function's module). `otherwise`: what follows a failure of the code's
    own line, with what it defined until then (the module still standing in); `raised_below`: what
    follows one raised in what the code calls (it may raise the failure again)."""
    try:
        # dont_inherit: this module's `from __future__ import annotations` would otherwise turn the
        # paste's annotations into strings, and Triton 3.0/3.1's interpreter then misses that
        # `BLOCK: tl.constexpr` is a constexpr (a failure of kregress's, not the compiler's).
        code = compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:  # a paste cut short, or not Python: the draft's, never the compiler's
        raise CaseError(own_error(path, exc)) from None
    module = types.ModuleType("__main__")
    module.__file__ = str(path)
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    # run as `python pasted.py`: a script's argparse reads its defaults, not this process's arguments
    # (a pytest child's, which it refuses with SystemExit before the kernel is reached)
    argv, sys.argv = sys.argv, [str(path)]
    try:
        with absent_stood_in(source):
            exec(code, module.__dict__)  # the point: run the reporter's code
            if then is not None:  # what follows the run, with the module still standing in for __main__
                return then(module)
    except Exception as exc:
        own = fails_in_own_code(path, exc)
        if not isinstance(exc, Launched):
            if own and otherwise is not None:
                return otherwise(module, exc)
            if not own and raised_below is not None:
                return raised_below(module, exc)
        if not isinstance(exc, NameError):
            raise
        # a name the paste never binds anywhere (a line lost in the paste, a helper left out), or
        # any name its top-level code reads before binding it, raised in its own code: the draft's
        # error. A name it does bind that a function body cannot find (an interpreter that runs a
        # kernel body in the wrong scope) or one raised inside the compiler is the compiler's.
        at_top = traceback.extract_tb(exc.__traceback__)[-1].name == "<module>"
        if own and (at_top or exc.name not in bound_names(ast.parse(source))):
            raise CaseError(own_error(path, exc)) from None
        raise
    finally:
        sys.argv = argv
        if saved is not None:
            sys.modules["__main__"] = saved
    return module


class AbsentName:
    """What the code takes from a module not installed here: any use raises the ModuleNotFoundError
    its import would have raised."""

    def __init__(self, module: str, name: str) -> None:
        self._module, self._name = module, name

    def _absent(self) -> ModuleNotFoundError:
        return ModuleNotFoundError(
            f"No module named '{self._module}' (the code uses {self._name} from it; not installed here)",
            name=self._module,
        )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise self._absent()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise self._absent()


class AbsentModule(types.ModuleType):
    """A module the code imports that is not installed here (a reference implementation's package,
    a plotting library): the import stands, as a triager comments it out, so that a kernel the code
    compiles before it uses the module is still judged; a run that uses it fails as the import would
    have (never the compiler's: kregress.bisect.triage.importer.missing_module)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__path__: list[str] = []  # a package: its submodules stand in too

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return AbsentName(self.__name__, name)


class AbsentModules:
    """The meta path finder that answers, after every real one, for the modules `absent` names."""

    def __init__(self, absent: set[str]) -> None:
        self.absent = absent

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        import importlib.machinery

        if fullname.split(".")[0] not in self.absent:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: Any) -> types.ModuleType:
        return AbsentModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def absent_imports(tree: ast.AST) -> set[str]:
    """The top-level packages the code imports outside a `try` (one inside asks whether it is there)
    that are not installed here."""
    import importlib.util

    tried: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try):
            tried.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in tried:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return {name for name in names if name not in sys.modules and importlib.util.find_spec(name) is None}


@contextlib.contextmanager
def absent_stood_in(source: str) -> Any:
    """While the code runs, its imports of packages not installed here stand (AbsentModule)."""
    try:
        absent = absent_imports(ast.parse(source))
    except SyntaxError:
        absent = set()
    if not absent:
        yield
        return
    finder = AbsentModules(absent)
    sys.meta_path.append(finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n.split(".")[0] in absent]:
            del sys.modules[name]


def bound_names(tree: ast.AST) -> set[str]:
    """Every name the code binds anywhere: assigned, defined, imported, a parameter."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def frames_to(exc: BaseException) -> list[traceback.FrameSummary]:
    """The frames down to where it was raised, less a stand-in's of this module (AbsentName): the
    line that used it is where it failed."""
    frames = list(traceback.extract_tb(exc.__traceback__))
    while frames and frames[-1].filename == __file__:
        frames.pop()
    return frames


def fails_in_own_code(path: Path, exc: BaseException) -> bool:
    """Raised by a line of the paste itself (`kernel.get_kernel_source()` on what the release's
    factory returned), not inside the compiler it calls."""
    frames = frames_to(exc)
    if frames and frames[-1].filename == str(path):
        return True
    # an attribute the paste's own line asks of an object, refused inside the compiler by that
    # object's __getattr__ (TVM's): the release's object lacks it. One the compiler asks of its own
    # objects (the interpreter's builder lacking a type) is not the paste's line, and can be the bug.
    named = re.search(r"has no attribute '?(\w+)", str(exc)) if isinstance(exc, AttributeError) else None
    lines = [frame.line or "" for frame in frames if frame.filename == str(path)]
    return bool(named and lines and re.search(rf"\.{named.group(1)}\b", lines[-1]))


def completed_after_own_failure(
    path: Path, ran: types.ModuleType, complete: dict[str, Any] | None, exc: BaseException, kernel: Callable
) -> Any:
    """The code failed in its own line before it launched or compiled anything: where it defined
    the kernel the completion names, that kernel, as a triager compiles it; otherwise the draft's
    ERROR, saying the line (never an AttributeError that reads as the driver lacking its kernel)."""
    if completable(ran, complete):
        return kernel(path, ran, complete)
    raise CaseError(own_error(path, exc)) from None


def own_error(path: Path, exc: BaseException) -> str:
    """The paste's own line and error, as Python shows them: an ERROR of the draft, not a verdict."""
    if isinstance(exc, SyntaxError):
        line, text = exc.lineno, (exc.text or "").rstrip()
    else:
        frame = (frames_to(exc) or traceback.extract_tb(exc.__traceback__))[-1]
        line, text = frame.lineno, frame.line or ""
    shown = f"\n    {text.strip()}" if text else ""
    return f"{path.name}'s own code fails at {path}:{line}: {type(exc).__name__}: {exc}{shown}"


class Tee(io.StringIO):
    """What the code prints, kept and shown as it goes."""

    def __init__(self, shown: Any) -> None:
        super().__init__()
        self.shown = shown

    def write(self, text: str) -> int:
        self.shown.write(text)
        return super().write(text)


def run_pasted(path: Path, device: str, complete: dict[str, Any] | None = None) -> str:
    """Run the code to its end: on the CPU in the interpreter, elsewhere as written, then the
    function it defines to run its kernel and never calls (the completion's entry). What it printed."""
    source = path.read_text()
    printed = Tee(sys.stdout)
    interpreted = device == "cpu" and os.environ.get("TRITON_INTERPRET") == "1"
    counted = interpreted and defines_triton_kernel(source)
    with contextlib.redirect_stdout(printed), interpreter_launches(counted) as launches:
        execute(path, on_cpu(source) if device == "cpu" else source, lambda ran: call_entry(ran, complete))
    if launches == [0]:  # its kernel never ran in the interpreter: nothing was judged, never a PASS
        raise CaseError(f"{path.name} ran to its end without launching a Triton kernel in the interpreter")
    return printed.getvalue()


def defines_triton_kernel(source: str) -> bool:
    """Whether the code defines a `@triton.jit` function (`@jit` imported from triton): only then is a
    run that never launches one a run that judged nothing. Code that calls a compiler's Python API
    and no kernel of its own is judged by what it printed or raised."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    jit_names = {"triton.jit"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):  # `import triton as tr`: `@tr.jit`
            jit_names |= {f"{a.asname}.jit" for a in node.names if a.name == "triton" and a.asname}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "triton":
            jit_names |= {alias.asname or alias.name for alias in node.names if alias.name == "jit"}
    return any(
        ast.unparse(target) in jit_names
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for target in decorator_targets(node)
    )


def decorator_targets(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """What each decorator names, called or not (`@triton.jit(...)` and `@triton.jit` alike)."""
    return [d.func if isinstance(d, ast.Call) else d for d in node.decorator_list]


@contextlib.contextmanager
def interpreter_launches(counted: bool) -> Any:
    """How many grids Triton's interpreter ran while the code ran (`[n]`; `[]` where not counted:
    off the CPU, or the interpreter not on). Every 3.x release runs a launch through its
    GridExecutor."""
    launches: list[int] = []
    executor = None
    if counted:
        try:
            from triton.runtime import interpreter

            executor = interpreter.GridExecutor
        except (ImportError, AttributeError):
            executor = None
    if executor is None:
        yield launches
        return
    original = executor.__call__
    launches.append(0)

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        launches[0] += 1
        return original(self, *args, **kwargs)

    executor.__call__ = counting
    try:
        yield launches
    finally:
        executor.__call__ = original


def call_entry(ran: types.ModuleType, complete: dict[str, Any] | None) -> types.ModuleType:
    """Call the function the code defines to run its kernel and never calls (`def test_dot():` left
    for pytest, a `main` whose call was cut off), as a triager runs it: a launch or compile in it is
    captured or run as one at the code's top level would be. The module, as the code left it."""
    entry = (complete or {}).get("entry")
    function = ran.__dict__.get(entry) if entry else None
    if callable(function):
        function()
    return ran


# A number as Python, NumPy and torch print one (also how an issue states one: kregress import reads
# it with this pattern).
NUMBER = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)\b"


def shown(values: list[float], printed: list[float]) -> bool:
    """Whether every value appears among the printed numbers (as printing rounds it)."""
    return all(
        any(
            math.isclose(v, p, rel_tol=1e-3, abs_tol=1e-6) or (math.isnan(v) and math.isnan(p))
            for p in printed
        )
        for v in values
    )


def judge_stated(printed: str, stated: dict[str, list[float]]) -> tuple[Any, Any]:
    """The issue's stated values against what the code printed, as a numerics check's (got,
    expected): the wrong value shown is a mismatch (where the expected one is shown too, only when
    the wrong one is distinctive: not 0 or 1, which any output may print); the expected value
    alone is a match; neither cannot tell, and that is the draft's, never a verdict."""
    import numpy as np

    found = [float(n) for n in re.findall(NUMBER, printed, re.I)]
    expected, wrong = stated["expected"], stated["wrong"]
    if len(expected) == len(wrong):  # elementwise: only where they differ tells
        differ = [(e, w) for e, w in zip(expected, wrong, strict=True) if e != w]
        expected_told, wrong_told = [e for e, _ in differ], [w for _, w in differ]
    else:
        expected_told, wrong_told = expected, wrong
    shows_wrong, shows_expected = shown(wrong_told, found), shown(expected_told, found)
    distinctive = any(abs(v) not in (0.0, 1.0) for v in wrong_told)
    if shows_wrong and (not shows_expected or distinctive):
        return np.array(wrong, dtype=float), np.array(expected, dtype=float)
    if shows_expected and not shows_wrong:
        return np.array(expected, dtype=float), np.array(expected, dtype=float)
    said = "both" if shows_wrong else "neither"
    raise CaseError(
        f"the output shows {said} of the values the issue states (expected {expected}, wrong {wrong}): "
        "it cannot tell whether the bug shows"
    )


class Launched(KregressError):
    """Not an error: how a capture stops the pasted code at its first launch."""

    def __init__(self, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        super().__init__("launched")
        self.kernel, self.args, self.kwargs = kernel, args, kwargs


def capture_first_launch(path: Path, complete: dict[str, Any] | None = None) -> Any:
    """The code's first kernel as its framework's wrapper: for Triton the @triton.jit function, the
    arguments it was launched with (on the CPU) and its launch options as the one config; for
    TileLang the first prim_func handed to `tilelang.compile` (or built by `@tilelang.jit`). Code
    that runs to its end without one gets the importer's completion (kregress.bisect.triage.complete),
    where it has one: the kernel it defines, with the arguments its body implies."""
    if re.search(r"^\s*(import|from)\s+tilelang\b", path.read_text(), re.M):
        return capture_first_tilelang_compile(path, complete)
    import triton
    import triton.compiler as compiler_module
    from triton.runtime.jit import JITFunction

    from kregress.case import TritonKernel

    def stop(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise Launched(self, args, kwargs)

    original_compile = triton.compile

    def stop_compile(src: Any, *args: Any, **kwargs: Any) -> Any:
        """An ahead-of-time `triton.compile(ASTSource(...), target=...)`: its kernel, with
        arguments made from the signature (a pointer's dtype is all a compile needs)."""
        if not hasattr(src, "fn") or not hasattr(src, "signature"):
            return original_compile(src, *args, **kwargs)
        raise Launched(src.fn, (), arguments_of_source(src))

    original = JITFunction.run
    JITFunction.run = stop  # type: ignore[method-assign]
    triton.compile = compiler_module.compile = stop_compile
    completing = lambda ran, exc: completed_after_own_failure(  # noqa: E731
        path, ran, complete, exc, completed_triton_kernel
    )
    compiling = lambda ran, exc: compiled_after_triton_raised(path, ran, complete, exc)  # noqa: E731
    try:
        module = execute(
            path, on_cpu(path.read_text()), lambda ran: call_entry(ran, complete), completing, compiling
        )
    except Launched as launched:
        kernel, args, kwargs = launched.kernel, launched.args, launched.kwargs
    else:
        if isinstance(module, TritonKernel):  # completed after the code's own line failed
            return module
        if not complete:
            raise CaseError(f"{path.name} ran to its end without launching or compiling a Triton kernel")
        return completed_triton_kernel(path, module, complete)
    finally:
        JITFunction.run = original  # type: ignore[method-assign]
        triton.compile = compiler_module.compile = original_compile
    parameters = inspect.signature(kernel.fn).parameters
    bound = inspect.signature(kernel.fn).bind_partial(
        *args, **{k: v for k, v in kwargs.items() if k in parameters}
    )
    options = {k: v for k, v in kwargs.items() if k in LAUNCH_OPTIONS and v is not None}
    arguments = dict(bound.arguments)
    return TritonKernel(kernel, args=lambda: arguments, configs=[options] if options else None)


def compiled_after_triton_raised(
    path: Path, ran: types.ModuleType, complete: dict[str, Any] | None, exc: BaseException
) -> Any:
    """Triton's frontend failed to compile while the code ran, before it launched anything (a parser
    call of the code's own, `run_parser(kernel)`), which a compile target never reaches as a launch:
    the kernel the completion names, compiled as a triager compiles it, where the code defines it
    (the same frontend runs there). Any other failure, raised as it was: Triton's API refusing the
    code's use of it (`tl.cdiv` called outside a kernel) is the code's, not a compile."""
    from triton.compiler.errors import CompilationError

    if isinstance(exc, CompilationError) and completable(ran, complete):
        return completed_triton_kernel(path, ran, complete)  # type: ignore[arg-type]
    raise exc


def completable(ran: types.ModuleType, complete: dict[str, Any] | None) -> bool:
    """Whether the completion can be carried out: it gives every value, and the code defined the
    kernel it names."""
    return bool(complete and not complete["missing"] and ran.__dict__.get(complete["function"]) is not None)


def lacking_values(path: Path, complete: dict[str, Any]) -> CaseError:
    return CaseError(
        f"{path.name} defines `{complete['function']}` and never runs it, and gives no value for "
        f"{', '.join(complete['missing'])}: the kernel cannot be completed without them (the draft's, "
        "not the compiler's)"
    )


def completed_tilelang_kernel(path: Path, ran: types.ModuleType, complete: dict[str, Any] | None) -> Any:
    """Where the code ran to its end without compiling: the prim_func it defines, or what the
    factory it defines returns when called with the completion's values (None: no completion)."""
    if not complete:
        return None
    if complete["missing"]:
        raise lacking_values(path, complete)
    defined = ran.__dict__.get(complete["function"])
    given = {**dict.fromkeys(complete.get("unread", ())), **complete["values"]}  # unread: None
    built = defined(**given) if complete["call"] and callable(defined) else defined
    if built is None:
        raise CaseError(f"{path.name}'s `{complete['function']}` builds no kernel once run")
    return built


def completed_triton_kernel(path: Path, module: types.ModuleType, complete: dict[str, Any]) -> Any:
    """The @triton.jit function the code defines and never launches, with the arguments the
    completion implies: a one-element tensor of its dtype per pointer, SCALAR per other runtime
    parameter, the values given (constexprs, scalars the code binds)."""
    import torch
    from triton.runtime.jit import JITFunction

    from kregress.case import TritonKernel

    if complete["missing"]:
        raise lacking_values(path, complete)
    kernel = module.__dict__.get(complete["function"])
    while kernel is not None and not isinstance(kernel, JITFunction) and hasattr(kernel, "fn"):
        kernel = kernel.fn  # an autotuner's or heuristics' wrapper
    if not isinstance(kernel, JITFunction):
        raise CaseError(f"{path.name} has no @triton.jit function `{complete['function']}` once run")
    arguments: dict[str, Any] = {
        name: torch.empty(1, dtype=getattr(torch, dtype)) for name, dtype in complete["pointers"].items()
    }
    arguments |= {name: SCALAR for name in complete["scalars"]} | dict(complete["values"])
    order = list(inspect.signature(kernel.fn).parameters)
    ordered = {name: arguments[name] for name in order if name in arguments}
    return TritonKernel(kernel, args=lambda: ordered)


def arguments_of_source(src: Any) -> dict[str, Any]:
    """Values for an ASTSource's parameters: its constexprs as given, a one-element CPU tensor of
    each pointer's dtype, 1 for each scalar. Releases key the signature and constants by name
    (3.3 on) or by position (before), and constants by a tuple path in between: all are read."""
    import torch

    names = list(src.fn.arg_names)

    def by_name(table: Any) -> dict[str, Any]:
        out = {}
        for key, value in dict(table or {}).items():
            index = key[0] if isinstance(key, tuple) and len(key) == 1 else key
            name = names[index] if isinstance(index, int) and index < len(names) else index
            if isinstance(name, str):
                out[name] = value
        return out

    signature = by_name(src.signature)
    constants = {**by_name(getattr(src, "constants", None)), **by_name(getattr(src, "constexprs", None))}
    values: dict[str, Any] = {}
    for name in names:
        kind = str(signature.get(name, "constexpr"))
        if name in constants or kind == "constexpr":
            values[name] = constants.get(name)
        elif kind.startswith("*"):
            dtype = SIGNATURE_DTYPES.get(kind.lstrip("*k"), "float32")
            values[name] = torch.empty(1, dtype=getattr(torch, dtype))
        else:
            values[name] = 1.0 if kind.startswith(("fp", "bf")) else 1
    return values


class CapturedCompile:
    """What a captured TileLang compile hands back to the code: any use of it ends the capture (the
    kernels compiled until then are judged), so that a later compile call the code makes first
    ("this one compiles, this one raises") is judged too."""

    def __getattr__(self, name: str) -> Any:
        raise Launched(None, (), {})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise Launched(None, args, kwargs)

    def __getitem__(self, key: Any) -> Any:
        raise Launched(None, (), {})


def capture_first_tilelang_compile(path: Path, complete: dict[str, Any] | None = None) -> Any:
    """The first prim_func the code compiles, with those it compiles after it before it uses any."""
    import importlib

    import tilelang

    from kregress.case import TileLangKernel

    module = importlib.import_module("tilelang.jit")  # `tilelang.jit` itself is the decorator
    captured: list[TileLangKernel] = []

    def stop(func: Any = None, *args: Any, **kwargs: Any) -> Any:
        configs = dict(kwargs.get("pass_configs") or {})
        captured.append(TileLangKernel(lambda: func, pass_configs=configs))
        return CapturedCompile()

    def captured_kernels() -> Any:
        first, *later = captured
        return TileLangKernel(first.build, first.pass_configs, tuple(later))

    def fails_to_build(failure: BaseException) -> TileLangKernel:
        def build() -> Any:
            raise failure

        return TileLangKernel(build)

    def own_failure_after(ran: Any, exc: BaseException) -> Any:
        return completed_after_own_failure(path, ran, complete, exc, completed_tilelang_kernel)

    originals = (tilelang.compile, module.compile)
    tilelang.compile = module.compile = stop  # JITImpl.compile looks the module's up when called
    try:
        built = execute(
            path,
            # the tensors it makes on the CPU (the compile is captured before any reaches a GPU); a
            # "cuda" that names TileLang's target stays
            on_cpu(path.read_text(), every_string=False),
            lambda ran: (
                None if captured else completed_tilelang_kernel(path, call_entry(ran, complete), complete)
            ),
            lambda ran, exc: None if captured else own_failure_after(ran, exc),
        )
        if built is not None and not captured:  # a completion's jit factory compiles: captured then
            return TileLangKernel(lambda: built)
    except Launched:
        pass  # a compiled kernel used: the ones compiled until then are judged
    except CaseError:
        if not captured:
            raise
    except Exception as exc:
        if not raised_in_packages(exc, TILELANG_PACKAGES):
            if not captured:
                raise
        else:
            # The frontend failed while building a kernel, before handing it to compile (an eager
            # `@tilelang.jit` builds its prim_func when called): the compiler's failure, judged where
            # the compile is, as a kernel whose build raises it.
            captured.append(fails_to_build(exc))
    finally:
        tilelang.compile, module.compile = originals
    if not captured:
        raise CaseError(f"{path.name} ran to its end without compiling a TileLang kernel")
    return captured_kernels()


# TileLang's own Python, the TVM it builds on and TVM's FFI (where C++ errors surface).
TILELANG_PACKAGES = ("tilelang", "tvm", "tvm_ffi")


def raised_in_packages(exc: BaseException, packages: tuple[str, ...]) -> bool:
    """Whether the compiler's own packages raised it (kregress.adapters.raised_within)."""
    import importlib.util

    from kregress.adapters import raised_within

    roots = []
    for name in packages:
        spec = importlib.util.find_spec(name) if name not in sys.modules else sys.modules[name].__spec__
        if spec is not None and spec.submodule_search_locations:
            roots += [Path(location).resolve() for location in spec.submodule_search_locations]
    return raised_within(exc, roots)
