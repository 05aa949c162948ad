"""Pasted code repaired as a triager would: each kind of paste damage, repaired and said, and code
that is whole left exactly as pasted."""

from __future__ import annotations

import ast
import datetime as dt

from kregress.bisect.triage.importer import UpstreamIssue, extract
from kregress.bisect.triage.repair import repair

KERNEL = """@triton.jit
def double(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


x = torch.ones(64, device="cuda")
double[(1,)](x, 64, BLOCK=64)
"""


def issue(title: str, body: str) -> UpstreamIssue:
    url = "https://github.com/triton-lang/triton/issues/1"
    opened = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    return UpstreamIssue(url, "triton-lang/triton", 1, False, title, body, [], [], opened, None)


def test_whole_code_is_left_exactly_as_pasted() -> None:
    code = "import torch\nimport triton\nimport triton.language as tl\n\n\n" + KERNEL
    repaired = repair([code])
    assert repaired.source == code and repaired.repairs == []


def test_a_kernel_pasted_without_its_imports_gets_the_ones_it_uses() -> None:
    repaired = repair([KERNEL + "print(math.pi, libdevice)\n"])
    assert repaired.repairs == ["added the imports it uses and lacks: tl, triton, torch, math, libdevice"]
    tree = ast.parse(repaired.source)
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names}  # fmt: skip
    assert {"tl", "triton", "torch", "math", "libdevice"} <= imported
    assert repaired.source.endswith(KERNEL + "print(math.pi, libdevice)\n")  # the code itself unchanged


def test_a_common_indent_and_a_stray_one_are_removed() -> None:
    quoted = "".join(f"    {line}\n" if line else "\n" for line in KERNEL.splitlines())
    stray = quoted.replace("    x = torch.ones", "      x = torch.ones")
    repaired = repair([stray])
    assert repaired.parses
    assert repaired.repairs[0] == "removed a common indent of 4 columns"
    assert repaired.repairs[1].startswith("line 7: a stray indent set to its block's (0 columns)")


def test_a_last_statement_cut_short_is_dropped_and_said_never_completed() -> None:
    cut = "import triton\nimport triton.language as tl\nimport torch\n\n" + KERNEL.replace(
        "BLOCK=64)\n", "BLOCK=6"
    )
    repaired = repair([cut])
    assert repaired.parses and "double[(1,)]" not in repaired.source
    assert repaired.repairs == ["lines 12-12: the last statement was cut short in the paste ('(' was never "
                                "closed); dropped, not completed"]  # fmt: skip


def test_a_markdown_backtick_left_in_a_line_is_removed_and_the_statement_kept() -> None:
    """`main(args.m, `args.verbose)` inside a fence: Python 3 has no backtick, so the line is the
    reporter's Markdown; without the repair the whole main block was dropped as cut short, and with
    it the call that builds the kernel. Backticks inside a string are the code's own."""
    script = "import triton\nimport triton.language as tl\nimport torch\n\n" + KERNEL.replace(
        "double[(1,)](x, 64, BLOCK=64)",
        'if __name__ == "__main__":\n    print("`ok`")\n    double[(1,)](x, 64, `BLOCK=64)`',
    )
    repaired = repair([script])
    assert repaired.parses and "    double[(1,)](x, 64, BLOCK=64)\n" in repaired.source
    assert repaired.repairs == ["line 14: 2 stray backtick(s) removed (Markdown's, not Python's)"]
    assert 'print("`ok`")' in repaired.source


def test_a_sentence_of_prose_left_inside_a_block_is_dropped_and_the_code_kept() -> None:
    """A fence closed past the sentence after the code ("Compare with: replace the last loop by"),
    or never closed: the sentence is the reporter's, not Python's. Without the repair the block did
    not parse at all and its kernel was lost; a line of code that fails stays an error."""
    script = "import triton\nimport triton.language as tl\nimport torch\n\n" + KERNEL
    prose = script + "Compare with: replace the launch by a bigger grid\ndouble[(2,)](x, 64, BLOCK=64)\n"
    repaired = repair([prose])
    assert repaired.parses and "double[(2,)](x, 64, BLOCK=64)" in repaired.source
    assert repaired.repairs == [
        "line 13: the reporter's prose inside the code block ('Compare with: replace the launch by a bigger "
        "grid'), dropped"
    ]
    for code in ("print x y\n", "Kernel(a b c)\n"):  # code that is broken, never a sentence
        assert not any("prose" in said for said in repair([script + "x = 1\n" + code + "y = 2\n"]).repairs)


