"""The candidate edits of a repro, smallest-first by nothing but order: pure, no compiler here.

A repro is shrunk one edit at a time, each edit a fresh parse of the current text changed at one
place and printed again (`ast.unparse`: comments and layout go, which a reduced case does not
need). The edits are listed in a fixed order, big chunks first (delta debugging: half of a block,
then quarters, ... then single statements), then the local simplifications: an expression
replaced by one of its operands, a keyword argument dropped, a power-of-two constant halved,
num_stages lowered, a loop run once, an `if` replaced by one branch, a kernel parameter dropped
with the arguments that feed it. Every edit makes the text strictly smaller by `size` (tokens, then
the sum of integer constants), so a reduction always ends.
"""

from __future__ import annotations

import ast
import copy
import io
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass

BODIES = ("body", "orelse", "finalbody")
LAYOUT_TOKENS = (
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.COMMENT,
    tokenize.ENDMARKER,
)
LOWERED_KEYWORDS = ("num_stages", "num_warps", "num_ctas", "maxnreg")  # lowered by one as well


@dataclass(frozen=True)
class Edit:
    """One change at one place: `describe` says it in a report line, `apply` makes the new text."""

    describe: str
    change: Callable[[ast.Module], bool]  # mutates a fresh parse; False when it does not apply

    def apply(self, source: str) -> str | None:
        tree = ast.parse(source)
        if not self.change(tree):
            return None
        try:
            text = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
            compile(text, "<candidate>", "exec")
        except (SyntaxError, ValueError):
            return None
        return text


Replacement = Callable[[ast.AST], "ast.AST | list[ast.stmt] | None"]


def size(source: str) -> tuple[int, int]:
    """(tokens, sum of integer constants): what every accepted edit makes smaller."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    counted = sum(1 for token in tokens if token.type not in LAYOUT_TOKENS)
    constants = sum(
        abs(node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and type(node.value) is int
    )
    return counted, constants


def normalized(source: str) -> str:
    """The text as the edits print it, so sizes compare like with like."""
    return ast.unparse(ast.parse(source)) + "\n"


def nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node in a fixed order (the same for two parses of one text): how an edit finds its place."""
    return list(ast.walk(tree))


def at(index: int) -> Callable[[ast.Module], ast.AST]:
    return lambda tree: nodes(tree)[index]


def chunks(length: int) -> Iterator[tuple[int, int]]:
    """[start, end) slices of a list: the whole, halves, quarters, ... then single elements."""
    seen: set[tuple[int, int]] = set()
    width = length
    while width >= 1:
        for start in range(0, length, width):
            piece = (start, min(start + width, length))
            if piece not in seen:
                seen.add(piece)
                yield piece
        width //= 2


def deletions(tree: ast.Module) -> list[tuple[int, Edit]]:
    """(chunk size, edit): a slice of statements, list elements, dict entries, decorators or keyword
    arguments removed. An emptied block gets `pass`."""
    found: list[tuple[int, Edit]] = []

    def add(width: int, describe: str, change: Callable[[ast.Module], bool]) -> None:
        found.append((width, Edit(describe, change)))

    for index, node in enumerate(nodes(tree)):
        line = getattr(node, "lineno", "?")
        for field in BODIES:
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                for start, end in chunks(len(block)):
                    where = f"{type(node).__name__} {field} (line {block[start].lineno})"
                    add(end - start, f"delete statements {start + 1}-{end} of a {where}",
                        drop_statements(index, field, start, end))  # fmt: skip
        if isinstance(node, ast.List) and len(node.elts) > 1:
            for start, end in chunks(len(node.elts)):
                add(end - start, f"delete list elements {start + 1}-{end} (line {line})",
                    drop_slice(index, "elts", start, end))  # fmt: skip
        if isinstance(node, ast.Dict) and node.keys and all(k is not None for k in node.keys):
            for start, end in chunks(len(node.keys)):
                add(end - start, f"delete dict entries {start + 1}-{end} (line {line})",
                    drop_dict_entries(index, start, end))  # fmt: skip
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            for position, decorator in enumerate(node.decorator_list):
                add(1, f"drop decorator {ast.unparse(decorator)[:40]} of {node.name}",
                    drop_slice(index, "decorator_list", position, position + 1))  # fmt: skip
        if isinstance(node, ast.Call):
            for position, keyword in enumerate(node.keywords):
                add(1, f"drop keyword {keyword.arg}= (line {line})",
                    drop_slice(index, "keywords", position, position + 1))  # fmt: skip
    found.sort(key=lambda pair: -pair[0])  # stable: big chunks first, each in the order of the text
    return found


def drop_statements(index: int, field: str, start: int, end: int) -> Callable[[ast.Module], bool]:
    def change(tree: ast.Module) -> bool:
        node = at(index)(tree)
        block = getattr(node, field)
        del block[start:end]
        if not block and not (isinstance(node, ast.Module) or field in ("orelse", "finalbody")):
            block.append(ast.Pass())
        return True

    return change


def drop_slice(index: int, field: str, start: int, end: int) -> Callable[[ast.Module], bool]:
    def change(tree: ast.Module) -> bool:
        del getattr(at(index)(tree), field)[start:end]
        return True

    return change


def drop_dict_entries(index: int, start: int, end: int) -> Callable[[ast.Module], bool]:
    def change(tree: ast.Module) -> bool:
        node = at(index)(tree)
        assert isinstance(node, ast.Dict)
        del node.keys[start:end]
        del node.values[start:end]
        return True

    return change


