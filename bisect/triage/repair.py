"""Pasted code repaired as a triager would, before anything judges it: each repair is said, so the
draft's ISSUE.md lists them beside the code as it was pasted.

What a paste loses on its way into an issue, and what is put back: a common indent (the whole block
indented in a list or a quote), a stray indent on one line, a Markdown backtick left in a line, a
last statement cut short (dropped, never completed; so is one the paste ends inside a name of, which
nothing binds), and the imports the code uses and lacks (the most common way a kernel is pasted).
An import of a package that is not installed here and whose names the code never uses (the
reporter's `icecream` or `einops`, left over) is dropped. Nothing else of the code changes: a
repair never adds a statement the reporter did not write, beyond imports and a `pass` where the
statement dropped was its block's only one.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import keyword
import re
import textwrap
from dataclasses import dataclass, field

from kregress.frameworks import FRAMEWORKS
from kregress.pasted import bound_names

# What a name the code uses and never binds is, as a reporter's imports had it.
IMPORTS = {
    "tl": "import triton.language as tl",
    "triton": "import triton",
    "torch": "import torch",
    "np": "import numpy as np",
    "numpy": "import numpy",
    "math": "import math",
    "T": "import tilelang.language as T",
    "tilelang": "import tilelang",
    "pytest": "import pytest",
    # libdevice moved between releases: where each has it
    "libdevice": "try:\n    from triton.language.extra import libdevice\nexcept ImportError:\n"
    "    from triton.language.extra.cuda import libdevice",
}
COMPILER_MODULES = {m.split(".")[0] for f in FRAMEWORKS.values() for m in (*f.modules, *f.imports)} | {
    "torch", "numpy", "tvm", "tvm_ffi",
}  # fmt: skip
# What makes a code block a kernel's even when it imports nothing.
KERNEL_MARKERS = re.compile(
    r"@triton\.(jit|autotune)|\btl\.\w+\(|@tilelang\.jit|\bT\.(Kernel|prim_func)\b|@T\.prim_func"
)
MAX_REPAIRS = 20


@dataclass
class Repaired:
    source: str
    repairs: list[str] = field(default_factory=list)

    @property
    def parses(self) -> bool:
        try:
            ast.parse(self.source)
        except SyntaxError:
            return False
        return True


def looks_like_kernel_code(block: str) -> bool:
    """A kernel's code pasted without imports: it writes or launches a kernel and is Python (whole,
    or after the repairs of its indent; a traceback quoting a kernel's line is not)."""
    if not KERNEL_MARKERS.search(block):
        return False
    repaired = repair_block(block)
    return repaired.parses and not any("cut short" in said for said in repaired.repairs)


def repair_block(block: str) -> Repaired:
    """One code block: its common indent, stray indents, stray backticks, a last statement cut short."""
    repairs: list[str] = []
    dedented = textwrap.dedent(block)  # also empties lines of spaces alone, which is no repair
    width = min((indent_of(line) for line in block.splitlines() if line.strip()), default=0)
    if width:
        repairs.append(f"removed a common indent of {width} columns")
    lines = dedented.rstrip().splitlines()
    for _ in range(MAX_REPAIRS):
        try:
            ast.parse("\n".join(lines))
            break
        except SyntaxError as exc:
            fixed = (
                stray_indent(lines, exc) or stray_backticks(lines, exc) or stray_prose(lines, exc)
                or cut_short(lines, exc)
            )  # fmt: skip
            if fixed is None:
                break
            lines, said = fixed
            repairs.append(said)
    return Repaired("\n".join(lines) + "\n", repairs)


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def stray_indent(lines: list[str], exc: SyntaxError) -> tuple[list[str], str] | None:
    """A line indented more (or less) than any block it could belong to: given column 0 after two blank
    lines (top-level statements are parted so), else the indent of the line after it, of the line
    before it (of the block that one opens, after a colon), whichever lets the code parse past it."""
    if not isinstance(exc, IndentationError) or not exc.lineno or exc.lineno > len(lines):
        return None
    index = exc.lineno - 1
    earlier = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), None)
    later = next((lines[i] for i in range(index + 1, len(lines)) if lines[i].strip()), None)
    opens = earlier is not None and earlier.rstrip().endswith(":")
    wanted = [indent_of(earlier) + 4] if opens and earlier is not None else []
    wanted += [indent_of(line) for line in (later, earlier) if line is not None] + [0]
    blank_before = next((n for n in range(index) if lines[index - 1 - n].strip()), index)
    if blank_before >= 2:  # two blank lines part top-level statements: it is one
        wanted.insert(0, 0)
    for width in dict.fromkeys(wanted):
        if width == indent_of(lines[index]):
            continue
        repaired = [*lines[:index], " " * width + lines[index].lstrip(), *lines[index + 1 :]]
        if parses_past(repaired, exc.lineno):
            return repaired, f"line {exc.lineno}: a stray indent set to its block's ({width} columns)"
    return None


