"""What an issue's text says, read as a triager reads it: its code blocks (fenced, indented, or a
reporter's printed output), the errors it quotes (a traceback's last line, a compiler's `error:`
line, a failed assertion, one named in a sentence or the title), and the pattern each is matched
by against what a release raises (the words that do not vary between releases).
"""

from __future__ import annotations

import re

from kregress.bisect.triage.repair import KERNEL_MARKERS, looks_like_kernel_code, repair_block

# A fence never closed runs to the end of the text, as GitHub renders it (a paste or a saved copy
# cut short); what is left of its closing fence is dropped.
# A fence opens a block only at a line's start, as GitHub reads it (indented, or in a quote, is
# still a line's start); "places ```__syncthreads()``` inside" in a sentence is inline code.
CODE_BLOCK = re.compile(r"^[ \t>]*```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|`{1,2}[ \t]*\Z|\Z)", re.S | re.M)
PYTHON_FENCES = {"", "python", "py", "python3", "ipython"}
# The code's first line written on the opening fence: an import, not a language's name
CODE_ON_THE_FENCE = re.compile(
    r"```[ \t]*((?:import|from)\s+[\w.]+(?:\s+import\s+[\w., ]+|\s+as\s+\w+)?)[ \t]*\n"
)
EXCEPTION_NAME = r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure|OutOfResources)"
RAISED = re.compile(rf"^\s*({EXCEPTION_NAME})(?::\s*(.*))?$")
# How Triton's CompilationError ends: the diagnosis as its exception's repr, on a line of its own
# (`AssertionError("Loop carried variable a0 changed type ...")`, `ValueError('...')`).
RAISED_REPR = re.compile(rf"""^\s*({EXCEPTION_NAME})\((['"])(.*)\2\)\s*$""")


def raised_line(line: str) -> str | None:
    """The exception a quoted line shows, as `Name: message`: printed so by a traceback, or as the
    repr a CompilationError's last line gives."""
    if RAISED.match(line):
        return line.strip()
    if found := RAISED_REPR.match(line):
        return f"{found.group(1)}: {found.group(3)}"
    return None


# An exception named in a sentence ("... it will report InterpreterError: TypeError(...). Then"), to
# the sentence's end.
IN_PROSE = re.compile(rf"(?<![\w.])({EXCEPTION_NAME}:\s*\S.*?)(?:[.,;]?\s*$|\.\s+(?=[A-Z]))")
# ... or quoted inline ("throws `IndexError: ... the buffer is A`, which is not clear", or in double
# quotes), to its quote's end
IN_INLINE_CODE = re.compile(rf"([`\"])({EXCEPTION_NAME}:\s*(?:(?!\1).)+?)\s*\1")
COMPILER_ERROR = re.compile(r"^.*?\berror\s*:\s*(.+)$", re.I)  # ptxas spaces it: "error   : "
# An MLIR diagnostic names the operation it is about first: "'tt.atomic_rmw' op failed to verify ..."
MLIR_OPERATION = re.compile(r"^'(\w+(?:\.\w+)+)' op (.+)$")
# A C/C++ assertion as glibc prints it before the abort: "...: Assertion `cond' failed."
ASSERTION = re.compile(r"Assertion [`'](.+?)' failed")
MISMATCH = re.compile(r"(Mismatched elements[^\n]*|Tensor-likes are not close[^\n]*|not close[^\n]*)")


def code_blocks(text: str) -> tuple[list[tuple[str, str, str]], str]:
    """The text's code blocks as GitHub renders them, in order, each as (its fence's info, its
    code, the prose right before it), and the prose around them all: fenced blocks, and indented
    ones (lines of four spaces or a tab after a blank line, as CommonMark reads a reporter's paste
    without fences; their info is INDENTED_BLOCK)."""
    found: list[tuple[int, int, str, str]] = []
    prose: list[str] = []
    at = 0
    for fenced in CODE_BLOCK.finditer(text):
        found += indented_blocks(text[at : fenced.start()], at, prose)
        info, body = fenced.group(1), fenced.group(2)
        fence = text.index("```", fenced.start())
        if statement := CODE_ON_THE_FENCE.match(text, fence):  # "```import torch"
            info, body = "", statement.group(1) + "\n" + body
        found.append((fenced.start(), fenced.end(), info, body))
        at = fenced.end()
    found += indented_blocks(text[at:], at, prose)
    blocks, end = [], 0
    for start, stop, fence, body in sorted(found):
        blocks.append((fence, body, text[end:start]))
        end = stop
    return blocks, "".join(prose)


