"""What a triager completes in a paste that defines its kernel and never runs it: a `@triton.jit`
function whose launch was cut off (or never pasted) is compiled for the draft's targets with the
arguments its body implies; a TileLang kernel factory (a function returning the `@T.prim_func` it
holds) that is never called is called, and what it returns compiled, as TileLang's own tests do.
Before either, a function the paste defines to run its kernel and never calls (`def test_dot():`
left for pytest, `def main():` without its call) is called, as a triager runs it.

Read from the code's syntax alone, in the importer, so that each completion is said in ISSUE.md
before anything runs; the child (kregress.pasted) carries it out only where the code runs to its
end without launching or compiling a kernel. A value the code does not give (a constexpr without a
default, a factory's size) is never guessed: it is named as missing, and the draft's kernel is then
an ERROR of the draft saying so. The one value a body implies is a block's size (a constexpr
that sizes blocks, `tl.arange(0, BLOCK)`, `tl.zeros([M, K])`, `block_shape=`, and steers nothing),
which any power of two is: such a constexpr is given BLOCK_SIZE_IMPLIED, and said so; so is a
TileLang factory's parameter that only sizes its buffers (`T.Tensor((M, K), dtype)`), given
TILE_SIZE_IMPLIED. A dtype, a thread count or anything compared is never implied.
"""

from __future__ import annotations

import ast
import builtins
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kregress.pasted import SCALAR, bound_names, decorator_targets

# Calls whose first argument (or `pointer=` / `base=`) is a pointer expression.
POINTER_CALLS = {
    "load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
    "atomic_xchg", "atomic_cas", "make_block_ptr", "make_tensor_descriptor",
}  # fmt: skip
POINTER_KEYWORDS = {"pointer", "base", "ptr"}


@dataclass(frozen=True)
class Completion:
    framework: str  # "triton" or "tilelang"
    function: str  # the kernel (Triton) or the factory / prim_func (TileLang) completed
    values: dict[str, Any] = field(default_factory=dict)  # constexprs / factory parameters, as given
    pointers: dict[str, str] = field(default_factory=dict)  # Triton: pointer parameters -> torch dtype
    scalars: tuple[str, ...] = ()  # Triton: other runtime parameters (SCALAR)
    missing: tuple[str, ...] = ()  # parameters the code gives no value for
    call: bool = True  # TileLang: a factory to call (False: a prim_func to compile as it is)
    unread: tuple[str, ...] = ()  # TileLang: factory parameters its code never reads, given None
    entry: str | None = None  # a function that runs the kernel, never called: called first
    implied: tuple[str, ...] = ()  # sizes the code gives no value for: BLOCK_SIZE_IMPLIED / TILE_SIZE_IMPLIED
    defaulted: tuple[str, ...] = ()  # parameters left at a default that is no literal (`T.float16`)
    typed: tuple[str, ...] = ()  # TileLang: buffer dtypes given none, given the one the code names most

    def as_data(self) -> dict[str, Any]:
        return {"framework": self.framework, "function": self.function, "values": self.values,
                "pointers": self.pointers, "scalars": list(self.scalars),
                "missing": list(self.missing), "call": self.call, "unread": list(self.unread),
                "entry": self.entry}  # fmt: skip

    def said(self) -> str:
        """The completion in one sentence, for ISSUE.md and the import's log."""
        kernel = self.kernel_said()
        if self.entry is None:
            return kernel
        first = f"`{self.entry}()`, defined to run the kernel and never called, is called first"
        return f"{first}; if it runs none, {kernel}"

    def kernel_said(self) -> str:
        given = ", ".join(
            f"{k}={v!r}" for k, v in self.values.items() if k not in self.implied and k not in self.typed
        )
        lacking = (
            f"; no value for {', '.join(self.missing)} (the draft's kernel is an ERROR saying so)"
            if self.missing
            else ""
        )
        if self.defaulted:
            lacking = f"; {', '.join(self.defaulted)} left at the defaults the code gives{lacking}"
        if self.framework == "triton":
            by_dtype: dict[str, list[str]] = {}
            for name, dtype in self.pointers.items():
                by_dtype.setdefault(dtype, []).append(name)
            parts = [
                *(f"{', '.join(names)} as {dtype} pointers" for dtype, names in by_dtype.items()),
                f"{', '.join(self.scalars)} as {SCALAR}" if self.scalars else "",
                given,
            ]
            if self.implied:
                parts.append(f"{', '.join(self.implied)} as {BLOCK_SIZE_IMPLIED} (blocks' sizes in its body, "
                             "which any power of two is; the paste gives none)")  # fmt: skip
            with_what = "; ".join(p for p in parts if p) or "no arguments"
            return f"`{self.function}`, compiled for each target with {with_what}{lacking}"
        if not self.call:
            return f"`{self.function}` is a @T.prim_func: compiled as it is"
        unread = (
            f" ({', '.join(self.unread)} given None: the factory never reads them)" if self.unread else ""
        )
        sizes = [f"{name}={TILE_SIZE_IMPLIED}" for name in self.implied]
        given = ", ".join([*(f"{name}=None" for name in self.unread), *([given] if given else []), *sizes])
        why = (
            f" ({', '.join(self.implied)} as {TILE_SIZE_IMPLIED}: sizes of its buffers, grid or loops, which "
            "the paste gives no value for)"
            if self.implied
            else ""
        )
        if self.typed:
            typed = [f"{name}={self.values[name]!r}" for name in self.typed]
            given = ", ".join([given, *typed] if given else typed)
            why += (f" ({', '.join(self.typed)}: dtypes of its buffers, which the paste gives no value for: "
                    "the dtype its code names most, float32 for an accumulator)")  # fmt: skip
        return (
            f"`{self.function}` is a kernel factory: called with "
            f"{given or 'no arguments'}{unread}{why} and what it returns compiled{lacking}"
        )


