"""The values an issue states, where its bug is a wrong value and not an exception: "it returns 7.0
but should be 6.0", "got [0, 2, 4, 7] instead of [0, 2, 4, 6]", an output block's "Expected: 6" /
"Actual: 7" lines, or two output blocks the prose above calls the expected and the wrong output. A
draft of such an issue judges the reporter's printed output against them (kregress.pasted.
judge_stated): the wrong value shown is a FAIL, the expected one alone a PASS, and an output that
shows neither cannot tell. And the generated code an issue calls wrong: "the PTX uses `X` where `Y`
is expected", with the stage its sentence names (or the one its spellings are written in), for an
`ir` expectation.

Error messages quote numbers too ("expected 3 arguments, got 2"): a traceback's lines are never
read, and between the two values only a few linking words may stand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kregress.pasted import NUMBER

VALUES = rf"((?:tensor|array)?\[[^\]\n]{{1,300}}\]|(?:tensor|array)?\([^)\n]{{1,300}}\)|{NUMBER})"
IS = r"\s*(?:=|:)?\s*"
SAYS_WRONG = (
    r"(?:got|gets|get|returns?|returned|gives?|gave|outputs?|prints?|printed|produces?|produced|is|was)"
)
LINK = (
    r"[\s,;:]*(?:(?:but|and|while|whereas|where)\s+)?"
    r"(?:(?:the\s+)?(?:triton|kernel|compiled|output|result|it)\s+)?"
)
INSTEAD = r"(?:instead\s+of|rather\s+than|expected|should\s+be|the\s+expected\s+(?:value\s+)?is)"
SENTENCES = [
    # expected 6.0, but got 7.0 / expected value is 6 but the kernel returns 7
    (
        rf"\bexpected\s*(?:value|output|result)?\s*(?:is|=|:|of)?\s*{VALUES}{LINK}{SAYS_WRONG}{IS}{VALUES}",
        "expected",
    ),
    # should be 6.0 but it is 7.0
    (rf"\bshould\s+be{IS}{VALUES}{LINK}{SAYS_WRONG}{IS}{VALUES}", "expected"),
    # returns 7.0 instead of 6.0 / got 7 but expected 6 / gives 7, should be 6
    (rf"\b{SAYS_WRONG}{IS}{VALUES}[\s,;]*(?:but\s+|while\s+|whereas\s+)?{INSTEAD}{IS}{VALUES}", "wrong"),
]
SIDE = r"\s*(?:output|value|result)?\s*[:=]\s*"
EXPECTED_LINE = re.compile(rf"^\s*(?:expected|reference|ref|correct|torch){SIDE}{VALUES}\s*$", re.I | re.M)
WRONG_LINE = re.compile(rf"^\s*(?:actual|got|output|result|triton|kernel){SIDE}{VALUES}\s*$", re.I | re.M)
TRACEBACK_LINE = re.compile(r"^\s*(?:(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b|File \"|Traceback)")


@dataclass(frozen=True)
class StatedValues:
    expected: tuple[float, ...]
    wrong: tuple[float, ...]
    said: str  # the words they were read from

    def as_data(self) -> dict[str, list[float]]:
        return {"expected": list(self.expected), "wrong": list(self.wrong)}


def numbers(text: str) -> tuple[float, ...]:
    return tuple(float(n) for n in re.findall(NUMBER, text, re.I))


def stated_values(texts: list[str]) -> StatedValues | None:
    """The first expected/wrong pair the texts state (title first, then body and comments), outside
    tracebacks; None when none is stated or both sides read alike."""
    for text in texts:
        kept = "\n".join(line for line in text.splitlines() if not TRACEBACK_LINE.match(line))
        for pattern, first in SENTENCES:
            for found in re.finditer(pattern, kept, re.I):
                one, other = numbers(found.group(1)), numbers(found.group(2))
                expected, wrong = (one, other) if first == "expected" else (other, one)
                if expected and wrong and expected != wrong:
                    return StatedValues(expected, wrong, " ".join(found.group(0).split()))
        expected_line, wrong_line = EXPECTED_LINE.search(kept), WRONG_LINE.search(kept)
        if expected_line and wrong_line:
            expected, wrong = numbers(expected_line.group(1)), numbers(wrong_line.group(1))
            if expected and wrong and expected != wrong:
                said = f"{expected_line.group(0).strip()} / {wrong_line.group(0).strip()}"
                return StatedValues(expected, wrong, said)
    return None


# The words a reporter puts right above an output block, in its last sentence: "Expected output:",
# "gives (what I think is) the correct answer:" / "Output (incorrect, ...):", "Actual:", "not what I
# expected". \bcorrect\b is not "incorrect"; "should" and "right" say too little ("this should work,
# but it prints:", "right now it gives:").
EXPECTED_LABEL = re.compile(r"\b(?:expected|correct|reference|desired|intended)\b", re.I)
WRONG_LABEL = re.compile(
    r"\b(?:incorrect|wrong|actual|buggy|broken|instead|unexpected|not\s+(?:what\s+\w+\s+|as\s+)?"
    r"(?:expected|correct|intended))\b",
    re.I,
)
NOT_AN_OUTPUT = re.compile(r"\b(?:input|inputs|given|arguments?)\b", re.I)  # "Input:" shows no result
# What torch and NumPy print beside the values: never a value
PRINTED_ATTRIBUTES = re.compile(
    r"\b(?:device|dtype|requires_grad|grad_fn)=(?:'[^']*'|\"[^\"]*\"|<[^>]*>|[\w.]+)"
)
# The words that call a block what the run gave ("Running this on main gives:")
RUN_GAVE = re.compile(
    r"\b(?:gives?|gave|prints?|printed|outputs?|returns?|returned|got|produces?|produced|shows?)\b", re.I
)
SHELL_PROMPT = re.compile(r"^(?:\S.*)?[$#>]\s+(?:python|bash|sh|\./|TRITON_|CUDA_)\S*", re.M)
# A block of error lines (a compiler's `error:` lines, a traceback) is no output: its numbers are
# line numbers and sizes.
COMPILER_ERROR_WORD = re.compile(r"\berror\s*:")


def error_line(line: str) -> bool:
    """A traceback's line (TRACEBACK_LINE) or a compiler's `error:` line."""
    return bool(TRACEBACK_LINE.match(line) or COMPILER_ERROR_WORD.search(line))


def printed_numbers(block: str) -> tuple[float, ...]:
    """The values an output block shows: its numbers, less a tensor's device, dtype and grad, and
    less the shell's prompt line that ran the script (`user@host035 ~ $ python repro.py`)."""
    lines = [line for line in block.splitlines() if not SHELL_PROMPT.match(line)]
    return numbers(PRINTED_ATTRIBUTES.sub("", "\n".join(lines)))


