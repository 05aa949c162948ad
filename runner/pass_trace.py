"""Which compiler pass did it: an ir expectation's count after every MLIR pass of a compile.

Triton prints the module before every MLIR pass when MLIR_ENABLE_DUMP=1 (the same header, `//
-----// IR Dump Before PASS (argument) ('OP' operation[: @name]) //----- //`, from 3.0 to 3.9).
The dump before pass k is the IR after pass k-1, so counting the pattern in each dump gives the
count after each pass. The dumps run on past the stage the expectation reads (ttgir is followed
by the passes that lower it to LLVM): the stage ends at the last dump whose text, without
locations, is the stage's own text. LLVM's passes (llir to ptx or amdgcn) are not MLIR passes and
are not traced. TileLang lowers TIR through TVM passes; its adapter writes the TIR after each one
under the same headers, and a cuda_source pattern is counted in that TIR (the CUDA source itself is
generated after the last pass). Pure: no compiler here, only text.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

from kregress.frameworks import FRAMEWORKS

HEADER = re.compile(
    r"^// -----// IR Dump (?P<when>Before|After) (?P<name>\S+) (?:\((?P<argument>[^)]*)\) )?"
    r"\('(?P<op>[^']+)' operation(?::\s*@(?P<symbol>\S+))?\) //----- //$",
    re.M,
)
LOCATION = re.compile(r"\s*loc\((?:[^()]|\([^()]*\))*\)")
# cuda_source: TileLang's, counted in TIR; each framework declares what its adapter can dump
TRACED_STAGES = tuple(dict.fromkeys(s for f in FRAMEWORKS.values() for s in f.traced_stages))
PASS_DUMPS = "pass-dumps"  # a config's IR file of the dumps, beside its stages
# The ops of TritonGPU that may take shared memory (3.0–3.2 spell the dialect triton_gpu): a layout
# conversion through shared memory and an explicit allocation. Counted per pass for a shared_bytes
# expectation, because no pass before the allocation knows bytes.
SHARED_MEMORY_OPS = r"\b(?:ttg|triton_gpu)\.(?:local_alloc|convert_layout)\b"
# The module attribute the allocation pass writes: the kernel's shared memory in bytes.
SHARED_ATTRIBUTE = re.compile(r'"?\b(?:ttg|triton_gpu)\.shared"?\s*=\s*(\d+)\s*:')


@dataclass(frozen=True)
class PassStep:
    """The count after `after` (the pass that ran just before this point; "" for the input)."""

    after: str
    count: int
    scope: str  # the op the dump shows: builtin.module, or one function (tt.func @name)


@dataclass(frozen=True)
class PassTrace:
    steps: list[PassStep]
    stage_found: bool  # whether the stage's own text was found among the dumps (else: to the end)

    def every_pass(self) -> list[list[object]]:
        """[pass, count] after every pass: what two releases or commits are compared on (aligned
        in order, see `aligned`)."""
        return [[step.after or "input", step.count] for step in self.steps]

    def timeline(self) -> list[list[object]]:
        """Compact, for the results file: [pass, count] where the count changes, plus the ends."""
        shown: list[list[object]] = []
        for index, step in enumerate(self.steps):
            changed = index == 0 or step.count != self.steps[index - 1].count
            if changed or index == len(self.steps) - 1:
                shown.append([step.after or "input", step.count])
        return shown


def dump_header(when: str, name: str, op: str) -> str:
    """The header MLIR prints before (or after) a pass, for dumps written in its format."""
    return f"// -----// IR Dump {when} {name} ('{op}' operation) //----- //"


def normalized(text: str) -> str:
    """The IR without locations or blank lines: dumps and the saved stage print those differently."""
    lines = (LOCATION.sub("", line).rstrip() for line in text.splitlines() if not line.startswith("#loc"))
    return "\n".join(line for line in lines if line.strip())


def dumps(text: str) -> list[tuple[re.Match[str], str]]:
    """Each dump's header and body, in order."""
    headers = list(HEADER.finditer(text))
    return [
        (header, text[header.end() : headers[i + 1].start() if i + 1 < len(headers) else len(text)])
        for i, header in enumerate(headers)
    ]