def decorator_names(node: ast.FunctionDef) -> list[str]:
    """The last name of each decorator (`triton.jit` -> jit, `@T.prim_func` -> prim_func)."""
    names = []
    for target in decorator_targets(node):
        if isinstance(target, ast.Attribute):
            names.append(target.attr)
        elif isinstance(target, ast.Name):
            names.append(target.id)
    return names


def literal(node: ast.AST | None) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def main_block(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":`, whose body is the script's own top level."""
    return isinstance(node, ast.If) and ast.unparse(node.test).replace("'", '"') == '__name__ == "__main__"'


def module_statements(tree: ast.Module) -> list[ast.stmt]:
    """The statements a script runs at its top level: the module's, and its main block's."""
    return [s for node in tree.body for s in (node.body if main_block(node) else [node])]


def bound_literals(statements: list[ast.stmt], known: dict[str, Any] | None = None) -> dict[str, Any]:
    """Names the statements bind to a literal (`BLOCK = 128`, `dtype = "float16"`, `M, N = 64, 32`), or
    to a name already bound so (`n = BLOCK`)."""
    constants: dict[str, Any] = dict(known or {})
    for node in statements:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        pairs = (
            list(zip(target.elts, value.elts, strict=True))
            if isinstance(target, ast.Tuple)
            and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts)
            else [(target, value)]
        )
        for name, expression in pairs:
            if not isinstance(name, ast.Name):
                continue
            ok, found = bound_value(expression, constants)
            if ok:
                constants[name.id] = found
    return constants


def bound_value(expression: ast.expr, constants: dict[str, Any]) -> tuple[bool, Any]:
    """A literal's value, or the value of a name bound to one."""
    ok, found = literal(expression)
    if not ok and isinstance(expression, ast.Name) and expression.id in constants:
        return True, constants[expression.id]
    return ok, found


def module_constants(tree: ast.Module) -> dict[str, Any]:
    """Names the script binds to a literal at its top level or in its main block."""
    return bound_literals(module_statements(tree))


def walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """`ast.walk` that stays in one scope: a function defined in it has its own names."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        return
    yield node
    for child in ast.iter_child_nodes(node):
        yield from walk_scope(child)


def launch_arguments(tree: ast.Module, kernel: ast.FunctionDef) -> dict[str, tuple[ast.expr, dict[str, Any]]]:
    """What the paste's launches of the kernel (`kernel[grid](x, N=N)`) pass for each parameter, the
    first launch's first, with the literals bound where that launch is."""
    parameters = [a.arg for a in kernel.args.args]
    module = module_constants(tree)
    scopes = [(module_statements(tree), module)] + [
        (node.body, bound_literals(node.body, module))
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node is not kernel
    ]
    passed: dict[str, tuple[ast.expr, dict[str, Any]]] = {}
    for statements, constants in scopes:
        for call in (c for statement in statements for c in walk_scope(statement)):
            launched = (
                call.func.value
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Subscript)
                else None
            )
            if isinstance(launched, ast.Name) and launched.id == kernel.name:
                given = [
                    *zip(parameters, call.args, strict=False),
                    *((k.arg, k.value) for k in call.keywords),
                ]
                for name, expression in given:
                    if name in parameters:
                        passed.setdefault(name, (expression, constants))
    return passed