def words_above(before: str) -> str:
    """The last sentence of the prose right above a block: what it says of that block."""
    line = (before.strip().splitlines() or [""])[-1]
    return re.split(r"(?<=[.!?])\s+(?=[A-Z])", line.strip())[-1][-200:]


def output_label(before: str) -> str | None:
    """ "expected", "wrong", "run" (what the run gave, said of neither side) or None (nothing said
    of a result, or an input shown), as the words right above an output block say."""
    said = words_above(before)
    if NOT_AN_OUTPUT.search(said):
        return None
    if WRONG_LABEL.search(said):  # before "expected": "not what I expected" is the wrong one
        return "wrong"
    if EXPECTED_LABEL.search(said):
        return "expected"
    return "run" if RUN_GAVE.search(said) else None


def stated_by_outputs(texts: list[list[tuple[str, str]]]) -> StatedValues | None:
    """Values stated as two output blocks of one text (the body, or a comment), one the words
    above call expected (or correct), and one they call wrong or what the run gave: "Running this
    on main gives: ```tensor([2])``` ... on 3.2 gives the correct answer: ```tensor([3])```". Each
    text's blocks as (the prose right above, the block); a block of errors is no output."""
    for blocks in texts:
        if (stated := stated_by_outputs_of(blocks)) is not None:
            return stated
    return None