def count_lines(text: str, pattern: re.Pattern[str]) -> int:
    return sum(1 for line in text.splitlines() if pattern.search(line))


def shared_bytes(text: str) -> int | None:
    """The shared memory the allocation pass assigned (0 before it has run); None for a dump of
    one function, which does not show the module's attributes."""
    if not re.search(r"^\s*module\b", text, re.M):
        return None
    found = SHARED_ATTRIBUTE.search(text)
    return int(found.group(1)) if found else 0


def trace(
    dump_text: str, pattern: str | Callable[[str], int | None], stage_text: str | None
) -> PassTrace | None:
    """The count of `pattern` (per line, as the ir expectation counts; or any figure of the IR
    text, None where a dump does not show it) after each pass, up to the end of the stage whose
    final text is `stage_text` (None: all passes); None when the text holds no dumps."""
    found = dumps(dump_text)
    if not found:
        return None
    if callable(pattern):
        measure = pattern
    else:
        compiled = re.compile(pattern)
        measure = lambda body: count_lines(body, compiled)  # noqa: E731
    steps: list[PassStep] = []
    previous = ""
    for header, body in found:
        symbol = f" @{header['symbol']}" if header["symbol"] else ""
        value = measure(body)
        if value is None:
            value = steps[-1].count if steps else 0
        if header["when"] == "Before":
            steps.append(PassStep(previous, value, header["op"] + symbol))
            previous = header["name"]
        else:  # printed after the pass: the count is the pass's own result
            steps.append(PassStep(header["name"], value, header["op"] + symbol))
    end = None
    if stage_text is not None:
        final = normalized(stage_text)
        equal = [i for i, (_, body) in enumerate(found) if normalized(body) == final]
        end = equal[-1] if equal else None
    if end is None:
        return PassTrace(steps, stage_found=False)
    return PassTrace(steps[: end + 1], stage_found=True)


def crossing(trace: PassTrace, min_count: int | None, max_count: int | None) -> str:
    """Where the count last went from inside the bound to outside it: the pass to look at. When
    it ends inside, a passing excursion is still said (outside after A, back inside after B)."""

    def inside(count: int) -> bool:
        return (max_count is None or count <= max_count) and (min_count is None or count >= min_count)

    steps = trace.steps
    if not steps:
        return ""
    exits = [i for i in range(1, len(steps)) if inside(steps[i - 1].count) and not inside(steps[i].count)]
    if not exits:
        if inside(steps[0].count):
            return ""
        said = f"outside the bound from the start ({steps[0].count} in the input to the first pass)"
        if not inside(steps[-1].count):
            return said
        back = next(i for i in range(1, len(steps)) if inside(steps[i].count))
        return (
            f"{said}, back inside after {steps[back].after} ({steps[back - 1].count} → {steps[back].count})"
        )
    last = exits[-1]
    said = f"after {steps[last].after} ({steps[last - 1].count} → {steps[last].count})"
    if not inside(steps[-1].count):
        return f"crosses the bound {said}"
    back = next(i for i in range(last + 1, len(steps)) if inside(steps[i].count))
    return (
        f"outside the bound {said}, back inside after {steps[back].after} "
        f"({steps[back - 1].count} → {steps[back].count})"
    )


def aligned(before: list[list[object]], after: list[list[object]]) -> list[tuple[int, int]]:
    """Index pairs of the passes two compiles both ran, in order (a longest common subsequence of
    their pass names): releases add, drop and move passes, so names alone would pair the wrong ones."""
    names = [str(name) for name, _ in before], [str(name) for name, _ in after]
    matcher = difflib.SequenceMatcher(a=names[0], b=names[1], autojunk=False)
    return [(block.a + k, block.b + k) for block in matcher.get_matching_blocks() for k in range(block.size)]


def first_difference(
    before: list[list[object]], after: list[list[object]]
) -> tuple[str, object, object] | None:
    """The first pass both compiles ran, in order, after which the counts differ:
    (pass, count before, count after)."""
    for i, j in aligned(before, after):
        if before[i][1] != after[j][1]:
            return str(before[i][0]), before[i][1], after[j][1]
    return None