def test_a_kernel_block_without_imports_or_language_is_taken_and_a_traceback_is_not() -> None:
    traceback = "Traceback (most recent call last):\n  x = tl.load(p)\nValueError: boom\n"
    body = f"```\n{KERNEL}```\n\n```\n{traceback}```\n"
    evidence = extract(issue("double fails", body))
    assert evidence.blocks == 1 and "added the imports" in evidence.repairs[0]
    assert evidence.pasted.startswith("@triton.jit") and evidence.code.startswith("import triton.language")
    assert evidence.errors == ["ValueError: boom"]


def test_an_error_in_the_title_is_quoted_too_after_the_bodys() -> None:
    body = f"```python\nimport torch, triton\nimport triton.language as tl\n{KERNEL}```\n"
    only_title = extract(issue("tl.store fails: ValueError: Unsupported ptr type <['64'], int64>", body))
    assert only_title.errors == ["ValueError: Unsupported ptr type <['64'], int64>"]
    both = extract(issue("`RuntimeError: boom` on store", body + "\n```\nValueError: deeper\n```\n"))
    assert both.errors == ["ValueError: deeper", "RuntimeError: boom"]


def test_with_no_error_quoted_only_a_failure_of_the_compilers_shows_the_bug(tmp_path) -> None:
    """A FAIL of the reporter's own code (a TypeError it raises, a library refusing its arguments)
    is not the bug; one that does not compile, crashes, or fails the reporter's assertion is."""
    from kregress.bisect.triage.importer import Locator, Point, Summary
    from kregress.judge import Outcome

    locator = Locator(tmp_path, "draft", [], Summary("u"), 60.0)

    def point(kind: str, message: str) -> Point:
        return Point("cpu:interpreter", "triton==3.6.0", Outcome.FAIL, message, kind)

    assert locator.shows(point("COMPILE_ERROR", "COMPILE_ERROR: 1 of 1 configs did not compile"))
    assert locator.shows(point("CRASH", "CRASH: child process killed by SIGSEGV"))
    assert locator.shows(point("RUNTIME_ERROR", "RUNTIME_ERROR: CompilationError: at 3:4: bad"))
    assert locator.shows(point("RUNTIME_ERROR", "RUNTIME_ERROR: AssertionError: 6.0 != 4.0"))
    assert not locator.shows(point("RUNTIME_ERROR", "RUNTIME_ERROR: TypeError: unsupported operand"))
    assert not locator.shows(
        point("RUNTIME_ERROR", "RUNTIME_ERROR: RuntimeError: Expected all tensors on cpu")
    )
    error = Point("cpu:interpreter", "triton==3.6.0", Outcome.ERROR, "pasted.py's own code fails", None)
    assert not locator.shows(error)


def test_an_excerpt_of_the_kernel_shown_above_the_reproducer_is_left_out_and_said() -> None:
    """An issue points at the bug with a few lines of the kernel's body, then pastes the whole
    reproducer: run first, the excerpt would fail on the kernel's own parameters. A launch block
    without imports is no excerpt: it reads only what the other block binds at its top level."""
    excerpt = "for _ in tl.range(0, 4, flatten=True):\n    for _ in tl.range(5, n):\n        acc += 1\n"
    whole = "import torch\nimport triton\nimport triton.language as tl\n\n\n" + KERNEL
    repaired = repair([excerpt, whole])
    assert "tl.range(5, n)" not in repaired.source and repaired.source.startswith("import torch")
    assert repaired.repairs == [
        "block 1: an excerpt of block 2's kernel (it reads n, which only a function of block 2 binds); "
        "left out, as a triager reads it"
    ]
    kernel, launch = KERNEL.split("\n\nx = ")
    imports = "import torch\nimport triton\nimport triton.language as tl\n\n\n"
    kept = repair([imports + kernel, "x = " + launch])
    assert "double[(1,)](x, 64" in kept.source and kept.repairs == []


def test_a_paste_ending_inside_a_name_nothing_binds_drops_its_statement() -> None:
    """Cut inside `size_2` or `get_sample_kernel`: the name as left is a NameError of the paste's,
    never the compiler's; a name the code binds, or a builtin, at the end is whole."""
    kernel = (
        "import tilelang.language as T\n\n\ndef make():\n    size_0 = T.symbolic('size_0')\n"
        "    with T.Kernel(1) as b:\n        n = size_0 * s\n"
    )
    repaired = repair([kernel])
    assert repaired.source.endswith("    with T.Kernel(1) as b:\n        pass\n")
    assert any("ends inside a name (`s`" in said and "`pass` left" in said for said in repaired.repairs)
    top = repair(["import torch\n\nx = torch.ones(3)\nkernel = get_s\n"])
    assert top.source == "import torch\n\nx = torch.ones(3)\n" and "dropped" in top.repairs[-1]
    for whole in ("import torch\n\nx = torch.ones(3)\ny = x\n", "import torch\n\nprint(len)\n"):
        assert repair([whole]).source == whole and not repair([whole]).repairs