def stated_by_outputs_of(blocks: list[tuple[str, str]]) -> StatedValues | None:
    shown = [
        (output_label(above), values, words_above(above))
        for above, block in blocks
        if not any(error_line(line) for line in block.splitlines()) and (values := printed_numbers(block))
    ]
    expected = [b for b in shown if b[0] == "expected"]
    wrong = [b for b in shown if b[0] == "wrong"] or [b for b in shown if b[0] == "run"]
    if len(expected) != 1 or len(wrong) != 1 or expected[0][1] == wrong[0][1]:
        return None
    said = " / ".join(b[2] for b in (wrong[0], expected[0]))
    return StatedValues(expected[0][1], wrong[0][1], f"output blocks: {said}")


CODE = r"`([^`\n]{2,120})`"
# a spelling in one to three backticks (a title's ```__syncthreads()```)
CODE_RUN = r"`{1,3}([^`\n]{2,120})`{1,3}"
BARE_SPELLING = r"(__[A-Za-z]\w*(?:\(\))?)"  # a CUDA builtin written without backticks
ARTICLE = r"(?:an?\s+|the\s+)?"
EMITS = (
    r"(?:emits?|emitted|emitting|generates?|generated|generating|uses?|used|produces?|produced|"
    r"lowers?\s+(?:it\s+)?to|lowered\s+to|contains?)"
)
SPELLINGS = [
    # emits `X` where `Y` is expected / generates `X` instead of `Y`
    (rf"\b{EMITS}\s+{ARTICLE}{CODE}[^`\n]{{0,60}}?\b(?:where|while|whereas|but|instead\s+of|rather\s+than)\s+"
     rf"{ARTICLE}{CODE}", "wrong"),
    # lowers to `X` (<= 2 ULP), not `Y`
    (rf"\b{EMITS}\s+{ARTICLE}{CODE}[^`\n]{{0,60}}?,\s*not\s+(?:the\s+)?(?:[\w-]+\s+){{0,3}}?{CODE}", "wrong"),
    # expected `Y` but it emits `X` / should use `Y`, not `X`
    (rf"\b(?:expected|should\s+(?:emit|generate|use|be|contain))\s+{ARTICLE}{CODE}[^`\n]{{0,60}}?"
     rf"\b(?:but|while|whereas|not)\b[^`\n]{{0,40}}?{CODE}", "right"),
]  # fmt: skip
STAGE_WORDS = [
    ("ptx", r"\bptx\b"),
    ("amdgcn", r"\b(?:amdgcn|gcn|isa)\b"),
    ("llir", r"\b(?:llvm[\s-]*ir|llir)\b|\.ll\b"),
    ("ttgir", r"\bttgir\b"),
    ("ttir", r"\bttir\b"),
    ("spv", r"\bspir-?v\b"),
]
# TileLang's generated code is CUDA C++ (the `cuda_source` stage): how its reporters name it
CUDA_SOURCE_WORDS = (
    r"\b(?:cuda\s+(?:source|code|kernel)|generated\s+(?:cuda|source|code|kernel)|kernel\s+source"
    r"|get_kernel_source)"
)
# A PTX instruction: an opcode of PTX's, then its modifiers with dots, a type or state space among them
# (`div.full.f32`, `ld.global.v4.b32`, `cvt.rn.bf16.f32`): a spelling's stage where no word says it.
PTX_INSTRUCTION = re.compile(
    r"^(?:ld|ldu|st|cvt|cvta|div|rcp|sqrt|rsqrt|ex2|lg2|sin|cos|tanh|add|sub|mul|mad|fma|min|max|abs|neg|"
    r"mov|shfl|setp|selp|set|atom|red|bar|barrier|membar|fence|vote|mma|wgmma|ldmatrix|stmatrix|cp|"
    r"tcgen05|prmt|and|or|xor|not|shl|shr|copysign|testp|prefetch)"
    r"(?:\.[a-z0-9_]+)*\.(?:[fbsu](?:8|16|32|64)|bf16|tf32|e4m3|e5m2|pred|v[248]|global|shared|local|const"
    r"|param|sync|aligned)(?:\.[a-z0-9_]+)*$"
)