INDENTED = re.compile(r"^(?: {4}|\t)")
INDENTED_BLOCK = "(indented)"  # the info of a block indented without fences


def indented_blocks(text: str, offset: int, prose: list[str]) -> list[tuple[int, int, str, str]]:
    """The indented code blocks of text outside any fence, as (start, end, INDENTED_BLOCK, code),
    the rest kept as prose. A block starts after a blank line (an indented line right after a
    paragraph continues it), takes blank lines within it, and ends before the first line indented
    less."""
    lines = text.splitlines(keepends=True)
    found, kept, n, position = [], [], 0, offset
    while n < len(lines):
        line = lines[n]
        starts = INDENTED.match(line) and line.strip() and (n == 0 or not lines[n - 1].strip())
        if not starts:
            kept.append(line)
            position += len(line)
            n += 1
            continue
        end = n
        while end < len(lines) and (INDENTED.match(lines[end]) or not lines[end].strip()):
            end += 1
        while end > n and not lines[end - 1].strip():  # trailing blank lines are not the block's
            end -= 1
        code = "".join(INDENTED.sub("", line) for line in lines[n:end])
        length = sum(len(line) for line in lines[n:end])
        found.append((position, position + length, INDENTED_BLOCK, code))
        position += length
        n = end
    prose.append("".join(kept))
    return found


# A block that quotes a traceback is output, whatever source lines it quotes (`from x import y`)
TRACEBACK = re.compile(r'^\s*(?:Traceback \(most recent call last\)|File "[^"]*", line \d+)', re.M)


def python_block(fence: str, body: str) -> bool:
    """Whether a block is the reporter's Python: fenced as Python (or unmarked) and importing
    something or plainly a kernel's, never a traceback; an indented block only where it parses
    (a list item's paragraph can start with "from ...")."""
    if TRACEBACK.search(body):
        return False
    importing = re.search(r"^\s*(import|from)\s+\w+", body, re.M)
    if fence == INDENTED_BLOCK:
        return bool(importing or KERNEL_MARKERS.search(body)) and repair_block(body).parses
    return fence.lower() in PYTHON_FENCES and bool(importing or looks_like_kernel_code(body))


GENERATED_FENCES = {"cuda", "cu", "cpp", "c++", "c", "ptx", "llvm", "mlir", "asm"}
GENERATED_TEXT = re.compile(
    r'^\s*(?:#include\b|\.version\b|\.target\b|extern "C"|__global__\b|define\s|; ModuleID'
    r"|module attributes)",
    re.M,
)
# a paste that prints the code its compiler generated: TileLang's source, a Triton kernel's asm
PRINTS_GENERATED = re.compile(r"print\([^\n]*(?:get_kernel_source\(|\.asm\[)")
PRINTED = re.compile(r"tensor\(|array\(|\[\s*[-+]?(?:\d|nan|inf)", re.I)


def printed_output(block: str) -> bool:
    """Whether a block that is not code shows what a run printed (tensors, arrays, lists of numbers)
    and no error: the reporter's run ended, and its output is the bug."""
    lines = block.splitlines()
    if any(RAISED.match(line) or COMPILER_ERROR.match(line) or "Traceback" in line for line in lines):
        return False
    return bool(PRINTED.search(block))


def printed_comments(code: str) -> list[str]:
    """The comments a reporter writes at a `print(...)` of the code (on its line or the comment lines
    right after it), each one text: what that print printed in the reporter's run."""
    lines, found = code.splitlines(), []
    for n, line in enumerate(lines):
        if not re.match(r"\s*print\(", line):
            continue
        said = [line.split("#", 1)[1]] if "#" in line else []
        for after in lines[n + 1 :]:
            if not after.strip().startswith("#"):
                break
            said.append(after.strip()[1:])
        if said:
            found.append("\n".join(said))
    return found


def code_comments(code: str) -> list[str]:
    """The code's comments, one text: values a reporter writes beside a print (`# prints 7.0, expected
    6.0`) are stated values as much as an output block's."""
    comments = [line.split("#", 1)[1].strip() for line in code.splitlines() if "#" in line]
    return ["\n".join(comments)] if comments else []


def assertions(lines: list[str]) -> list[str]:
    """The failed assertions the lines print, each as its condition alone."""
    return [f"Assertion `{m.group(1)}' failed" for line in lines if (m := ASSERTION.search(line))]