def replace_node(index: int, make: Replacement) -> Callable[[ast.Module], bool]:
    """Replace the node at `index` (in its parent's field or list) by what `make` returns."""

    def change(tree: ast.Module) -> bool:
        target = at(index)(tree)
        new = make(target)
        if new is None:
            return False
        for parent in ast.walk(tree):
            for field, value in ast.iter_fields(parent):
                if value is target:
                    setattr(parent, field, new)
                    return True
                if isinstance(value, list) and any(item is target for item in value):
                    position = next(i for i, item in enumerate(value) if item is target)
                    value[position : position + 1] = new if isinstance(new, list) else [new]
                    return True
        return False

    return change


def loop_once(node: ast.AST) -> list[ast.stmt] | None:
    """`for i in range(a, ...): body` -> `i = a` then the body (its first trip)."""
    if not isinstance(node, ast.For) or not isinstance(node.target, ast.Name):
        return None
    if not isinstance(node.iter, ast.Call) or not node.iter.args:
        return None
    args = node.iter.args
    start = copy.deepcopy(args[0]) if len(args) > 1 else ast.Constant(0)
    return [ast.Assign([ast.Name(node.target.id, ast.Store())], start), *copy.deepcopy(node.body)]


def power_of_two(value: int) -> bool:
    return value >= 2 and value & (value - 1) == 0


def operand(field: str) -> Replacement:
    return lambda node: copy.deepcopy(getattr(node, field))


def argument(position: int) -> Replacement:
    return lambda node: copy.deepcopy(node.args[position])  # type: ignore[attr-defined]


def simplifications(tree: ast.Module) -> list[Edit]:
    """Edits at one node that keep its place: operands for expressions, one branch for an `if`,
    one trip for a loop, halved constants, and kernel parameters dropped."""
    found: list[Edit] = []
    for index, node in enumerate(nodes(tree)):
        line = getattr(node, "lineno", "?")
        shown = ast.unparse(node)[:40] if isinstance(node, ast.expr) else ""
        replacements: list[tuple[str, Replacement]] = []
        if isinstance(node, ast.For):
            replacements.append((f"run the loop once (line {line})", loop_once))
        if isinstance(node, ast.If):
            replacements.append((f"keep only the if's body (line {line})", operand("body")))
            if node.orelse:
                replacements.append((f"keep only the if's else (line {line})", operand("orelse")))
        if isinstance(node, ast.BinOp):
            replacements += [(f"keep the {side} operand of {shown} (line {line})", operand(side))
                             for side in ("left", "right")]  # fmt: skip
        if isinstance(node, ast.IfExp):
            replacements += [(f"keep one branch of {shown} (line {line})", operand(side))
                             for side in ("body", "orelse")]  # fmt: skip
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            replacements += [(f"replace {shown} by argument {n + 1} (line {line})", argument(n))
                             for n in range(len(node.args))]  # fmt: skip
        if isinstance(node, ast.Constant) and type(node.value) is int and power_of_two(node.value):
            replacements.append((f"halve {node.value} (line {line})", lambda n: ast.Constant(n.value // 2)))
        found += [Edit(describe, replace_node(index, make)) for describe, make in replacements]
        if isinstance(node, (ast.keyword, ast.Dict)):
            found += lowered_keywords(index, node)
        if isinstance(node, ast.FunctionDef):
            found += [Edit(f"drop parameter {parameter.arg} of {node.name}",
                           drop_parameter(index, position, parameter.arg))
                      for position, parameter in enumerate(node.args.args)]  # fmt: skip
    return found


def lowered_keywords(index: int, node: ast.keyword | ast.Dict) -> list[Edit]:
    """num_stages=3 -> 2 (and num_warps, ...), as a keyword or a config dict's entry."""
    if isinstance(node, ast.keyword):
        pairs = [(node.arg, node.value)]
    else:
        keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
        pairs = list(zip(keys, node.values, strict=True))
    edits = []
    for position, (name, value) in enumerate(pairs):
        lowerable = isinstance(value, ast.Constant) and type(value.value) is int and value.value > 1
        if name in LOWERED_KEYWORDS and lowerable:
            edits.append(Edit(f"lower {name} to {value.value - 1}", lower_value(index, position)))  # type: ignore[attr-defined]
    return edits


def lower_value(index: int, position: int) -> Callable[[ast.Module], bool]:
    def change(tree: ast.Module) -> bool:
        node = at(index)(tree)
        value = node.value if isinstance(node, ast.keyword) else node.values[position]  # type: ignore[attr-defined]
        value.value -= 1
        return True

    return change


def named(key: ast.expr | None, name: str) -> bool:
    return isinstance(key, ast.Constant) and key.value == name


def drop_parameter(index: int, position: int, name: str) -> Callable[[ast.Module], bool]:
    """The parameter, and every place that feeds it by name: a dict key, a keyword argument."""

    def change(tree: ast.Module) -> bool:
        function = at(index)(tree)
        assert isinstance(function, ast.FunctionDef)
        first_default = len(function.args.args) - len(function.args.defaults)
        del function.args.args[position]
        if position >= first_default:
            del function.args.defaults[position - first_default]
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                keep = [i for i, key in enumerate(node.keys) if not named(key, name)]
                node.keys = [node.keys[i] for i in keep]
                node.values = [node.values[i] for i in keep]
            if isinstance(node, ast.Call):
                node.keywords = [k for k in node.keywords if k.arg != name]
        return True

    return change


def candidates(source: str) -> list[Edit]:
    """Every edit of the text, in the order they are tried."""
    tree = ast.parse(source)
    return [edit for _, edit in deletions(tree)] + simplifications(tree)