@dataclass(frozen=True)
class StatedSpelling:
    """A wrong spelling the issue says the generated code has, at a stage it names; or, `missing`, a
    right one it says the generated code lacks (`wrong` is then empty); or, `misplaced`, one it has
    inside a branch or loop that not every thread runs; or, `extra`, one it has and should not
    (`right` is then empty)."""

    stage: str
    wrong: str
    right: str
    said: str
    missing: bool = False
    pattern: str | None = None  # what is counted, where the text names no spelling (a barrier in words)
    misplaced: bool = False
    extra: bool = False

    @property
    def counted_against_newest(self) -> bool:
        """Whether the draft's bound is the newest release's count (its fix in), not a fixed 0."""
        return self.missing or self.misplaced or self.extra

    @property
    def fewer_after_the_fix(self) -> bool:
        """Whether the fix took the spelling out (the newest release's count is then the most)."""
        return self.misplaced or self.extra

    def lacked(self) -> str:
        """What the generated code lacks, as ISSUE.md and the log say it."""
        return f"{self.right} (/{self.pattern}/)" if self.pattern else f"`{self.right}`"

    def has(self) -> str:
        """What is wrong with the generated code, as ISSUE.md and the log say it."""
        if self.missing:
            return f"lacks {self.lacked()}"
        if self.misplaced:
            return f"has `{self.wrong}` inside a branch or loop"
        if self.extra:
            return f"has `{self.wrong}` where it should not"
        return f"has `{self.wrong}` where `{self.right}` is expected"


def stage_named(text: str, framework: str = "triton") -> str | None:
    words = [*STAGE_WORDS, ("cuda_source", CUDA_SOURCE_WORDS)] if framework == "tilelang" else STAGE_WORDS
    found = [(m.start(), stage) for stage, said in words if (m := re.search(said, text, re.I))]
    return min(found)[1] if found else None


def stage_of_spelling(wrong: str, right: str) -> str | None:
    """The stage both spellings are written in, where they say it themselves: PTX instructions."""
    return "ptx" if all(PTX_INSTRUCTION.match(s.strip()) for s in (wrong, right)) else None


# "should use `X`, not `Y`", "must lower to `X` instead of `Y`": the first spelling is the right one
MODAL = re.compile(
    r"\b(?:should|must|ought\s+to|supposed\s+to|expected\s+to|needs?\s+to|ha(?:s|ve)\s+to)\s+$", re.I
)


def stated_spelling(texts: list[str], framework: str = "triton") -> StatedSpelling | None:
    """The first "emits `X` where `Y` is expected" the texts state, with the stage named in its
    sentence (else the one both spellings are written in, PTX's instructions; else named anywhere
    in that text); None without both. TileLang's generated code is its CUDA source."""
    for text in texts:
        for pattern, first in SPELLINGS:
            for found in re.finditer(pattern, text, re.I):
                said_first = first
                if first == "wrong" and MODAL.search(text[max(0, found.start() - 40) : found.start()]):
                    said_first = "right"  # what it should emit is named first
                one, other = found.group(1), found.group(2)
                wrong, right = (one, other) if said_first == "wrong" else (other, one)
                around = text[max(0, found.start() - 200) : found.end() + 100]
                named = stage_named(around, framework) or stage_of_spelling(wrong, right)
                stage = named or stage_named(text, framework)  # the sentence's word, the form, the text's
                if stage and wrong.strip() != right.strip():
                    return StatedSpelling(
                        stage, wrong.strip(), right.strip(), " ".join(found.group(0).split())
                    )
    return None