def quoted_errors(text: str) -> list[str]:
    """Every error the text quotes, the most specific first: a traceback's last exception line, a
    compiler's error line, a mismatch report, then an exception named in a sentence."""
    found = [quoted_error(text)]
    lines = text.splitlines()
    found += assertions(lines[::-1])
    found += [raised for line in reversed(lines) if (raised := raised_line(line))]
    found += [compiler_error_line(line) for line in reversed(lines) if COMPILER_ERROR.match(line)]
    found += [in_prose(line) for line in lines if not raised_line(line)]
    return [e for e in dict.fromkeys(found) if e]


# A compiler's error line quoted inline in a sentence: "`error: Can't deduce copy extents`, the
# error is raised by ..."
INLINE_COMPILER_ERROR = re.compile(r"([`\"])((?:(?!\1).)*?\berror\s*:(?:(?!\1).)+?)\s*\1", re.I)


def compiler_error_line(line: str) -> str:
    """A line with a compiler's `error:`, as quoted: its inline quote alone where it has one."""
    quoted = INLINE_COMPILER_ERROR.search(line)
    return quoted.group(2).strip() if quoted else line.strip()


def in_prose(line: str) -> str | None:
    """An exception a sentence names: to its inline quote's end where quoted so, else to the
    sentence's end."""
    if quoted := IN_INLINE_CODE.search(line):
        return quoted.group(2)
    found = IN_PROSE.search(line)
    return found.group(1) if found else None


def title_errors(title: str) -> list[str]:
    """An error given in the title (`... fails with RuntimeError: x`, or quoted in backticks), or a
    message quoted in double quotes (`... fails with "Cannot call x outside of a kernel"`): the
    message a body cut before its traceback's end no longer shows."""
    named = re.findall(r"(?:^|:\s|\s)((?:\w+\.)*\w+(?:Error|Exception)\b.*)$", title)
    pieces = [title, *re.findall(r"`([^`]+)`", title), *named]
    found = [e for piece in pieces if (e := quoted_error(piece.strip()))]
    messages = [m.strip() for m in re.findall(r'"([^"]{20,})"', title) if len(m.split()) >= 4]
    return found + [m for m in messages if not any(m in e for e in found)]


def quoted_error(text: str) -> str | None:
    """The error the reporter quotes: a failed C++ assertion (its condition; the path and signature
    before it are the reporter's build's: it names the bug more closely than the exception that
    wraps it, "PassManager::run failed"), else a traceback's last exception line, else a compiler's
    error line, else a mismatch report."""
    lines = text.splitlines()
    asserted = assertions(lines)
    if asserted:
        return asserted[-1]
    raised = [found for line in lines if (found := raised_line(line))]
    if raised:
        return raised[-1]
    compiler = [compiler_error_line(line) for line in lines if COMPILER_ERROR.match(line)]
    if compiler:
        return compiler[-1]
    mismatch = MISMATCH.search(text)
    return mismatch.group(1).strip() if mismatch else None


# A reporter's stand-in for what varies ("variables X are used", "... is not ...", "XXX"), standing
# alone: read as the message's varying part, as a number or a quote is.
PLACEHOLDER = r"(?<![\w.])(?:X{1,3}|\.\.\.|…)(?![\w.])"
# What splits a message into the runs of words that do not vary: quotes, numbers, clauses, stand-ins.
WHAT_VARIES = rf"'[^']*'|\"[^\"]*\"|`[^`]*`|\d+|:\s|{PLACEHOLDER}"


def longest_fixed_run(message: str) -> str:
    """A message's longest run of words between what varies (quotes, numbers, clauses, stand-ins)."""
    return max((p.strip() for p in re.split(WHAT_VARIES, message)), key=len, default="")


def words_before_what_varies(message: str) -> str:
    """A message's words up to its first number, quote, bracket or stand-in (those vary by release
    and run)."""
    return re.split(rf"[\d'\"`(\[{{<]|{PLACEHOLDER}", message, maxsplit=1)[0].strip()


# TVM's failed check, as its releases print it: "Check failed: (cond) is false: message" (or
# "Check failed: cond : message"); its exception's class changes between releases (InternalError,
# RuntimeError, TypeError, ValueError as tvm_ffi maps it).
TVM_CHECK = re.compile(r"^\s*Check failed:\s*(?P<cond>\(.+?\)) is false(?::\s*(?P<said>.*))?$|"
                       r"^\s*Check failed:\s*(?P<bare>[^:]+?)\s+:\s+(?P<said2>.*)$", re.S)  # fmt: skip