def launch_values(passed: dict[str, tuple[ast.expr, dict[str, Any]]]) -> dict[str, Any]:
    """The values the reporter launched the kernel with (`launch_arguments`), where each is a literal
    or a name bound to one (the launch itself may not run here: its tensors are on a GPU)."""
    values: dict[str, Any] = {}
    for name, (expression, constants) in passed.items():
        ok, found = bound_value(expression, constants)
        if ok:
            values[name] = found
    return values


def launched_tensors(passed: dict[str, tuple[ast.expr, dict[str, Any]]]) -> dict[str, str]:
    """Each parameter the launch passes a name for (`x_ptr=x`): that name."""
    return {
        name: expression.id for name, (expression, _) in passed.items() if isinstance(expression, ast.Name)
    }


def asserted_values(node: ast.FunctionDef) -> dict[str, Any]:
    """Parameters the function's own statements pin: `assert nstr == 4` (either side)."""
    found: dict[str, Any] = {}
    for statement in node.body:
        test = statement.test if isinstance(statement, ast.Assert) else None
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
            continue
        for name_side, value_side in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
            ok, value = literal(value_side)
            if isinstance(name_side, ast.Name) and ok:
                found[name_side.id] = value
    return found


def unread_parameters(node: ast.FunctionDef) -> list[str]:
    """A factory's parameters its code never reads: a @T.prim_func inside that takes parameters of
    the same names reads its own (what a parameter annotation reads is still the factory's)."""
    read: set[str] = set()

    def visit(tree: ast.AST, shadowed: frozenset[str]) -> None:
        if isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = (*tree.args.posonlyargs, *tree.args.args, *tree.args.kwonlyargs)
            outer = [*tree.decorator_list, *tree.args.defaults, *tree.args.kw_defaults]
            for part in [*outer, *(a.annotation for a in arguments)]:
                if part is not None:
                    visit(part, shadowed)
            for statement in tree.body:
                visit(statement, shadowed | {a.arg for a in arguments})
            return
        if isinstance(tree, ast.Name) and isinstance(tree.ctx, ast.Load) and tree.id not in shadowed:
            read.add(tree.id)
        for child in ast.iter_child_nodes(tree):
            visit(child, shadowed)

    for statement in node.body:
        visit(statement, frozenset())
    return [a.arg for a in node.args.args if a.arg not in read]