# "Missing `__syncthreads()` after `AtomicAdd`", "`fence.proxy.async` is missing", "lacks a `bar.sync`",
# "does not emit `X`", "no __syncthreads() between the write and the read", "forgets to insert `X`",
# "should have a `X` here, but it does not", "`X` is needed after the copy": a spelling the generated
# code should have and does not, in backticks or a CUDA builtin written bare
MISSED = rf"(?:{CODE_RUN}|{BARE_SPELLING})"
# what the sentence says before a missing spelling when it speaks of the fix or of no bug
NOT_MISSED = re.compile(r"\b(?:the\s+fix|fixed|no\s+longer|correctly|as\s+expected|never\s+needs?)\b", re.I)
# each with whether any spelling in backticks is read so, or only one that reads as generated code
# ("runs without `TRITON_INTERPRET=1`" names no spelling of the generated code)
MISSING = [
    (rf"\bmissing\s+{ARTICLE}{MISSED}", True),
    (rf"{MISSED}\s+(?:is|are|was|were|gets|got)\s+(?:missing|absent|never\s+(?:emitted|generated|inserted|added)|"
     rf"not\s+(?:emitted|generated|inserted|added|placed|present))", True),
    (rf"\b(?:lacks?|lacking|omits?|omitted|drops?|dropped)\s+{ARTICLE}{MISSED}", True),
    (rf"\b(?:does|did|do)\s*n[o']t\s+(?:emit|generate|insert|contain|have|add)\s+{ARTICLE}(?:any\s+)?"
     rf"{MISSED}", True),
    (rf"\bwithout\s+{ARTICLE}(?:any\s+)?{MISSED}", False),
    (rf"\bno\s+{MISSED}\s+(?:is\s+|was\s+)?(?:between|after|before|inserted|emitted|generated|added|at\s+all)\b",
     False),
    (rf"\b(?:forgets?|forgot|forgotten|fails?|failed|neglects?)\s+to\s+(?:insert|emit|generate|add|place)\s+"
     rf"{ARTICLE}{MISSED}", False),
    (rf"\b(?:should|must|needs?\s+to|ought\s+to)\s+(?:have|contain|insert|emit|generate|add)\s+{ARTICLE}{MISSED}"
     rf"[^.\n]{{0,80}}?\b(?:but|however)\b[^.\n]{{0,40}}?(?:\bnot\b|n't\b|\bno\b|\bmissing\b|\blacks?\b)",
     False),
    (rf"\b(?:an?\s+|the\s+){MISSED}\s+(?:is|are)\s+(?:needed|required|necessary)\b", False),
]  # fmt: skip


# "is missing a required synchronization", "without a barrier": what is missing said in words. A
# barrier has spellings of its own at the stages it is read at, and those are counted.
BARRIER_WORDS = (
    r"(?:(?:required|necessary|needed|proper)\s+)?(?:thread\s+|block\s+)?(?:synchroni[sz]ation|barrier|sync)"
)
MISSING_BARRIER = re.compile(
    rf"\b(?:missing|lacks?|lacking|without|omits?|omitted)\s+(?:an?\s+|the\s+|any\s+)?{BARRIER_WORDS}\b"
    # "no sync is inserted between the loops", "does not insert any barrier", "forgets to insert a sync"
    rf"|\bno\s+{BARRIER_WORDS}\s+(?:is\s+|was\s+)?(?:inserted|emitted|generated|added|between|after|before)\b"
    rf"|\b(?:(?:does|did)\s*n[o']t|never|forgets?\s+to|forgot\s+to|fails?\s+to)\s+(?:insert|emit|generate|add)\s+"
    rf"(?:an?\s+|the\s+|any\s+)?{BARRIER_WORDS}\b",
    re.I,
)
BARRIER_SPELLINGS = {
    "cuda_source": r"__syncthreads\(|__sync_thread_partial|__syncwarp\(|\bbar(?:rier)?\.sync\b",
    "ptx": r"\bbar(?:rier)?\.(?:sync|cta\.sync)\b",
}