# A message that only heads the lines below it, which say what failed: old TVM's "InternalError:
# Traceback (most recent call last):" over C++ frames, "RuntimeError: Compilation error:" over nvcc's
# lines. Any error of its kind starts so.
HEADING_ONLY = re.compile(
    r"\s*(?:Traceback \(most recent call last\)|Compilation error|Compile error)\s*:?\s*", re.I
)


def tvm_check(message: str) -> str | None:
    """A failed TVM check's pattern: its condition, which names the check (the words "Check failed:"
    and the class name any failed check of any pass shares), or its message's longest fixed run."""
    found = TVM_CHECK.match(message)
    if found is None:
        return None
    condition = (found["cond"] or found["bare"]).strip()
    said = longest_fixed_run(found["said"] or found["said2"] or "")
    pieces = [r"\s*".join(re.escape(part) for part in condition.split())] if len(condition) >= 8 else []
    pieces += [re.escape(said[:60])] if len(said) >= 16 else []
    return f"(?:{'|'.join(pieces)})" if pieces else None


def error_pattern(error: str | None) -> str | None:
    """What a judged message must contain to be the quoted error: its exception class and, where it
    has one, the words of its message up to the first number or quote (those vary by release); or,
    for a raised error, the longest run of its message's words between quotes and numbers."""
    if error is None:
        return None
    asserted = ASSERTION.fullmatch(error)
    if asserted:  # the condition's words: a crash that prints another assertion is another bug
        words = words_before_what_varies(asserted.group(1))
        return r"Assertion [`']" + re.escape(words[:60]) if len(words) >= 4 else None
    raised = RAISED.match(error)
    if raised:
        name = raised.group(1).rsplit(".", 1)[-1]
        # What is missing is the error itself: "object has no attribute" alone is any attribute
        # missing anywhere (the interpreter's objects lack others); a KeyError's message is its key.
        missing = re.search(r"has no attribute ['\"](\w+)['\"]", raised.group(2) or "")
        if missing:
            return rf"has no attribute ['\"]?{re.escape(missing.group(1))}\b"
        key = re.fullmatch(r"\s*(['\"])([^'\"]{8,})\1\s*", raised.group(2) or "")
        if name == "KeyError" and key:  # the key as a KeyError shows it, quoted: a bare name is in any source
            return rf"KeyError\W+['\"]{re.escape(key.group(2)[:60])}"
        if checked := tvm_check(raised.group(2) or ""):
            return checked
        # a heading: its lines below say what failed, or the paste lost them
        if HEADING_ONLY.fullmatch(raised.group(2) or ""):
            return re.escape(name)
        words = words_before_what_varies(raised.group(2) or "")
        pattern = re.escape(name) + (r".*" + re.escape(words[:60]) if len(words) >= 8 else "")
        # Triton wraps frontend exceptions in a CompilationError that may show the message without
        # its class: the message's longest run of words outside quotes and numbers names it too.
        # A clause ending in ": " may be a condition the reporter left out (TVM's "Check failed:
        # (cond) is false: message"), so clauses are phrases of their own.
        phrase = longest_fixed_run(raised.group(2) or "")
        if re.search(PLACEHOLDER, raised.group(2) or ""):  # a stand-in: the fixed words, or too little
            return rf"{re.escape(name)}.*{re.escape(phrase[:60])}" if len(phrase) >= 16 else re.escape(name)
        return f"(?:{pattern}|{re.escape(phrase[:60])})" if len(phrase) >= 16 else pattern
    compiler = COMPILER_ERROR.match(error)
    text = compiler.group(1) if compiler else error
    operation = MLIR_OPERATION.match(text)
    if operation:  # MLIR names the failing operation first: the op and what failed name the bug
        said = words_before_what_varies(operation.group(2))
        return re.escape(f"'{operation.group(1)}' op {said}"[:80])
    words = words_before_what_varies(text)
    # a message that starts with what varies, or whose stand-in cut it short: its longest run of
    # fixed words
    stand_in = re.search(PLACEHOLDER, text) is not None
    if len(words) < 8 or stand_in:
        longest = longest_fixed_run(text)
        words = longest if len(longest) >= (16 if stand_in else 12) else "" if stand_in else words
    return re.escape(words[:60]) if words else None