def parameter_values(
    node: ast.FunctionDef,
    wanted: list[str],
    constants: dict[str, Any],
    configs: dict[str, Any],
    launched: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Each wanted parameter's value: what the paste launches it with, else its default, else an
    autotune config's, else what the function asserts it is, else a module constant of its name;
    the rest are missing. A default that is no literal (`dtype=T.float16`) is the function's own
    to evaluate: such a parameter is left out of the call (`defaulted_parameters`), never missing."""
    defaults = parameter_defaults(node)
    asserted = asserted_values(node)
    launched = launched or {}
    values, missing = {}, []
    for name in wanted:
        ok, value = literal(defaults.get(name)) if name in defaults else (False, None)
        if name in launched:
            values[name] = launched[name]
        elif ok:
            values[name] = value
        elif name in configs:
            values[name] = configs[name]
        elif name in defaults:
            continue  # left at its default, which the call evaluates
        elif name in asserted:
            values[name] = asserted[name]
        elif name in constants:
            values[name] = constants[name]
        else:
            missing.append(name)
    return values, missing


def parameter_defaults(node: ast.FunctionDef) -> dict[str, ast.expr]:
    args = [a.arg for a in node.args.args]
    return dict(zip(args[len(args) - len(node.args.defaults) :], node.args.defaults, strict=True))


def defaulted_parameters(node: ast.FunctionDef, wanted: list[str], values: dict[str, Any]) -> tuple[str, ...]:
    """The wanted parameters left at a default that is no literal (`dtype=T.float16`): said, not given."""
    defaults = parameter_defaults(node)
    return tuple(n for n in wanted if n in defaults and n not in values and not literal(defaults[n])[0])


def first_autotune_config(node: ast.FunctionDef) -> dict[str, Any]:
    """The keyword values of `@triton.autotune(configs=[triton.Config({...}), ...])`'s first config."""
    for decorator in node.decorator_list:
        if not (
            isinstance(decorator, ast.Call) and decorator_names(node) and "autotune" in ast.dump(decorator)
        ):
            continue
        for keyword in decorator.keywords:
            if keyword.arg == "configs" and isinstance(keyword.value, ast.List) and keyword.value.elts:
                first = keyword.value.elts[0]
                if isinstance(first, ast.Call) and first.args:
                    ok, value = literal(first.args[0])
                    if ok and isinstance(value, dict):
                        return value
    return {}


def called_names(tree: ast.AST) -> set[str]:
    """Names called (`f(...)`), launched (`f[grid](...)`), or run ahead of time (`f.warmup`)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Subscript):
            func = func.value
        if (
            isinstance(func, ast.Attribute)
            and func.attr in ("run", "warmup")
            and isinstance(func.value, ast.Name)
        ):
            found.add(func.value.id)
        if isinstance(func, ast.Name):
            found.add(func.id)
    return found


def compiles_ahead_of_time(tree: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute | ast.Name)
        and (n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id) in ("compile", "ASTSource")
        for n in ast.walk(tree)
    )  # fmt: skip


def pointer_parameters(node: ast.FunctionDef) -> set[str]:
    """Parameters the body uses inside the pointer argument of a load, store, atomic or block
    pointer (or named like one: `x_ptr`)."""
    used: set[str] = set()
    for call in ast.walk(node):
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute | ast.Name):
            continue
        name = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id
        if name not in POINTER_CALLS:
            continue
        pointed = [*call.args[:1], *(k.value for k in call.keywords if k.arg in POINTER_KEYWORDS)]
        used |= {n.id for expr in pointed for n in ast.walk(expr) if isinstance(n, ast.Name)}
    return used | {a.arg for a in node.args.args if a.arg.endswith("ptr")}


TORCH_DTYPES = {
    "float32", "float16", "bfloat16", "float64", "float8_e4m3fn", "float8_e5m2", "int8", "int16",
    "int32", "int64", "uint8", "bool", "half", "float", "double",
}  # fmt: skip


def torch_dtype(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and node.attr in TORCH_DTYPES and ast.unparse(node.value) == "torch":
        return node.attr
    return None


def pointer_dtypes(
    tree: ast.Module, pointers: list[str], passed: dict[str, str] | None = None
) -> dict[str, str]:
    """Each pointer's element type as the paste implies it: the dtype of the script's tensor the
    launch passes for it, or of the same name (`src = torch.randn(..., dtype=torch.bfloat16)`), else
    the one torch dtype the paste names, else float32."""
    own: dict[str, str] = {}
    for node in module_statements(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            named = [d for n in ast.walk(node.value) if (d := torch_dtype(n))]
            if named:
                own[node.targets[0].id] = named[0]
    anywhere = {d for n in ast.walk(tree) if (d := torch_dtype(n))}
    only = anywhere.pop() if len(anywhere) == 1 else "float32"
    passed = passed or {}
    return {name: own.get(passed.get(name, name), own.get(name, only)) for name in pointers}


def entry_function(tree: ast.Module, kernels: set[str]) -> str | None:
    """A top-level function that runs a kernel of the paste (launches or calls it, or calls a
    function that does), needs no argument, and that nothing in the paste calls or names, where the
    paste's own top-level code runs no kernel: the reporter's `def test_dot():` left for pytest, or a
    `main` whose call was cut off. The first such, in the paste's order."""
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name not in kernels}
    named = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    running = set(kernels)  # what runs a kernel: the kernels, then each function calling one of them
    grew = True
    while grew:
        grew = False
        for name, node in functions.items():
            if name not in running and called_names(node) & running:
                running.add(name)
                grew = True
    top_level = [
        n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    if any(called_names(statement) & running for statement in top_level):
        return None  # the code runs a kernel itself: nothing to complete

    def needs_no_argument(node: ast.FunctionDef) -> bool:
        arguments = node.args
        return (
            not arguments.posonlyargs
            and len(arguments.defaults) == len(arguments.args)
            and all(default is not None for default in arguments.kw_defaults)
        )

    return next(
        (
            name
            for name, node in functions.items()
            if name in running and name not in named and not decorator_names(node) and needs_no_argument(node)
        ),
        None,
    )


def triton_completion(tree: ast.Module) -> Completion | None:
    kernels = [n for n in tree.body if isinstance(n, ast.FunctionDef) and "jit" in decorator_names(n)]
    if not kernels or compiles_ahead_of_time(tree):
        return None
    # a helper is called by another kernel, or handed to one (`combine_fn=op` of a scan or a reduce):
    # compiled alone it is no kernel of the paste's
    names = {k.name for k in kernels}
    helpers = {
        n.id for k in kernels for n in ast.walk(k)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in names and n.id != k.name
    }  # fmt: skip
    entry = next((k for k in kernels if k.name not in helpers), kernels[0])
    constexprs = [
        a.arg
        for a in entry.args.args
        if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)
    ]
    runtime = [a.arg for a in entry.args.args if a.arg not in constexprs]
    pointers = pointer_parameters(entry)
    constants = module_constants(tree)
    passed = launch_arguments(tree, entry)  # read once: its values and the tensors it names
    launched = launch_values(passed)
    values, missing = parameter_values(entry, constexprs, constants, first_autotune_config(entry), launched)
    defaulted = defaulted_parameters(entry, constexprs, values)
    implied, missing = implied_sizes(missing, block_sizes(entry))
    values |= dict.fromkeys(implied, BLOCK_SIZE_IMPLIED)
    scalars = [p for p in runtime if p not in pointers]
    known = {**constants, **launched}
    given = {p: known[p] for p in scalars if isinstance(known.get(p), int | float)}
    return Completion(
        "triton", entry.name, {**values, **given},
        pointers=pointer_dtypes(tree, [p for p in runtime if p in pointers], launched_tensors(passed)),
        scalars=tuple(p for p in scalars if p not in given),
        missing=tuple(missing), entry=entry_function(tree, {k.name for k in kernels}), implied=implied,
        defaulted=defaulted,
    )  # fmt: skip