def outside_strings(line: str, character: str) -> list[int]:
    """Where `character` stands in a line of code outside its string literals (one line's quotes)."""
    found, quote, n = [], "", 0
    while n < len(line):
        c = line[n]
        if quote:
            if c == "\\":
                n += 1
            elif line.startswith(quote, n):
                n += len(quote) - 1
                quote = ""
        elif c == "#":
            break
        elif c in "'\"":
            quote = c * 3 if line.startswith(c * 3, n) else c
            n += len(quote) - 1
        elif c == character:
            found.append(n)
        n += 1
    return found


def stray_backticks(lines: list[str], exc: SyntaxError) -> tuple[list[str], str] | None:
    """Backticks on the line that does not parse, outside its strings: Markdown's, never Python's
    (Python 3 has no backtick), left where a reporter marked code inside a fence. Removed where the
    code then parses past the line."""
    if not exc.lineno or exc.lineno > len(lines):
        return None
    index = exc.lineno - 1
    at = outside_strings(lines[index], "`")
    if not at:
        return None
    line = "".join(c for n, c in enumerate(lines[index]) if n not in at)
    repaired = [*lines[:index], line, *lines[index + 1 :]]
    if not parses_past(repaired, exc.lineno):
        return None
    return repaired, f"line {exc.lineno}: {len(at)} stray backtick(s) removed (Markdown's, not Python's)"


# A sentence: a capitalised word, then two or more words, maybe ending in ".", ":" or "?"
# ("Control case: replace the second loop with:"); never a line Python could start with
SENTENCE = re.compile(r"^[A-Z][a-z]+(?:[ ,;:]+[\w'`()./-]+){2,}[.:!?]?$")


def stray_prose(lines: list[str], exc: SyntaxError) -> tuple[list[str], str] | None:
    """A line of the reporter's prose inside the block (a fence never closed, or closed past the
    sentence that follows the code): the line that does not parse reads as a sentence and is no
    Python statement of its own. Dropped where the code then parses past it."""
    if not exc.lineno or exc.lineno > len(lines):
        return None
    index = exc.lineno - 1
    said = lines[index].strip()
    if not SENTENCE.match(said) or keyword.iskeyword(said.split()[0].rstrip(":")):
        return None
    try:
        ast.parse(said)
        return None  # a statement of its own
    except SyntaxError:
        pass
    repaired = [*lines[:index], *lines[index + 1 :]]
    if not parses_past(repaired, index):
        return None
    return repaired, f"line {exc.lineno}: the reporter's prose inside the code block ({said[:60]!r}), dropped"


def parses_past(lines: list[str], lineno: int) -> bool:
    """Whether the code parses, or fails only after line `lineno`."""
    try:
        ast.parse("\n".join(lines))
    except SyntaxError as exc:
        return (exc.lineno or 0) > lineno
    return True


def cut_short(lines: list[str], exc: SyntaxError) -> tuple[list[str], str] | None:
    """The paste ends inside its last statement (a call never closed, a string never ended): that
    statement is dropped, not completed, when everything before it parses."""
    for start in range(len(lines) - 1, 0, -1):
        if indent_of(lines[start]) or not lines[start].strip():
            continue  # a top-level statement starts at column 0
        if exc.lineno is not None and exc.lineno < start + 1:
            return None  # the error lies before this statement: not a cut at the end
        try:
            ast.parse("\n".join(lines[:start]))
        except SyntaxError:
            continue
        return lines[:start], (
            f"lines {start + 1}-{len(lines)}: the last statement was cut short in the paste "
            f"({exc.msg}); dropped, not completed"
        )
    return None


def names_read(tree: ast.AST) -> set[str]:
    """Every name the code reads (`ein` of `ein.rearrange` too)."""
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def missing_imports(source: str) -> list[str]:
    """The names of IMPORTS the code uses and never binds (bound as kregress.pasted reads a paste)."""
    tree = ast.parse(source)
    bound = bound_names(tree) | set(dir(builtins))
    used = names_read(tree)
    return [name for name in IMPORTS if name in used and name not in bound]


def installed(module: str) -> bool:
    """Importable here; a compiler's own module (or torch's, numpy's) counts as installed anywhere:
    a release's environment has it even where kregress's does not."""
    top = module.split(".")[0]
    if top in COMPILER_MODULES:
        return True
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def unused_missing_imports(source: str) -> tuple[str, list[str]]:
    """The code without the import statements whose every module is not installed here and whose
    every name the code never uses; and those modules. Used ones stay (locate then says which)."""
    tree = ast.parse(source)
    used = names_read(tree)
    lines, dropped = source.splitlines(keepends=True), []
    for node in sorted(
        (n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))),
        key=lambda n: n.lineno, reverse=True,
    ):  # fmt: skip
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        names = [(a.asname or a.name).split(".")[0] for a in node.names]
        if getattr(node, "level", 0) or any(installed(m) or not m for m in modules):
            continue
        if any(name in used or name == "*" for name in names):
            continue
        indent = " " * node.col_offset  # inside a block, a `pass` keeps it a block
        lines[node.lineno - 1 : node.end_lineno or node.lineno] = [f"{indent}pass\n"] if indent else []
        dropped[:0] = modules
    return "".join(lines), dropped