def stated_missing(
    texts: list[str], framework: str = "triton", *, plain_forms_only: bool = False
) -> StatedSpelling | None:
    """The first spelling the texts say the generated code lacks, with the stage named in its
    sentence, else in that text; None without one. Where it is missing from (after what, in which
    branch) is the text's to say: the draft counts it, and fewer than a release that has the fix
    is the bug. `plain_forms_only` (where an error is quoted or a value stated, which are the bug's):
    only "missing `X`", "`X` is missing", "lacks `X`", "does not emit `X`", never a passing "without X"."""
    for text in texts:
        for pattern, any_spelling in MISSING:
            if plain_forms_only and not any_spelling:
                continue
            for found in re.finditer(pattern, text, re.I):
                spelling = next(g for g in found.groups() if g).strip()
                if not (any_spelling or generated_looking(spelling)):
                    continue
                before, _ = sentence_around(text, found.start(), found.end())
                if NOT_MISSED.search(before):
                    continue  # "the fix inserts", "no longer": said of the fix, not of the bug
                around = text[max(0, found.start() - 200) : found.end() + 100]
                stage = stage_named(around, framework) or stage_named(text, framework)
                if stage is None and PTX_INSTRUCTION.match(spelling):
                    stage = "ptx"
                if stage is None and framework == "tilelang" and generated_looking(spelling):
                    stage = "cuda_source"  # the one generated code a TileLang reporter reads
                if stage and len(spelling) >= 3:
                    return StatedSpelling(stage, "", spelling, " ".join(found.group(0).split()), missing=True)
    for text in texts:
        for found in MISSING_BARRIER.finditer(text):
            around = text[max(0, found.start() - 200) : found.end() + 100]
            stage = stage_named(around, framework) or stage_named(text, framework)
            if stage in BARRIER_SPELLINGS:
                said = " ".join(found.group(0).split())
                return StatedSpelling(
                    stage, "", "a barrier", said, missing=True, pattern=BARRIER_SPELLINGS[stage]
                )
    return None


# the words that call a placement wrong of themselves ("Incorrect `X` placement")
MISPLACED_WORDS = r"(?:incorrect|wrong|invalid|bad|improper|misplaced)"
# "Incorrect `__syncthreads()` placement", "places `X` inside a vectorized loop where only some threads
# run it": a spelling the generated code has inside a branch or loop, where not every thread reaches it
MISPLACED = [
    rf"\b{MISPLACED_WORDS}\s+{CODE_RUN}\s+(?:placement|position|insertion)",
    rf"\b(?:incorrect|wrong|invalid|bad|improper)\s+(?:placement|position|insertion)\s+of\s+{ARTICLE}{CODE_RUN}",
    rf"\b(?:places?|placed|placing|puts?|inserts?|inserted|inserting|emits?|emitted|generates?|generated)\s+"
    rf"{ARTICLE}{CODE_RUN}\s+(?:inside|within|in)\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+){{0,3}}?"
    rf"(?:loop|branch|if|conditional|condition)\b",
    rf"{CODE_RUN}\s+(?:is\s+|gets\s+)?(?:placed|inserted|emitted|generated|misplaced)\s+(?:inside|within|in)\s+"
    rf"(?:an?\s+|the\s+)?(?:[\w-]+\s+){{0,3}}?(?:loop|branch|if|conditional|condition)\b",
]
MISPLACED_STAGES = {"cuda_source"}  # C-like code, whose blocks open with `{` after `if (…)`, `for (…)`


# what the sentence says before the spelling when it is no complaint: what should be, what is not
NO_COMPLAINT = re.compile(
    r"\b(?:should|must|needs?\s+to|ought\s+to|expected\s+to|does\s+not|doesn'?t|did\s+not|didn'?t|"
    r"never|fails?\s+to|would|could|the\s+fix|correctly|as\s+expected)\b",
    re.I,
)
# a word that makes a placement a complaint, where only a verb says where the spelling is
COMPLAINT = re.compile(
    r"\b(?:incorrect(?:ly)?|wrong(?:ly)?|erroneous(?:ly)?|mistakenly|improper(?:ly)?|only\s+some|"
    r"not\s+(?:all|every)|deadlock\w*|hang\w*|diverg\w+|race)\b",
    re.I,
)


def sentence_around(text: str, start: int, end: int) -> tuple[str, str]:
    """The text of the sentence before `start` and after `end`."""
    before = re.split(r"[.!?\n]\s", text[max(0, start - 200) : start])[-1]
    after = re.split(r"[.!?\n]\s", text[end : end + 200])[0]
    return before, after


def stage_near(
    text: str, found: re.Match[str], texts: list[str], framework: str, fallback: str | None
) -> str | None:
    """The stage named within 200 characters of `found`, else anywhere in `texts`, else `fallback`."""
    around = text[max(0, found.start() - 200) : found.end() + 200]
    return stage_named(around, framework) or stage_named(" ".join(texts), framework) or fallback