BLOCK_SIZE_IMPLIED = 16  # a power of two, and the least that every `tl.dot` operand dimension allows
# Calls whose shape argument sizes a block: the first argument (a list or tuple of sizes), or `shape=`
SHAPE_CALLS = {"zeros", "full", "empty", "reshape", "view", "broadcast_to", "zeros_like"}


def block_sizes(node: ast.FunctionDef) -> set[str]:
    """The names a kernel sizes its blocks with: `tl.arange`'s end, a shape given to `tl.zeros`,
    `tl.full` or `tl.reshape`, a block pointer's or descriptor's `block_shape`. A name the kernel
    also compares is left out: its value steers the code, not only its blocks' sizes."""
    sizing: list[ast.AST] = []
    for call in ast.walk(node):
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute | ast.Name):
            continue
        name = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id
        shape = call.args[-1 if name == "reshape" else 0] if call.args else None
        if name == "arange" and len(call.args) == 2:
            sizing.append(call.args[1])
        elif name in SHAPE_CALLS and isinstance(shape, ast.List | ast.Tuple):
            sizing.append(shape)
        sizing += [k.value for k in call.keywords if k.arg in ("shape", "block_shape")]
    return {n.id for expr in sizing for n in ast.walk(expr) if isinstance(n, ast.Name)} - compared_names(node)


def compared_names(node: ast.AST) -> set[str]:
    """The names the code compares or tests for truth (`if flag:`, `a if flag else b`): their values
    steer it, so none is a size alone."""
    tests = [c for c in ast.walk(node) if isinstance(c, ast.Compare)]
    tests += [c.test for c in ast.walk(node) if isinstance(c, ast.If | ast.IfExp | ast.While | ast.Assert)]
    return {n.id for t in tests for n in ast.walk(t) if isinstance(n, ast.Name)}


def implied_sizes(missing: list[str], sizes: set[str]) -> tuple[tuple[str, ...], list[str]]:
    """The missing parameters that are sizes alone (given a size), and those still missing."""
    return tuple(n for n in missing if n in sizes), [n for n in missing if n not in sizes]


TILE_SIZE_IMPLIED = 64  # a tile's size every TileLang GEMM and copy takes, whose shared buffers fit any GPU
# TileLang's buffers, whose first argument (or `shape=`, or `T.Tensor[shape, dtype]`) is a shape
BUFFER_CALLS = {"Tensor", "Buffer", "alloc_shared", "alloc_fragment", "alloc_local", "alloc_buffer"}
# Calls whose positional arguments are extents: a grid's (`T.Kernel(T.ceildiv(M, block_M), ...)`,
# its `threads=` a keyword, never a size) or a loop's (`T.Parallel(block_M, block_N)`)
EXTENT_CALLS = {"Kernel", "ceildiv", "Parallel", "serial", "Pipelined", "grid", "unroll", "range"}