def module_level_names(tree: ast.Module) -> set[str]:
    """The names a block binds where top-level code can see them: not inside its functions."""
    bound: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(statement.name)
        else:
            bound |= bound_names(statement)
    return bound


def excerpt_of(index: int, trees: list[ast.Module | None]) -> tuple[int, list[str]] | None:
    """Whether block `index` is an excerpt of another block's function, shown to point at the bug
    (`for _ in tl.range(5, ub): ...` above the whole reproducer): statements only, no import, reading
    names that no block binds at its top level but a function of another block binds. Run as code,
    it fails on them: a triager reads it and runs the other block."""
    tree = trees[index]
    if tree is None or any(
        isinstance(s, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for s in tree.body
    ):
        return None
    others = [(i, t) for i, t in enumerate(trees) if i != index and t is not None]
    visible = set(dir(builtins)).union(*(module_level_names(t) for _, t in others), bound_names(tree))
    unbound = sorted(names_read(tree) - visible)
    for i, other in others:
        functions = (f for f in ast.walk(other) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)))
        inside = set().union(*(bound_names(f) for f in functions))
        if unbound and set(unbound) <= inside:
            return i, unbound
    return None


def without_excerpts(blocks: list[Repaired]) -> tuple[list[Repaired], list[str]]:
    """The blocks less those that are excerpts of another's function (excerpt_of), and what was said."""
    trees: list[ast.Module | None] = []
    for block in blocks:
        try:
            trees.append(ast.parse(block.source))
        except SyntaxError:
            trees.append(None)
    kept, said = [], []
    for index, block in enumerate(blocks):
        found = excerpt_of(index, trees) if len(blocks) > 1 else None
        if found is None:
            kept.append(block)
            continue
        whole, names = found
        said.append(
            f"block {index + 1}: an excerpt of block {whole + 1}'s kernel (it reads {', '.join(names)}, "
            f"which only a function of block {whole + 1} binds); left out, as a triager reads it"
        )
    return kept, said


def repair(blocks: list[str]) -> Repaired:
    """The code blocks, each repaired, less the excerpts of another's function, joined, with the
    imports they use and lack put first."""
    repaired = [repair_block(block) for block in blocks]
    repairs = [f"block {i + 1}: {said}" if len(blocks) > 1 else said
               for i, r in enumerate(repaired) for said in r.repairs]  # fmt: skip
    repaired, left_out = without_excerpts(repaired)
    repairs += left_out
    source = "\n\n".join(r.source for r in repaired)  # as extract always joined the blocks
    try:
        lacking = missing_imports(source)
    except SyntaxError:
        return Repaired(source, repairs)
    if lacking:
        prelude = "\n".join(IMPORTS[name] for name in lacking)
        source = f"{prelude}\n\n{source}"
        repairs.append(f"added the imports it uses and lacks: {', '.join(lacking)}")
    source, dropped = unused_missing_imports(source)
    if dropped:
        said = "not installed here, and the code uses none of their names"
        repairs.append(f"dropped the imports of {', '.join(dropped)}: {said}")
    source, cut = cut_inside_a_name(source)
    if cut:
        repairs.append(cut)
    return Repaired(source, repairs)


def last_statement(tree: ast.Module) -> tuple[ast.stmt, list[ast.stmt]] | None:
    """The statement the code ends with, however deep (a kernel's last line), and its block."""
    block: list[ast.stmt] = tree.body
    while block:
        last = block[-1]
        inner = [b for b in (getattr(last, f, None) for f in ("body", "orelse", "finalbody")) if b]
        if not inner:
            return last, block
        block = max(inner, key=lambda b: b[-1].end_lineno or 0)
    return None


def cut_inside_a_name(source: str) -> tuple[str, str | None]:
    """Where the code's text ends on a name nothing binds (`n = size_0 * size_1 * s`, `kernel =
    get_s`), the paste was cut inside that name: the statement is dropped (`pass` in its place where
    it was its block's only one), and said. The name read as written would be a NameError of the
    paste's, judged in the compiler's place."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source, None
    found = last_statement(tree)
    if found is None:
        return source, None
    last, block = found
    ends = re.search(r"(\w+)\s*\Z", source)
    read = {n.id for n in ast.walk(last) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if ends is None or ends.group(1) not in read:
        return source, None
    name = ends.group(1)
    if name in bound_names(tree) or hasattr(builtins, name):
        return source, None
    lines = source.splitlines()
    start, stop = last.lineno - 1, last.end_lineno or last.lineno
    kept = [" " * last.col_offset + "pass"] if len(block) == 1 else []
    said = (
        f"line {start + 1}: the paste ends inside a name (`{name}`, which nothing binds): its statement "
        "was cut short; dropped" + (", `pass` left in its place" if kept else "")
    )
    return "\n".join([*lines[:start], *kept, *lines[stop:]]).rstrip() + "\n", said