def stated_misplaced(texts: list[str], framework: str = "triton") -> StatedSpelling | None:
    """The first spelling the texts say the generated code has in the wrong place (inside a branch
    or loop not every thread runs), at a stage whose blocks can be read (TileLang's CUDA source);
    None without one. Counted inside a branch or loop against the newest release, which has its fix."""
    for text in texts:
        for pattern in MISPLACED:
            for found in re.finditer(pattern, text, re.I):
                spelling = found.group(1).strip()
                before, after = sentence_around(text, found.start(), found.end())
                if NO_COMPLAINT.search(before):
                    continue  # what should be, or is not: no complaint
                named = re.match(rf"\W*{MISPLACED_WORDS}", found.group(0), re.I)
                if not named and not COMPLAINT.search(before + found.group(0) + after):
                    continue  # a verb alone says only where it is
                # TileLang's CUDA source: the one generated code a TileLang reporter reads
                stage = stage_near(
                    text, found, texts, framework, "cuda_source" if framework == "tilelang" else None
                )
                if stage in MISPLACED_STAGES and len(spelling) >= 3 and generated_looking(spelling):
                    said = " ".join(found.group(0).split())
                    return StatedSpelling(stage, spelling, "", said, misplaced=True)
    return None


# "Unexpected CTA-wide __syncthreads() inserted", "a redundant `bar.sync`", "`X` is unnecessary",
# "should not emit `X`": a spelling the generated code has and should not, its count after the fix
# (the newest release's) the most
# what may stand between the word and the spelling: its scope ("CTA-wide", "block-level", "warp")
SCOPE_WORDS = r"(?:(?:\w+-[\w-]+|cta|block|thread|warp|full|global|shared|second|additional)\s+){0,2}"
EXTRA_WORDS = r"(?:unexpected|unnecessary|redundant|extra|spurious|superfluous|useless|unneeded)"
EXTRA = [
    rf"\b{EXTRA_WORDS}\s+{SCOPE_WORDS}(?:{CODE_RUN}|{BARE_SPELLING})",
    rf"(?:{CODE_RUN}|{BARE_SPELLING})\s+(?:is|are)\s+(?:{EXTRA_WORDS}|not\s+(?:needed|necessary|required))\b",
    rf"\bshould\s+not\s+(?:emit|generate|insert|contain|have)\s+{ARTICLE}(?:{CODE_RUN}|{BARE_SPELLING})",
]


# what a fix takes out of generated code as one too many: a barrier, a fence, a wait
BARRIER_LIKE = re.compile(r"sync|barrier|\bbar\.|fence|membar|wait|arrive", re.I)


def generated_looking(spelling: str) -> bool:
    """Whether a spelling reads as generated code (a CUDA builtin, a C++ name, an instruction), not
    as the kernel language's own (`T.copy`, `tl.dot`), which the generated code never spells."""
    return not re.fullmatch(r"__\w+__", spelling) and bool(  # a Python dunder is no builtin of CUDA
        re.fullmatch(BARE_SPELLING, spelling)
        or "::" in spelling
        or PTX_INSTRUCTION.match(spelling)
        or re.match(r"(?:bar|barrier|membar|fence|cp|st|ld|mbarrier|wgmma|tcgen05)\.", spelling)
    )


def stated_extra(texts: list[str], framework: str = "triton") -> StatedSpelling | None:
    """The first spelling the texts say the generated code has and should not, at the stage named
    near it (else in the texts; TileLang's is its CUDA source); None without one."""
    for text in texts:
        for pattern in EXTRA:
            for found in re.finditer(pattern, text, re.I):
                spelling = next(g for g in found.groups() if g).strip()
                before, _ = sentence_around(text, found.start(), found.end())
                if NO_COMPLAINT.search(before) or not BARRIER_LIKE.search(spelling):
                    continue
                fallback = (
                    "ptx"
                    if PTX_INSTRUCTION.match(spelling)
                    else "cuda_source"
                    if framework == "tilelang"
                    else None
                )
                stage = stage_near(text, found, texts, framework, fallback)
                if stage and len(spelling) >= 3 and generated_looking(spelling):
                    return StatedSpelling(stage, spelling, "", " ".join(found.group(0).split()), extra=True)
    return None