def call_name(node: ast.AST) -> str | None:
    """The last name of what a call or a subscript applies (`T.alloc_shared` -> alloc_shared)."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def tile_sizes(node: ast.FunctionDef) -> set[str]:
    """The names a TileLang factory sizes its buffers with (`T.Tensor((M, K), dtype)`,
    `T.alloc_shared((block_M, block_K), dtype)`), its grid and loops with (`T.ceildiv(M, block_M)`,
    `T.Parallel(block_M)`), or a tile's offset with (`A[bx * block_M : (bx + 1) * block_M]`), never
    compared nor handed on as a keyword (`num_stages=`): a value it steers nothing by."""
    shapes: list[ast.AST] = []
    elsewhere: set[str] = set()  # names given as a keyword's value (threads=, num_stages=, dtype=)
    for part in ast.walk(node):
        if isinstance(part, ast.Call):
            name = call_name(part.func)
            if name in BUFFER_CALLS:
                shapes += [*part.args[:1], *(k.value for k in part.keywords if k.arg == "shape")]
            elif name in EXTENT_CALLS:
                shapes.append(ast.Tuple(elts=list(part.args)))
            elsewhere |= {n.id for k in part.keywords if k.arg != "shape" for n in ast.walk(k.value)
                          if isinstance(n, ast.Name)}  # fmt: skip
        elif isinstance(part, ast.Subscript):
            typed = isinstance(part.slice, ast.Tuple) and part.slice.elts  # T.Tensor[(M, K), dtype]
            if call_name(part.value) in BUFFER_CALLS and typed:
                shapes.append(part.slice.elts[0])  # type: ignore[union-attr]
            slices = [s for s in ast.walk(part.slice) if isinstance(s, ast.Slice)]
            offsets = [b for s in slices for m in ast.walk(s) if isinstance(m, ast.BinOp)
                       and isinstance(m.op, ast.Mult) for b in (m.left, m.right)]  # fmt: skip
            shapes.append(ast.Tuple(elts=offsets))
    sized = {n.id for shape in shapes if isinstance(shape, ast.Tuple | ast.List)
             for n in ast.walk(shape) if isinstance(n, ast.Name)}  # fmt: skip
    return sizes_through_assignments(node, sized) - compared_names(node) - elsewhere


def sizes_through_assignments(node: ast.FunctionDef, sized: set[str]) -> set[str]:
    """`sized` and the names a size is computed from in the factory's own body (`aligned = (n + 31)
    // 32 * 32`, then `T.alloc_fragment((aligned,), ...)`: `n` sizes the buffer as much), read
    through arithmetic alone: a condition choosing between sizes, or what a call takes that is no
    size function (`T.DataType(dtype).bits`), steers the size rather than being one."""
    assigned = [(t.id, a.value) for a in walk_scope_of(node) if isinstance(a, ast.Assign)
                for t in a.targets if isinstance(t, ast.Name)]  # fmt: skip
    grown = set(sized)
    while True:
        more = {n for name, value in assigned if name in grown for n in arithmetic_names(value)} - grown
        if not more:
            return grown
        grown |= more


SIZE_FUNCTIONS = {"ceildiv", "cdiv", "max", "min", "int", "abs"}  # whose arguments are sizes as well


def arithmetic_names(expression: ast.expr) -> set[str]:
    """The names an expression computes its value from by arithmetic (`+ - * // %`, a size
    function's arguments, either branch of a conditional), never a condition's or a call's other."""
    if isinstance(expression, ast.Name):
        return {expression.id}
    if isinstance(expression, ast.BinOp):
        return arithmetic_names(expression.left) | arithmetic_names(expression.right)
    if isinstance(expression, ast.UnaryOp):
        return arithmetic_names(expression.operand)
    if isinstance(expression, ast.IfExp):
        return arithmetic_names(expression.body) | arithmetic_names(expression.orelse)
    if isinstance(expression, ast.Call) and call_name(expression.func) in SIZE_FUNCTIONS:
        return {n for a in expression.args for n in arithmetic_names(a)}
    return set()


# A dtype as TileLang takes it, from how a paste spells one (`"float16"`, `T.bfloat16`, `torch.half`)
DTYPE_SPELLINGS = {
    **{name: name for name in ("float16", "bfloat16", "float32", "float64", "float8_e4m3", "float8_e5m2",
                               "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")},
    "float": "float32", "half": "float16", "double": "float64", "float8_e4m3fn": "float8_e4m3",
}  # fmt: skip


def dtype_spelled(node: ast.AST) -> str | None:
    """The dtype a literal or an attribute of `T`, `tl`/`tilelang.language` or `torch` spells."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return DTYPE_SPELLINGS.get(node.value)
    if isinstance(node, ast.Attribute) and ast.unparse(node.value) in (
        "T",
        "tl",
        "torch",
        "tilelang.language",
    ):
        return DTYPE_SPELLINGS.get(node.attr)
    return None


def dtype_named_most(tree: ast.Module) -> str | None:
    """The dtype the paste's code names most (the first named, between equals), None where it names none."""
    spelled = [(n.lineno, n.col_offset, d) for n in ast.walk(tree) if (d := dtype_spelled(n))]
    named = Counter(d for *_, d in sorted(spelled))  # in the order the code reads: ties go to the first
    return named.most_common(1)[0][0] if named else None


def buffer_dtypes(node: ast.FunctionDef) -> set[str]:
    """The names a TileLang factory types its buffers with (`T.Tensor((M, K), dtype)`,
    `T.alloc_fragment(shape, accum_dtype)`, `T.Tensor[(M,), dtype]`, `T.alloc_var(dtype)`), never
    compared: what a triager gives the dtype the issue is about."""
    typed: list[ast.AST] = []
    for part in ast.walk(node):
        if isinstance(part, ast.Call):
            name = call_name(part.func)
            if name in BUFFER_CALLS:
                typed += [*part.args[1:2], *(k.value for k in part.keywords if k.arg == "dtype")]
            elif name == "alloc_var":
                typed += [*part.args[:1], *(k.value for k in part.keywords if k.arg == "dtype")]
        elif (
            isinstance(part, ast.Subscript)
            and call_name(part.value) in BUFFER_CALLS
            and isinstance(part.slice, ast.Tuple)
            and len(part.slice.elts) > 1
        ):
            typed.append(part.slice.elts[1])
    return {n.id for n in typed if isinstance(n, ast.Name)} - compared_names(node)


def tilelang_completion(tree: ast.Module) -> Completion | None:
    """The kernel to compile: a top-level @T.prim_func, or a factory (a function holding one, or
    decorated @tilelang.jit), one no other function of the paste uses first."""
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]

    def kernel_like(node: ast.FunctionDef) -> bool:
        holds = any(
            isinstance(i, ast.FunctionDef) and "prim_func" in decorator_names(i) for i in ast.walk(node)
        )
        return holds or bool({"prim_func", "jit"} & set(decorator_names(node)))

    kernels = [f for f in functions if kernel_like(f)]
    if not kernels:
        return None
    used = {n.id for f in functions for n in ast.walk(f) if isinstance(n, ast.Name) and n.id != f.name}
    node = next((k for k in kernels if k.name not in used), kernels[0])
    entry = entry_function(tree, {k.name for k in kernels})
    if "prim_func" in decorator_names(node):
        return Completion("tilelang", node.name, call=False, entry=entry)
    unread = unread_parameters(node)  # any value does: None, said
    names = [a.arg for a in node.args.args if a.arg not in unread]
    values, missing = parameter_values(node, names, module_constants(tree), {})
    defaulted = defaulted_parameters(node, names, values)
    dtypes = buffer_dtypes(node)
    implied, missing = implied_sizes(missing, tile_sizes(node) - dtypes)
    values |= dict.fromkeys(implied, TILE_SIZE_IMPLIED)
    named = dtype_named_most(tree)
    typed = tuple(n for n in missing if n in dtypes) if named else ()
    # an accumulator's dtype is float32 whatever its operands' (TileLang's GEMMs accumulate so)
    values |= {n: "float32" if "accum" in n else named for n in typed}
    missing = [n for n in missing if n not in typed]
    return Completion(
        "tilelang", node.name, values, missing=tuple(missing), unread=tuple(unread), entry=entry,
        implied=implied, defaulted=defaulted, typed=typed,
    )  # fmt: skip


def factories_without_return(code: str) -> list[str]:
    """The TileLang kernel factories the code defines (a function holding a @T.prim_func) whose
    prim_func nothing after it uses: not returned, yielded, compiled or passed on. A paste cut
    inside its kernel, at a statement's end, still parses, and such a factory then hands None to
    the framework, whose refusal ("target function must be a PrimFunc") is the paste's loss, never
    the compiler's bug. A function that compiles its prim_func itself, or returns it, is whole."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    cut = []
    # the last definition of each name is the one that runs (a whole kernel pasted again below)
    defined = {n.name: n for n in module_statements(tree) if isinstance(n, ast.FunctionDef)}
    for node in defined.values():
        if "prim_func" in decorator_names(node):
            continue
        kernels = [n for n in walk_scope_of(node) if isinstance(n, ast.FunctionDef)]
        kernels = [k for k in kernels if "prim_func" in decorator_names(k)]
        if not kernels:
            continue
        read = {n.id for n in walk_scope_of(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        gives = any(isinstance(n, ast.Return | ast.Yield | ast.YieldFrom) and n.value is not None
                    for n in walk_scope_of(node))  # fmt: skip
        if not gives and not any(k.name in read for k in kernels):
            cut.append(node.name)
    return cut


def with_cut_factory_returned(code: str) -> tuple[str, str] | None:
    """Where the paste ends inside a TileLang kernel factory that returns nothing (its text cut after
    the kernel's last whole statement, its `return main` lost with the rest), the code with the
    factory returning the one @T.prim_func it holds, as a triager finishes it, and what was added;
    None where no such factory ends the code (one that does not end it is the code's own)."""
    cut = factories_without_return(code)
    tree = ast.parse(code) if cut else None
    if tree is None or not tree.body or not isinstance(last := tree.body[-1], ast.FunctionDef):
        return None
    kernels = [
        n for n in walk_scope_of(last) if isinstance(n, ast.FunctionDef) and "prim_func" in decorator_names(n)
    ]
    if last.name not in cut or len(kernels) != 1:
        return None
    indent = " " * last.body[0].col_offset
    added = f"{indent}return {kernels[0].name}"
    return code.rstrip() + "\n" + added + "\n", (
        f"the paste ends inside the kernel factory `{last.name}` (cut after its kernel's last whole "
        f"statement): `{added.strip()}` added, and what is left of the kernel judged"
    )


def with_free_sizes_bound(code: str) -> tuple[str, str] | None:
    """A @T.prim_func pasted without the factory that sized it (`T.Tensor[(m,), "int32"]`, `m`
    bound nowhere): each name nothing binds that only sizes its buffers, grid or loops is bound to
    TILE_SIZE_IMPLIED before it, as the factory would have, and what was bound said. None where the
    code binds every name its kernels read, or one it lacks is no size alone (then the paste's own
    NameError is the draft's)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    bound = bound_names(tree)
    kernels = [n for n in tree.body if isinstance(n, ast.FunctionDef) and "prim_func" in decorator_names(n)]
    inserts: list[tuple[int, list[str]]] = []
    for kernel in kernels:
        read = [n.id for n in ast.walk(kernel) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        free = list(dict.fromkeys(n for n in read if n not in bound and not hasattr(builtins, n)))
        if not free or any(n not in tile_sizes(kernel) for n in free):
            continue
        first = min([kernel.lineno, *(d.lineno for d in kernel.decorator_list)])
        inserts.append((first, free))
        bound |= set(free)
    if not inserts:
        return None
    lines = code.splitlines()
    for first, free in sorted(inserts, reverse=True):
        lines[first - 1 : first - 1] = [f"{name} = {TILE_SIZE_IMPLIED}" for name in free] + [""]
    named = sorted({name for _, free in inserts for name in free})
    size = "sizes" if len(named) == 1 else "size"
    return "\n".join(lines) + "\n", (
        f"{', '.join(named)}, which the paste never binds, only {size} its kernel's buffers, grid or "
        f"loops (its factory left out): bound to {TILE_SIZE_IMPLIED} before the kernel"
    )


def walk_scope_of(function: ast.FunctionDef) -> Iterator[ast.AST]:
    """The nodes of a function's own body, and the functions it defines (not their bodies)."""
    for statement in function.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            yield statement
        else:
            yield from walk_scope(statement)


def completion_for(code: str, framework: str) -> Completion | None:
    """The completion for code that runs to its end without its kernel (None: nothing to complete:
    no kernel defined, or an ahead-of-time compile that is captured as it is)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    if framework == "triton":
        return triton_completion(tree)
    if framework == "tilelang":
        return tilelang_completion(tree)
    return None
