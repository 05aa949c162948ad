"""`kregress import URL`: from an upstream compiler issue (or pull request) to a proven draft case,
doing what a triager does by hand, as far as it can, and saying exactly where it stopped.

1. read   the issue through PyGithub (GITHUB_API_URL honoured; GITHUB_TOKEN optional): title, body,
          comments, labels, date, and the pull request that fixed it, if one is linked;
2. extract its Python code blocks and the error it quotes (a traceback's last line, a compiler's
          `error:` line, a mismatch report) or the wrong and right values it states (stated.py),
          into corpus/NAME_draft/: pasted.py holds the code as
          pasted, repro.py a driver that runs it (kregress.pasted), ISSUE.md what was read;
3. locate where it shows: the targets this machine judges (the issue's words and labels first), under
          the release current at the issue's date (the oldest, for an older issue) and the newest one,
          until one FAILs with the quoted error (or at all, when none is quoted);
4. bisect the releases for the first that shows it and the first that no longer does;
5. reduce pasted.py with `kregress reduce --error-matches` (the draft's own copy, NAME_draft_reduced);
6. write  case.toml with the links, the expectation, [[known_bad]] for the range and [reproduce],
          and run `kregress verify` on it.

A draft is evidence, not a case: its kernel is the reporter's. The corpus case is written from it by
hand (corpus/*_draft/ is ignored by git). Nothing is left behind when the issue cannot be drafted.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import requests
import tomli_w
from github import Auth, Github, GithubException

from kregress.bisect.github.client import explain
from kregress.bisect.search import PointVerdict, search
from kregress.bisect.triage.complete import (
    Completion,
    completion_for,
    factories_without_return,
    with_cut_factory_returned,
    with_free_sizes_bound,
)
from kregress.bisect.triage.quotes import (
    COMPILER_ERROR,
    GENERATED_FENCES,
    GENERATED_TEXT,
    PRINTS_GENERATED,
    RAISED,
    code_blocks,
    code_comments,
    error_pattern,
    printed_comments,
    printed_output,
    python_block,
    quoted_errors,
    title_errors,
    words_before_what_varies,
)
from kregress.bisect.triage.releases import PackageReleases, release_mention
from kregress.bisect.triage.repair import repair
from kregress.bisect.triage.stated import (
    StatedSpelling,
    StatedValues,
    stated_by_outputs,
    stated_extra,
    stated_misplaced,
    stated_missing,
    stated_spelling,
    stated_values,
)
from kregress.errors import ExitCode, KregressError
from kregress.frameworks import FRAMEWORKS, framework_of_source
from kregress.judge import Outcome
from kregress.judging_service import CaseRun, InfrastructureError, Memo, RegressOn, item_verdict
from kregress.matrix import load_matrix
from kregress.package_index import PYPI, CandidateError
from kregress.schema import read_toml
from kregress.toolchains import package_index

URL = re.compile(r"^https://github\.com/([\w.-]+/[\w.-]+)/(issues|pull)/(\d+)/?$")
ORDER = ("cpu:interpreter", "cuda:sm_90", "cuda:sm_80", "hip:gfx942", "xpu:pvc", "xpu:dg2")
WORDS = {  # what in an issue's text or labels points at a target, a generation's own words first
    "cuda:sm_100": r"\b(b200|gb200|b100|blackwell|sm_?100a?|tcgen05|tmem)\b",
    "cuda:sm_103": r"\b(b300|gb300|sm_?103a?)\b",
    "cuda:sm_120": r"\b(rtx ?50[6-9]0\w*|rtx pro 6000|sm_?12[01]a?)\b",
    "hip:gfx950": r"\b(mi35[05]\w*|gfx950|cdna ?4)\b",
    "hip:gfx1201": r"\b(rx ?90[67]0\w*|gfx120[01]|rdna ?4)\b",
    "xpu:bmg": r"\b(bmg|battlemage|arc b[5-7]\d0)\b",
    "xpu:lnl": r"\b(lnl|lunar lake)\b",
    "xpu:ptl": r"\b(ptl|panther lake)\b",
    "hip:gfx942": r"\b(amd|rocm|hip|mi300\w*|mi250|gfx9\d\d|cdna)\b",
    "xpu:pvc": r"\b(xpu|intel|pvc|ponte vecchio|max 1[15]\d0)\b",
    "xpu:dg2": r"\b(dg2|arc|a770|a750)\b",
    "cuda:sm_90": r"\b(h100|h200|h800|h20|gh200|hopper|sm_?90a?|wgmma|tma)\b",
    "cuda:sm_80": r"\b(a100|a800|a10g?|a30|a40|a6000|rtx ?30[5-9]0\w*|3090|3080|ampere|sm_?8[06])\b",
    "cuda:sm_89": r"\b(sm_?89|ada|l4|l40s?|rtx ?40[5-9]0|4090|4080)\b",
    "cpu:interpreter": r"\b(interpret(er)?|triton_interpret)\b",
}


class ImportStopped(KregressError):
    """The import stopped at a step: the message says which and why; `code` is how it exits;
    `keep` whether the draft written so far is worth keeping (evidence) or removed."""

    def __init__(self, step: str, why: str, code: ExitCode, keep: bool = False) -> None:
        super().__init__(f"{step}: {why}")
        self.step, self.why, self.code, self.keep = step, why, code, keep


@dataclass
class UpstreamIssue:
    url: str
    repository: str
    number: int
    is_pull: bool
    title: str
    body: str
    comments: list[str]
    labels: list[str]
    created: dt.datetime
    fix: str | None  # the pull request that fixed it, where one is linked (or the PR itself)

    def texts(self) -> list[str]:
        return [self.body, *self.comments]


@dataclass
class Evidence:
    code: str  # the Python code blocks, repaired as a triager would (what is judged)
    blocks: int
    errors: list[str]  # the errors quoted, the most specific first (a traceback's, ..., the title's)
    framework: str
    pasted: str = ""  # the blocks as pasted
    repairs: list[str] = field(default_factory=list)  # what the repair changed, each said
    error: str | None = None  # the quoted error the draft shows (set by locate; first until then)
    stated: StatedValues | None = None  # a wrong value and the expected one, where the issue states them
    spelling: StatedSpelling | None = None  # a wrong spelling of the generated code, at a stage it names
    completion: Completion | None = None  # the kernel to compile where the code runs none
    shows_output: bool = False  # the issue shows the reporter's run printing values, and quotes no error

    def __post_init__(self) -> None:
        if self.error is None and self.errors:
            self.error = self.errors[0]


@dataclass
class Point:
    target: str
    release: str
    outcome: Outcome
    message: str
    failure_kind: str | None = None
    diagnostics: str = ""  # what the compiler printed (its exception may not say it)

    def said(self) -> str:
        """What a quoted error is matched against: the message, then the compiler's diagnostics."""
        return f"{self.message}\n{self.diagnostics}" if self.diagnostics else self.message

    def shown(self) -> str:
        lines = self.message.splitlines()[:2]  # a compile error's second line names the error
        return f"{self.release} on {self.target}: {Outcome(self.outcome).value} {' | '.join(lines)[:240]}"


@dataclass
class Summary:
    """What the import did, printed at the end however it ended."""

    url: str
    steps: list[str] = field(default_factory=list)
    judged: list[Point] = field(default_factory=list)
    draft: Path | None = None  # written by this run

    def add(self, line: str) -> None:
        self.steps.append(line)
        print(f"kregress import: {line}", file=sys.stderr, flush=True)


def parse_url(url: str) -> tuple[str, str, int]:
    found = URL.match(url.strip())
    if not found:
        shapes = "https://github.com/OWNER/REPO/issues/N or /pull/N"
        raise ImportStopped(
            "read", f"{url!r} is not a GitHub issue or pull request URL ({shapes})", ExitCode.USAGE
        )
    return found.group(1), found.group(2), int(found.group(3))


def read_issue(url: str, api_url: str | None, token: str | None) -> UpstreamIssue:
    repository, kind, number = parse_url(url)
    client = Github(auth=Auth.Token(token) if token else None, base_url=api_url or "https://api.github.com")
    try:
        issue = client.get_repo(repository, lazy=True).get_issue(number)
        is_pull = issue.pull_request is not None
        if (kind == "pull") != is_pull:
            what = "a pull request" if is_pull else "an issue"
            why = f"{repository}#{number} is {what}, not what the URL's /{kind}/ says"
            raise ImportStopped("read", why, ExitCode.USAGE)
        comments = [c.body or "" for c in issue.get_comments()]
        fix = url if is_pull else linked_fix(issue)
        return UpstreamIssue(url, repository, number, is_pull, issue.title or "", issue.body or "", comments,
                             [label.name for label in issue.labels], issue.created_at, fix)  # fmt: skip
    except GithubException as exc:
        code = ExitCode.USAGE if exc.status == 404 else ExitCode.GITHUB
        raise ImportStopped("read", explain(exc, f"{repository}#{number}"), code) from None
    except requests.RequestException as exc:
        raise ImportStopped(
            "read", f"GitHub could not be reached: {type(exc).__name__}: {exc}", ExitCode.GITHUB
        ) from None


def issue_from_file(url: str, path: Path) -> UpstreamIssue:
    """The issue as saved beside a machine that cannot reach GitHub: a JSON object with title, body,
    created_at (ISO 8601), and optionally labels (names), comments (bodies, or objects with a body
    as GitHub's API gives them), pull_request (true for a pull request) and fix (the fixing pull
    request's URL)."""
    repository, kind, number = parse_url(url)
    try:
        data = json.loads(path.read_text())
        created = dt.datetime.fromisoformat(str(data["created_at"]).replace("Z", "+00:00"))
        # a comment as its body, or as GitHub's API gives it (an object with its body)
        comments = [str(c["body"] if isinstance(c, dict) else c) for c in data.get("comments", [])]
        labels = [str(n) for n in data.get("labels", [])]
        fix = data.get("fix") or (url if kind == "pull" else None)
        body = str(data.get("body") or "")
        title = str(data["title"])
        is_pull = kind == "pull"
        return UpstreamIssue(url, repository, number, is_pull, title, body, comments, labels, created, fix)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        why = f"{path}: not an issue saved as JSON (title, body, created_at): {type(exc).__name__}: {exc}"
        raise ImportStopped("read", why, ExitCode.USAGE) from None


def linked_fix(issue: object) -> str | None:
    """The merged pull request that the issue's timeline names as closing it, or cross-referencing it."""
    try:
        events = list(issue.get_timeline())  # type: ignore[attr-defined]
    except GithubException:
        return None
    found = None
    for event in events:
        source = getattr(event, "source", None)
        linked = getattr(source, "issue", None) if source else None
        if event.event == "cross-referenced" and linked is not None and linked.pull_request is not None:
            found = (
                linked.html_url if getattr(linked.pull_request, "merged_at", None) or found is None else found
            )
    return found


def extract(issue: UpstreamIssue) -> Evidence:
    """The issue's Python code, repaired as a triager would (kregress.bisect.triage.repair), and
    every error it quotes. A block counts when it imports something or is plainly a kernel's
    (`@triton.jit`, `tl.` calls, TileLang's `T.Kernel`): most kernels are pasted without imports."""
    blocks, quoted, outputs = [], [], []
    outputs_with_prose: list[list[tuple[str, str]]] = []  # each text's output blocks, the prose above
    generated = False  # an output block shows generated code (CUDA source, PTX, LLVM IR, MLIR)
    for text in issue.texts():
        found, prose = code_blocks(text)
        outputs_with_prose.append([])
        for fence, body, before in found:
            if python_block(fence, body):
                blocks.append(body.rstrip() + "\n")
            else:
                quoted.append(body)
                outputs.append(body)
                outputs_with_prose[-1].append((before, body))
                generated |= fence.lower() in GENERATED_FENCES or bool(GENERATED_TEXT.search(body))
        quoted.append(prose)
    if not blocks:
        raise ImportStopped(
            "extract", "the issue holds no Python code block that imports anything or writes a kernel",
            ExitCode.NO_REPRO,
        )  # fmt: skip
    repaired = repair(blocks)
    if (
        any("cut short" in said for said in repaired.repairs)
        and DEFINES_A_KERNEL.search("".join(blocks))
        and not DEFINES_A_KERNEL.search(repaired.source)
    ):
        raise ImportStopped(
            "extract", "the paste was cut inside its kernel: the statement cut short, and the kernel "
            "with it, was dropped, and nothing left defines a kernel to judge",
            ExitCode.NO_REPRO,
        )  # fmt: skip
    if settings := named_settings([issue.title, *issue.texts()], repaired.source):
        lines = "".join(f"os.environ[{name!r}] = {value!r}\n" for name, value in settings.items())
        repaired.source = after_future_imports(repaired.source, f"import os\n\n{lines}\n")
        said = ", ".join(f"{name}={value}" for name, value in settings.items())
        repaired.repairs.append(f"environment: set {said}, as the issue runs the code with it")
    errors = quoted_errors("\n".join(quoted)) + title_errors(issue.title)
    framework = framework_of_source(repaired.source).name
    if framework == "tilelang" and (returned := with_cut_factory_returned(repaired.source)):
        repaired.source, said = returned
        repaired.repairs.append(said)
    if framework == "tilelang" and (sized := with_free_sizes_bound(repaired.source)):
        repaired.source, said = sized
        repaired.repairs.append(said)
    if framework == "tilelang" and (cut := factories_without_return(repaired.source)):
        raise ImportStopped(
            "extract", f"the kernel factory `{cut[0]}` holds a @T.prim_func and returns nothing: the paste "
            "lost its end (its kernel with it), and what TileLang would say of None is not the bug",
            ExitCode.NO_REPRO,
        )  # fmt: skip
    pasted = "\n\n".join(blocks)
    stated = stated_values([issue.title, *quoted, *code_comments(repaired.source)]) or stated_by_outputs(
        outputs_with_prose
    )
    # A spelling in the wrong place, or one too many, is read only where no error is quoted and no
    # value stated (an "unexpected `X`" beside them is theirs), and a missing one there only in plain
    # words ("missing `X`", not a passing "without X"); the title's first, then the texts'.
    order = (
        (stated_spelling, functools.partial(stated_missing, plain_forms_only=True)) if errors or stated
        else (stated_spelling, stated_misplaced, stated_missing, stated_extra)
    )  # fmt: skip
    readers = [(read, texts) for texts in ([issue.title], [issue.title, *quoted]) for read in order]
    spelling = next((found for read, texts in readers if (found := read(texts, framework))), None)
    # the reporter's run ended with output: values printed, or the generated code its paste prints
    shows_output = not errors and (
        any(printed_output(b) for b in [*outputs, *printed_comments(repaired.source)])
        or (generated and bool(PRINTS_GENERATED.search(repaired.source)))
    )
    return Evidence(
        repaired.source, len(blocks), list(dict.fromkeys(errors)), framework, pasted, repaired.repairs,
        stated=stated, spelling=spelling, completion=completion_for(repaired.source, framework),
        shows_output=shows_output,
    )  # fmt: skip


# What defines a kernel (not what calls one): a paste whose cut took all of it has none left to judge
DEFINES_A_KERNEL = re.compile(r"@triton\.(?:jit|autotune)\b|@tilelang\.jit\b|\bT\.prim_func\b|\bT\.Kernel\(")


# A compiler's setting the reporter ran with, as the text writes it: `TRITON_F32_DEFAULT=ieee` on a
# command line, `TRITON_F32_DEFAULT = "ieee"` in a sentence
SETTING = re.compile(r"\b((?:TRITON|AMDGCN|TILELANG|DISABLE_LLVM)_[A-Z0-9_]+)\s*=\s*[\"'`]?([\w.+-]+)")
# Settings that say where output goes, dump it, or choose how the code runs: the draft decides those
NOT_THE_COMPILERS = {
    "TRITON_INTERPRET", "TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_DUMP_DIR", "TRITON_OVERRIDE_DIR",
    "TRITON_KERNEL_DUMP", "TRITON_KERNEL_OVERRIDE", "TRITON_PRINT_AUTOTUNING", "TRITON_REPRODUCER_PATH",
    "TRITON_ALWAYS_COMPILE", "TRITON_DEBUG", "TRITON_LLVM_DEBUG_ONLY", "TRITON_ENABLE_LLVM_DEBUG",
    "TILELANG_CACHE_DIR", "TILELANG_TMP_DIR", "TILELANG_PRINT_ON_COMPILATION",
}  # fmt: skip


def named_settings(texts: list[str], code: str) -> dict[str, str]:
    """The compiler settings the issue says it ran the code with (`TRITON_F32_DEFAULT=ieee`) and the
    code does not set itself, each given one value by the text: a triager runs it so. A setting
    written with two values ("works with tf32, crashes with ieee") is left out: which one fails is
    not said by its spelling."""
    values: dict[str, set[str]] = {}
    for text in texts:
        for found in SETTING.finditer(text):
            name, value = found.group(1), found.group(2)
            if name not in NOT_THE_COMPILERS and name not in code:
                values.setdefault(name, set()).add(value)
    return {name: next(iter(given)) for name, given in sorted(values.items()) if len(given) == 1}


def after_future_imports(source: str, preamble: str) -> str:
    """The source with the preamble first, after its `from __future__` imports (which must lead)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return preamble + source
    future = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    if not future:
        return preamble + source
    lines = source.splitlines(keepends=True)
    end = max(n.end_lineno or n.lineno for n in future)
    return "".join(lines[:end]) + preamble + "".join(lines[end:])


DRIVER = '''\
"""Draft of {url}: the reporter's code is pasted.py (repaired as ISSUE.md says, where it needed to
be; as_pasted.py then keeps it as pasted); this driver runs it.

Evidence to reduce and to rewrite a case from, never a corpus case as it is. `check_pasted` runs the
code to its end (on the CPU in Triton's interpreter); `pasted_kernel` is its first kernel launch,
captured and compiled for a compile target instead of run.
"""

from pathlib import Path

from kregress.pasted import capture_first_launch, judge_stated, run_pasted

PASTED = Path(__file__).with_name("pasted.py")
# The values the issue states (ISSUE.md), judged against what the code prints; None: it states none.
STATED = {stated!r}
# The kernel compiled where the code runs to its end, or fails in its own line, without one
# (ISSUE.md, "Completions").
COMPLETE = {complete!r}


def check_pasted(device: str):
    printed = run_pasted(PASTED, device, COMPLETE)
    if STATED is None:
        return {{}}, {{}}
    return judge_stated(printed, STATED)


def __getattr__(name: str):
    if name == "pasted_kernel":  # captured on first use: only a compile job launches the code
        try:
            return capture_first_launch(PASTED, COMPLETE)
        except AttributeError as exc:  # raised by the code, not this module lacking pasted_kernel
            raise RuntimeError(f"AttributeError: {{exc}}") from exc
    raise AttributeError(name)
'''


def draft_manifest(issue: UpstreamIssue, evidence: Evidence, name: str) -> dict:
    upstream = {"repo": issue.repository, "issue": issue.url} | ({"fix": issue.fix} if issue.fix else {})
    spelling = evidence.spelling
    # the generated code the issue calls wrong: a FAIL wherever the compiled kernel has it; what it
    # says is missing, misplaced or one too many: counted, its bound the newest release's count
    # (`bound_by_newest`)
    # min_count 0 counts and never FAILs, until the newest release's count bounds it
    counted = "min_count" if spelling and spelling.counted_against_newest else "max_count"
    where = {"inside": "branch_or_loop"} if spelling and spelling.misplaced else {}
    ir = [{"name": "ir", "kind": "ir", "kernel": "pasted_kernel", "stage": spelling.stage,
           "pattern": spelling.pattern or re.escape(spelling.right if spelling.missing else spelling.wrong),
           counted: 0, **where}] if spelling else []  # fmt: skip
    return {
        "title": f"{issue.title} (draft of {issue.repository}#{issue.number})"[:200],
        "framework": evidence.framework,
        "timeout": 300,
        "upstream": upstream,
        "expect": [
            {"name": "runs", "kind": "numerics", "check": "check_pasted", "rtol": 0.0, "atol": 0.0},
            {"name": "compiles", "kind": "compiles", "kernel": "pasted_kernel"},
            *ir,
        ],
        "reproduce": {
            "targets": ["cpu:interpreter"],
            "guard": f"draft: not shown yet (kregress import {issue.url})",
        },
    }


def write_draft(folder: Path, issue: UpstreamIssue, evidence: Evidence) -> None:
    folder.mkdir(parents=True)
    (folder / "pasted.py").write_text(evidence.code)
    if evidence.repairs:
        (folder / "as_pasted.py").write_text(evidence.pasted)
    stated = evidence.stated.as_data() if evidence.stated else None
    complete = evidence.completion.as_data() if evidence.completion else None
    (folder / "repro.py").write_text(DRIVER.format(url=issue.url, stated=stated, complete=complete))
    (folder / "case.toml").write_text(tomli_w.dumps(draft_manifest(issue, evidence, folder.name)))
    write_issue_md(folder, issue, evidence)


def write_issue_md(folder: Path, issue: UpstreamIssue, evidence: Evidence) -> None:
    kept = " (the one the draft shows)" if len(evidence.errors) > 1 else ""
    quoted = "\n".join(f"- `{e}`" + (kept if e == evidence.error else "") for e in evidence.errors)
    quoted = quoted or "(none quoted)"
    stated = (
        f"Expected {list(evidence.stated.expected)}, wrong {list(evidence.stated.wrong)}, from: "
        f'"{evidence.stated.said}". The draft\'s `runs` check compares what the code prints with them.'
        if evidence.stated
        else "None."
    )
    if (spelling := evidence.spelling) is not None:
        checked = (
            "counts it: fewer than the newest release has (its fix in) FAILs" if spelling.missing
            else "counts it: more than the newest release (its fix in) FAILs" if spelling.fewer_after_the_fix
            else "FAILs wherever the compiled kernel has it"
        )  # fmt: skip
        stated += (
            f'\n\nThe generated {spelling.stage} {spelling.has()}, from: "{spelling.said}". '
            f"The draft's `ir` check {checked}."
        )
    repairs = (
        "\n".join(f"- {said}" for said in evidence.repairs) + "\n\nThe code as pasted is as_pasted.py."
        if evidence.repairs
        else "None: pasted.py is the code as pasted."
    )
    completions = (
        f"Where the code runs to its end, or fails in its own line, without launching or compiling a kernel: "
        f"{evidence.completion.said()}."
        if evidence.completion
        else "None."
    )
    (folder / "ISSUE.md").write_text(
        f"# {issue.title}\n\n{issue.url} ({'pull request' if issue.is_pull else 'issue'}, opened "
        f"{issue.created:%Y-%m-%d}; labels: {', '.join(issue.labels) or 'none'}; "
        f"fix: {issue.fix or 'none linked'})\n\n"
        f"## The errors quoted\n\n{quoted}\n\n## The values stated\n\n{stated}\n\n"
        f"## Code blocks\n\n{evidence.blocks}, in pasted.py.\n\n"
        f"## Repairs, as a triager would make them\n\n{repairs}\n\n"
        f"## Completions, as a triager would make them\n\n{completions}\n"
    )


def targets_to_try(
    issue: UpstreamIssue, judged_here: dict[str, tuple[str, str]], framework: str
) -> list[str]:
    """Every target this machine judges (name -> kind, backend) that the draft's framework builds,
    those the issue's words and labels name first."""
    text = " ".join([issue.title, *issue.texts(), *issue.labels]).lower()
    named = [t for t, pattern in WORDS.items() if re.search(pattern, text)]
    if "intel-xpu-backend" in issue.repository:
        named = ["xpu:pvc", "xpu:dg2", *named]
    ordered = list(dict.fromkeys([*named, *ORDER]))
    declared = FRAMEWORKS[framework]

    def builds(target: str) -> bool:
        kind, backend = judged_here[target]
        return declared.not_applicable(kind) is None and declared.cannot_build(kind, backend, target) is None

    return [t for t in ordered if t in judged_here and builds(t)]


@dataclass
class Locator:
    """Judges the draft at (target, release) points, each once, and keeps what it saw."""

    corpus: Path
    name: str
    patterns: list[str]  # the quoted errors', most specific first; empty: none quoted
    summary: Summary
    timeout: float
    framework: str = "triton"
    stated: bool = False  # the issue states a wrong value: a mismatch with it shows the bug
    compile_item: str = "compiles"  # judged on compile targets: `ir` where the issue names a spelling
    source: str = ""  # the code judged: an API of the compiler's that it uses and a release lacks
    shows_output: bool = False  # the reporter's run ended with output: an exception is not its bug

    def judge(self, target: str, release: str) -> Point:
        kind = self.item_on(target)
        known = next((p for p in self.summary.judged if (p.target, p.release) == (target, release)), None)
        if known:
            return known
        run = CaseRun(self.corpus, self.name, kind, target, timeout=self.timeout)
        try:
            observation = Memo().observations(run, release, 1)[0]  # the memo bisect and verify share
            record = next(iter(observation.records.values()), None)
            outcome = record.outcome if record else Outcome.SKIP
            message = (record.message if record else None) or ""
            failure_kind = record.failure_kind if record else None
            diagnostics = (record.diagnostics if record else None) or ""
        except InfrastructureError as exc:
            outcome, message = Outcome.SKIP, f"could not be judged: {str(exc).splitlines()[0]}"
            failure_kind, diagnostics = None, ""
        point = Point(target, release, outcome, message, failure_kind, diagnostics)
        self.summary.judged.append(point)
        print(f"kregress import:   {point.shown()}", file=sys.stderr, flush=True)
        return point

    def item_on(self, target: str) -> str:
        compiled = ":" in target and not target.endswith((":interpreter", ":device"))
        return self.compile_item if compiled else "runs"

    def shows(self, point: Point) -> bool:
        # bad under the one rule (RegressOn.FAIL): an ERROR is the draft's (its driver could not run
        # or capture the code, or the paste does not parse), not the compiler's, and would send the
        # search after the wrong thing
        if item_verdict(point.outcome, None, RegressOn.FAIL) != PointVerdict.BAD:
            return False
        if missing_module(point.message, self.framework):
            return False
        if missing_api(point.message, self.source) and not (
            UNSUPPORTED_CONSTRUCT.search(point.message) and self.matching(point)
        ):  # a release that cannot run the code, unless its refusal is what the issue quotes
            return False
        if self.stated and point.failure_kind == "WRONG_RESULT":
            return True
        if self.item_on(point.target) == "ir":  # the spelling the issue names, nothing else
            return point.failure_kind == "IR_MISMATCH"
        if self.shows_output and not self.patterns:  # only the wrong value stated can be the bug
            return False
        if not self.patterns:  # nothing quoted to match: only a failure that is the compiler's
            return compilers_failure(point)
        return self.matching(point) is not None

    def matching(self, point: Point) -> str | None:
        """The most specific quoted error's pattern that the point's message shows."""
        return next((p for p in self.patterns if re.search(p, point.said(), re.S)), None)


# How a run fails that is the compiler's without a quoted error to match: it does not compile, its
# process dies or hangs, it runs out of the hardware's resources.
COMPILER_FAILURES = {"COMPILE_ERROR", "CRASH", "TIMEOUT", "OUT_OF_RESOURCES", "WRONG_RESULT"}
# Raised while the reporter's code runs: the compiler's exceptions (Triton's, its interpreter's, TVM's
# under TileLang), and an assertion of the reporter's (a wrong value, the usual way a repro says so).
# Each can be the code's own too: with nothing quoted, a release that runs it without one must exist.
COMPILERS_EXCEPTIONS = re.compile(
    r"^RUNTIME_ERROR: (CompilationError|OutOfResources|TVMError|InternalError|AssertionError"
    r"|InterpreterError)\b|LLVM ERROR"
)


def failure_pattern(point: Point) -> str:
    """The failure a point shows, as a pattern to find it by elsewhere: a compiler's `error:` line
    (nvcc's, ptxas's), else the exception raised, else how the run ended (a crash, a timeout), in
    words that do not vary between releases (numbers, quoted names and paths dropped)."""
    lines = [re.sub(r"^(\[[^\]]*\]|[A-Z_]+:)\s*", "", line).strip() for line in point.message.splitlines()]
    for line in lines:
        if (said := COMPILER_ERROR.match(line)) and not RAISED.match(said.group(1)):
            words = words_before_what_varies(said.group(1))
            if len(words) >= 8:
                return re.escape(words[:60])
    for line in lines:
        if RAISED.match(line) and (found := error_pattern(line)):
            return found
    first = point.message.splitlines()[0] if point.message else str(point.failure_kind)
    return r"\d+".join(re.escape(part) for part in re.split(r"\d+", first))


def compilers_failure(point: Point) -> bool:
    """Whether a FAIL is the compiler's by how it failed, not the reporter's code's (a TypeError of
    its own, a library it calls refusing its arguments)."""
    if point.failure_kind in COMPILER_FAILURES:
        return True
    return point.failure_kind == "RUNTIME_ERROR" and bool(COMPILERS_EXCEPTIONS.search(point.message))


MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
MISSING_NAME = re.compile(r"ImportError: cannot import name '(\w+)' from '([\w.]+)'")


def missing_module(message: str, framework: str) -> str | None:
    """What the reporter's code imports that this machine lacks, unless the framework's own: a
    package not installed here (flash_attn, a model's own package), or a name an installed package
    no longer has (torch._inductor's internals, which Inductor's generated code imports). The code
    cannot run here, which is not the bug."""
    if found := MISSING_MODULE.search(message):
        module, shown = found.group(1), found.group(1)
    elif found := MISSING_NAME.search(message):
        module, shown = found.group(2), f"{found.group(1)} from {found.group(2)}"
    else:
        return None
    top = module.split(".")[0]
    return None if top in FRAMEWORKS[framework].imports or top in FRAMEWORKS[framework].modules else shown


MISSING_API = re.compile(r"module '([\w.]+)' has no attribute '(\w+)'")
MISSING_KEYWORD = re.compile(r"(\w+)\(\) got an unexpected keyword argument '(\w+)'")
# A release saying that what the code uses is gone: "Block pointers have been removed in favor of
# the tensor descriptor API" (Triton 3.9 on `tl.make_block_ptr`).
REMOVED_API = re.compile(
    r"([A-Za-z_][\w. `'-]{2,60}?) (?:has|have) been removed in favou?r of ([\w. `'-]{2,60})"
)


# A frontend refusing Python syntax it does not compile yet (Triton's before list comprehensions)
UNSUPPORTED_CONSTRUCT = re.compile(r"unsupported AST node type: (\w+)")


def missing_api(message: str, source: str) -> str | None:
    """An API of a module the code uses that this release does not have yet (or any more), as
    `module.name`: the code cannot run under it, which says nothing of the bug (`tl.atomic_load`
    before the release that added it), one the release says it removed in favor of another, or
    Python syntax the code uses that its frontend does not compile yet (a list comprehension). An
    attribute an object of the compiler's lacks (the interpreter's builder missing a type) is not
    this: that can be the bug."""
    keyword = MISSING_KEYWORD.search(message)
    if keyword is not None and re.search(rf"\b{keyword.group(2)}\s*=", source):
        return f"{keyword.group(1)}({keyword.group(2)}=...)"  # a keyword the release lacks yet
    construct = UNSUPPORTED_CONSTRUCT.search(message)
    if construct is not None and construct.group(1) in node_types(source):
        return f"the language construct {construct.group(1)} (unsupported AST node type)"
    removed = REMOVED_API.search(message)
    if removed is not None:  # the release's own word: what it removed cannot be the bug's
        what, instead = removed.group(1).strip(), removed.group(2).strip(" '`.")
        return f"{what} (removed in favor of {instead})"
    found = MISSING_API.search(message)
    if found is None or not re.search(rf"\.{found.group(2)}\b", source):
        return None
    return f"{found.group(1)}.{found.group(2)}"


@functools.lru_cache(maxsize=8)
def node_types(source: str) -> frozenset[str]:
    """The syntax node types the code uses, parsed once per code (every judged point asks)."""
    try:
        return frozenset(type(n).__name__ for n in ast.walk(ast.parse(source)))
    except SyntaxError:
        return frozenset()


def locate(
    locator: Locator, targets: list[str], releases: PackageReleases, issue: UpstreamIssue
) -> tuple[str, str]:
    """The first (target, release) where the draft shows the quoted error."""
    said_named: set[str] = set()
    fallback: tuple[str, str] | None = None
    for target in targets:
        pkg = releases.package_of(target)
        versions = releases.of(target)
        if not versions:
            continue
        dates = releases.dated(target)
        at_date = [v for v in versions if v in dates and dates[v] <= issue.created]
        # The release the reporter ran first, where the issue names one; then the one current when
        # it was opened (an issue older than every release judged here, reported on a nightly or
        # before the oldest release kregress installs, shows if anywhere in the oldest); the newest.
        mention = release_mention(issue.body, pkg, versions)
        named = mention.release if mention else None
        if named is not None and named not in said_named:
            said_named.add(named)
            locator.summary.add(f"locate: the issue names {named} (the first release it names): tried first")
        first = [named] if named else []
        start = (at_date[-1:] or versions[:1])[0]
        ends = list(dict.fromkeys([*first, start, versions[-1]]))
        showing = [release for release in ends if locator.shows(locator.judge(target, release))]
        if not showing:
            reporters = named if mention and not mention.commit_build else None
            showing = next_release_showing(locator, target, versions, start, reporters)
        if showing and (locator.patterns or locator.stated or len(showing) < len(ends)):
            return target, showing[0]
        # With nothing quoted to match, a failure at both ends may be the code's own (code only the
        # interpreter can run, compiled): a target where a release runs it without the failure first.
        if showing and fallback is None:
            fallback = target, showing[0]
    if fallback is not None:
        return fallback
    missing = sorted(
        {m for p in locator.summary.judged if (m := missing_module(p.message, releases.framework))}
    )
    if missing:
        raise ImportStopped(
            "locate", f"the code imports {', '.join(missing)}, which is not installed here (another "
            "package's, or a name it no longer has; not the compiler's): reduce it to the kernel by hand",
            ExitCode.NO_REPRO,
        )  # fmt: skip
    lacking = sorted({m for p in locator.summary.judged if (m := missing_api(p.message, locator.source))})
    lacked = (
        f" (where it failed, the release lacks {', '.join(lacking)}, which the code uses)" if lacking else ""
    )
    raise ImportStopped(
        "locate", f"the code shows the quoted error nowhere this machine can judge{lacked}: "
        + "; ".join(p.shown() for p in locator.summary.judged), ExitCode.NO_REPRO,
    )  # fmt: skip


RELEASES_TRIED_AFTER_THE_DATE = 3  # where the release current at the issue's date does not show it


COUNTED = re.compile(r"\[[^\]]+\] (\d+)")


def bound_by_newest(
    locator: Locator, folder: Path, targets: list[str], releases: PackageReleases, spelling: StatedSpelling
) -> list[str]:
    """For a spelling the issue says the generated code lacks (or has where it should not, inside a
    branch or loop or at all): its count in the newest release's code (its fix in, the issue closed by
    it) becomes the `ir` check's least count (or most), so that a release with fewer (more) shows the
    bug. Counted on one compile target alone (another target's code can count otherwise), which is
    the one target searched: the first whose newest release counts it, in the order the issue's words
    give (sm_90's code lowers through other passes than sm_80's, and its fix may be on one alone)."""
    compiled = [t for t in targets if locator.item_on(t) == "ir"]
    if not compiled:
        raise ImportStopped("locate", f"the issue says the generated code {spelling.has()}, and no target "
                            "here compiles the code to read it", ExitCode.NO_REPRO)  # fmt: skip
    bound = "max_count" if spelling.fewer_after_the_fix else "min_count"
    tried: list[str] = []  # on each target that could not bound the count, why
    for target in compiled:
        versions = releases.of(target)
        if not versions:
            tried.append(f"on {target}, no release of {releases.package_of(target)} to count the spelling in")
            continue
        try:
            count_bound_at(locator, folder, target, versions[-1], bound)
        except ImportStopped as exc:
            tried.append(f"on {target}, {exc.why}")
            continue
        for why in tried:
            locator.summary.add(f"locate: {why}")
        return [target]
    raise ImportStopped("locate", "; ".join(tried), ExitCode.NO_REPRO)


def count_bound_at(locator: Locator, folder: Path, target: str, newest: str, bound: str) -> None:
    """The draft's `ir` check's `bound` (min_count or max_count), set to the count at `newest` on
    `target`."""
    point = locator.judge(target, newest)
    locator.summary.judged.remove(point)  # judged with the bound of 0: its key is another case's after
    counts = [int(n) for n in COUNTED.findall(point.message.split(":", 1)[-1])]
    manifest = read_toml(folder / "case.toml")
    ir = next(e for e in manifest["expect"] if e["name"] == "ir")
    if point.outcome != Outcome.PASS or not counts:
        raise ImportStopped("locate", f"the newest release could not count /{ir['pattern']}/ in the "
                            f"generated code: {point.shown()}", ExitCode.NO_REPRO)  # fmt: skip
    if bound == "min_count" and min(counts) == 0:
        raise ImportStopped("locate", f"the newest release's {ir['stage']} has no /{ir['pattern']}/ "
                            f"either ({point.shown()}): what its fix added cannot be counted here",
                            ExitCode.NO_REPRO)  # fmt: skip
    count = min(counts) if bound == "min_count" else max(counts)
    ir.pop("min_count", None)  # the draft's 0, which counted without failing
    ir[bound] = count
    (folder / "case.toml").write_text(tomli_w.dumps(manifest))
    shows = "fewer" if bound == "min_count" else "more"
    locator.summary.add(f"locate: {newest} has {count} of /{ir['pattern']}/ in its {ir['stage']} on "
                        f"{target}: {shows} shows the bug")  # fmt: skip


def held(point: Point) -> bool:
    """Whether the point ran the code without the bug's failure, under the one rule."""
    return item_verdict(point.outcome, point.failure_kind, RegressOn.FAIL) == PointVerdict.GOOD


def next_release_showing(
    locator: Locator, target: str, versions: list[str], start: str, reporters: str | None = None
) -> list[str]:
    """Where neither the release current at the issue's date nor the newest shows the bug (the
    first does not build or load here, or runs clean while the reporter ran a nightly or a commit's
    build, which the next release holds), the releases after it, in order, until one shows it: a
    triager tries them. Only for a failure the issue pins down (a quoted error, a stated value or
    spelling), and never past the reporter's own release (`reporters`, named as a release, not as
    a commit's build) seen to run the code clean. The release that shows it, else none."""
    if not (locator.patterns or locator.stated or locator.compile_item == "ir"):
        return []
    if locator.shows(locator.judge(target, start)) or locator.shows(locator.judge(target, versions[-1])):
        return []
    after = versions[versions.index(start) + 1 : -1][:RELEASES_TRIED_AFTER_THE_DATE]
    if reporters is not None and held(locator.judge(target, reporters)):
        after = [r for r in after if versions.index(r) < versions.index(reporters)]
    return next(([r] for r in after if locator.shows(locator.judge(target, r))), [])


@dataclass
class ReleaseSpan:
    """Where the draft shows its error among `versions`: from `first_bad` up to (not including)
    `fixed` (len(versions) when no release is without it)."""

    first_bad: int
    fixed: int
    unjudged: list[Point]  # releases beside a boundary that could not run the code (a skip)
    disagreeing: list[Point]  # releases on the wrong side of a boundary: not one change
    # after the last release that shows it: where the releases up to `fixed` fail otherwise (the
    # quoted error gone, another failure in its place), the fix is in one of them or in `fixed`
    earliest_fixed: int

    def fix_pinned(self) -> bool:
        return self.earliest_fixed >= self.fixed

    def shown(self, versions: list[str]) -> str:
        last = self.fixed - 1 if self.fix_pinned() else self.earliest_fixed - 1
        said = f"shows from {versions[self.first_bad]} … {versions[last]}; "
        if self.fixed >= len(versions) and not self.fix_pinned():
            said += (
                f"fixed at {versions[self.earliest_fixed]} or later (the releases from "
                f"{versions[self.earliest_fixed]} fail otherwise and none runs it clean: which one fixed it, "
                "if any, is not known)"
            )
        elif self.fixed >= len(versions):
            said += "no release without it"
        elif self.fix_pinned():
            said += f"first fixed {versions[self.fixed]}"
        else:
            said += (
                f"fixed between {versions[self.earliest_fixed]} and {versions[self.fixed]} (the releases "
                f"from {versions[self.earliest_fixed]} could not tell: which one fixed it is not known)"
            )
        if self.unjudged:
            said += "; could not tell at " + "; ".join(p.shown() for p in self.unjudged)
        if self.disagreeing:
            said += "; not one change, these disagree: " + "; ".join(p.shown() for p in self.disagreeing)
        return said


def release_span(locator: Locator, target: str, versions: list[str], at: int) -> ReleaseSpan:
    """Both boundaries around `at` (a release that shows the error) by the bisect search core: a
    release that shows it is on the bug's side, one judged PASS is off it, and anything else (an
    ERROR, another error, a module missing here) cannot tell, so the search steps round it as `git
    bisect skip` does instead of reading it as either side."""

    def side(index: int, showing: PointVerdict, passing: PointVerdict) -> PointVerdict:
        point = locator.judge(target, versions[index])
        if locator.shows(point):
            return showing
        # held under the one rule (an XPASS too); anything else cannot tell
        return passing if held(point) else PointVerdict.SKIP

    # older: virtual 0 is "before every release", virtual i is versions[i - 1], the last is `at`
    older = search(at + 2, lambda now: {i: side(i - 1, PointVerdict.BAD, PointVerdict.GOOD) for i in now})
    # newer: virtual i is versions[at + i], the last is "after every release"
    newer = search(
        len(versions) - at + 1,
        lambda now: {i: side(at + i, PointVerdict.GOOD, PointVerdict.BAD) for i in now},
    )
    judged = {p.release: p for p in locator.summary.judged if p.target == target}

    def points(indices: list[int]) -> list[Point]:
        return [judged[versions[i]] for i in indices if 0 <= i < len(versions) and versions[i] in judged]

    fixed = at + newer.first_bad
    shown = [
        i
        for i in range(at, min(fixed, len(versions)))
        if versions[i] in judged and locator.shows(judged[versions[i]])
    ]
    return ReleaseSpan(
        first_bad=older.first_bad - 1,
        fixed=fixed,
        unjudged=points([i - 1 for i in older.ambiguous[:-1]] + [at + i for i in newer.ambiguous[:-1]]),
        disagreeing=points([i - 1 for i in older.contradictions] + [at + i for i in newer.contradictions]),
        earliest_fixed=max(shown, default=at) + 1,
    )


def final_manifest(folder: Path, target: str, kind: str, versions: list[str], first_bad: int, fixed: int,
                   issue: UpstreamIssue, error: str | None, held: set[str],
                   fails_with: str | None = None, unpinned: str | None = None) -> dict:  # fmt: skip
    """The case.toml of a located draft: its expectation, known_bad range and reproduce ends.
    `unpinned`: the first release after the last that shows the error, where the fix is not known."""
    manifest = read_toml(folder / "case.toml")
    manifest["expect"] = [e for e in manifest["expect"] if e["name"] == kind]
    package = versions[0].split("==")[0]
    low = versions[first_bad].split("==")[1]
    bound = f">={low}" + (f",<{versions[fixed].split('==')[1]}" if fixed < len(versions) else "")
    reason = (error or "the reporter's code fails here")[:200]
    framework = manifest["framework"]
    if package in (framework, f"{framework}-xpu"):  # a known_bad range is on the framework's version
        manifest["known_bad"] = [{"link": issue.url, "reason": reason, "expect": [kind], "targets": [target],
                                  "versions": bound}]  # fmt: skip
    reproduce: dict = {"targets": [target], "bad": [versions[first_bad]], "must_fail": [kind]}
    if fails_with:  # verify holds the bad end to the issue's failure, as import did
        reproduce["fails_with"] = fails_with
    # good ends only where the release was judged and held (one that could not be built here is no
    # evidence either way)
    if first_bad > 0 and versions[first_bad - 1] in held:  # a regression: the release before it
        reproduce["good"] = [versions[first_bad - 1]]
    if fixed < len(versions) and versions[fixed] in held:
        reproduce["good"] = [*reproduce.get("good", []), versions[fixed]]
    if "good" not in reproduce and unpinned is not None:
        reproduce["no_good"] = (
            f"the {package} releases from {unpinned} fail otherwise, and none judged runs it clean"
        )
    elif "good" not in reproduce:
        reproduce["no_good"] = f"every {package} release judged shows it (still open upstream?)"
    manifest["reproduce"] = reproduce
    return manifest


def verify(corpus: Path, name: str) -> tuple[bool, str]:
    done = subprocess.run([sys.executable, "-m", "kregress.cli", "verify", name, "--corpus", str(corpus)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    return done.returncode == 0, (done.stdout + done.stderr).strip()


def reduce_draft(corpus: Path, name: str, kind: str, target: str, release: str, pattern: str | None,
                 summary: Summary) -> None:  # fmt: skip
    """Shrink pasted.py in a copy (NAME_reduced); the draft keeps the code as pasted."""
    if pattern is None:
        summary.add("reduce: skipped, no error quoted to keep (--error-matches needs one)")
        return
    out = corpus / f"{name}_reduced"
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "kregress.cli", "reduce", str(corpus / name), "-e", kind, "-t", target,
               "--toolchain", release, "--error-matches", pattern, "--file", "pasted.py",
               "--out", str(out)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    before = len((corpus / name / "pasted.py").read_text().splitlines())
    if done.returncode == 0:
        after = len((out / "pasted.py").read_text().splitlines())
        summary.add(f"reduce: pasted.py {before} → {after} lines (in {out.name})")
    else:
        said = (done.stdout + done.stderr).strip().splitlines()
        summary.add(f"reduce: stopped (exit {done.returncode}): {said[-1] if said else ''}")


def default_name(issue: UpstreamIssue) -> str:
    repo = issue.repository.split("/")[1].lower()
    short = {"intel-xpu-backend-for-triton": "xpu"}.get(repo, repo)
    return re.sub(r"[^a-z0-9_]", "_", f"{short}_{issue.number}")


def run_import(args: argparse.Namespace, summary: Summary) -> ExitCode:
    token = os.environ.get("GITHUB_TOKEN") or None
    issue = (
        issue_from_file(args.url, args.issue_file)
        if args.issue_file
        else read_issue(args.url, args.api_url or os.environ.get("GITHUB_API_URL"), token)
    )
    summary.add(f"read {issue.repository}#{issue.number}: {issue.title!r}, {len(issue.comments)} comments, "
                f"labels {issue.labels or 'none'}, opened {issue.created:%Y-%m-%d}, "
                f"fix {issue.fix or 'none linked'}")  # fmt: skip
    evidence = extract(issue)
    summary.add(f"extract: {evidence.blocks} code block(s), {len(evidence.code.splitlines())} lines of "
                f"{evidence.framework}; errors quoted: {' | '.join(evidence.errors) or 'none'}")  # fmt: skip
    for said in evidence.repairs:
        summary.add(f"repair: {said}")
    if (spelling := evidence.spelling) is not None:
        summary.add(f'stated: the generated {spelling.stage} {spelling.has()} ("{spelling.said}")')
    if evidence.stated:
        summary.add(f"stated: expected {list(evidence.stated.expected)}, wrong {list(evidence.stated.wrong)} "
                    f"(\"{evidence.stated.said}\")")  # fmt: skip
    if evidence.completion:
        when = "if the code runs no kernel (or fails in its own line first)"
        summary.add(f"complete: {when}, {evidence.completion.said()}")
    name = args.name or default_name(issue)
    draft = f"{name}_draft"
    folder = args.corpus / draft
    if folder.exists():
        raise ImportStopped("draft", f"{folder} exists: remove it or give --name", ExitCode.USAGE, keep=True)
    write_draft(folder, issue, evidence)
    summary.draft = folder
    summary.add(f"draft: {folder}/ (pasted.py as pasted, repro.py, case.toml, ISSUE.md)")
    quoted: dict[str, str] = {}  # the errors' patterns, the most specific first -> its error
    for error in evidence.errors:
        if (found := error_pattern(error)) is not None:
            quoted.setdefault(found, error)
    # A quote cut to its class ("CompilationError: at 4:4:", the message on lines the paste lost)
    # would match any failure of that class: it is no quote.
    bare = [error for found, error in quoted.items() if re.fullmatch(r"\w+", found)]
    quoted = {found: error for found, error in quoted.items() if not re.fullmatch(r"\w+", found)}
    if bare and not quoted:  # beside another quote, a heading it was under ("InternalError: Traceback")
        summary.add(f"extract: too little of {' | '.join(bare)} is quoted to tell it from another error of "
                    "its class: taken as no quote")  # fmt: skip
    patterns = list(quoted)
    matrix = load_matrix(args.matrix)
    judged_here = {name: (t.kind, t.backend) for name, t in matrix.named.items() if t.kind != "device"}
    targets = [
        t for t in (args.target or targets_to_try(issue, judged_here, evidence.framework)) if t in judged_here
    ]
    locator = Locator(
        args.corpus, draft, patterns, summary, args.timeout, evidence.framework, evidence.stated is not None,
        "ir" if evidence.spelling else "compiles", evidence.code, evidence.shows_output,
    )  # fmt: skip
    if evidence.shows_output:
        summary.add("extract: the issue shows the reporter's run ending with printed output and quotes "
                    "no error: only a wrong value it states shows the bug, never an exception")  # fmt: skip
    index = args.index_url or package_index() or PYPI
    releases = PackageReleases(index, evidence.framework, args.package)
    try:
        if evidence.spelling and evidence.spelling.counted_against_newest:
            targets = bound_by_newest(locator, folder, targets, releases, evidence.spelling)
        target, release = locate(locator, targets, releases, issue)
    except CandidateError as exc:
        raise ImportStopped("locate", str(exc), ExitCode.INFRASTRUCTURE) from None
    kind = locator.item_on(target)
    located = next(p for p in summary.judged if (p.target, p.release) == (target, release))
    pattern = locator.matching(located)
    anything_quoted = bool(locator.patterns or evidence.stated or evidence.spelling)
    if pattern is not None:  # the most specific error quoted that the draft shows is the one kept
        evidence.error = quoted[pattern]
        locator.patterns = [pattern]
        write_issue_md(folder, issue, evidence)
    summary.add(f"locate: shows on {target} under {release}" + (f" (/{pattern}/)" if pattern else ""))
    if not anything_quoted and kind != "ir":
        # Nothing quoted: the failure found is the one bisected, so that a release failing otherwise
        # (an API it lacks yet, the paste's own code) is stepped round, never read as the bug.
        locator.patterns = [failure_pattern(located)]
        summary.add(f"locate: nothing quoted; bisecting the failure it shows there (/{locator.patterns[0]}/)")
    versions = releases.of(target)
    span = release_span(locator, target, versions, versions.index(release))
    first_bad, fixed = span.first_bad, span.fixed
    summary.add(f"bisect: {span.shown(versions)}")
    held_releases = {p.release for p in summary.judged if p.target == target and held(p)}
    if not anything_quoted and not held_releases:
        raise ImportStopped(
            "bisect", f"with no error quoted, the code fails on {target} in every release that runs it: that "
            "cannot be told from the code's own failure (code "
            "that only the interpreter can run, compiled; an assertion the reporter got wrong). Quote the "
            "error, or give a target where a release runs it", ExitCode.NOT_PROVEN, keep=True,
        )  # fmt: skip
    if not args.no_reduce:
        reduce_draft(args.corpus, draft, kind, target, release, pattern, summary)
    shown = evidence.error
    if pattern is None and evidence.stated is not None:  # located by the value it states
        shown = f"a wrong value: {evidence.stated.said}"
    if kind == "ir" and (spelling := evidence.spelling) is not None:
        shown = f"the generated {spelling.stage} {spelling.has()}: {spelling.said}"
    fails_with = (
        "^IR_MISMATCH" if kind == "ir"
        else "^WRONG_RESULT" if pattern is None and evidence.stated is not None
        else locator.patterns[0] if locator.patterns else None
    )  # fmt: skip
    unpinned = None if span.fix_pinned() else versions[span.earliest_fixed]
    manifest = final_manifest(
        folder, target, kind, versions, first_bad, fixed, issue, shown, held_releases, fails_with, unpinned
    )
    if "known_bad" not in manifest:
        summary.add(f"known_bad: left out: its range would be on {evidence.framework}'s version, and the "
                    f"releases judged are {versions[0].split('==')[0]}'s")  # fmt: skip
    (folder / "case.toml").write_text(tomli_w.dumps(manifest))
    proven, said = verify(args.corpus, draft)
    verdicts = [line for line in said.splitlines() if line.startswith(("PROVEN", "NOT PROVEN"))]
    last = " ".join(verdicts) or (said.splitlines()[-1] if said else "")
    if not proven:
        raise ImportStopped("verify", f"not proven: {last}", ExitCode.NOT_PROVEN, keep=True)
    summary.add(f"verify: PROVEN ({last})")
    return ExitCode.OK


def command_import(args: argparse.Namespace) -> ExitCode:
    summary = Summary(args.url)
    try:
        code = run_import(args, summary)
    except ImportStopped as exc:
        draft = summary.draft
        if draft is not None and not exc.keep:  # nothing half-written is left
            shutil.rmtree(draft, ignore_errors=True)
            shutil.rmtree(draft.parent / f"{draft.name}_reduced", ignore_errors=True)
        print(f"kregress import: stopped at {exc.step}: {exc.why}", file=sys.stderr)
        if draft is not None and exc.keep:
            print(f"kregress import: the draft so far is kept in {draft}", file=sys.stderr)
        return exc.code
    print(textwrap.indent("\n".join(summary.steps), "  "))
    return code


def register(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser(
        "import",
        help="turn an upstream compiler issue into a proven draft case (read, extract, locate, bisect, "
        "reduce, verify)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 a proven draft, 1 drafted but not proven (the draft is kept), 3 GitHub or a "
        "toolchain failed, 64 usage (not an issue or PR URL, the draft exists), 65 the issue holds no "
        "code that shows its error here (nothing is left).",
    )
    command.add_argument("url", help="an issue or pull request of a compiler repository")
    command.add_argument("--name", help="the draft's name (default: REPO_NUMBER), written as NAME_draft")
    command.add_argument("-t", "--target", action="append", help="only these targets (repeatable)")
    command.add_argument("--package", help="the package whose releases are judged (default: the framework's)")
    command.add_argument("--index-url", help="the package index of its releases (default: PyPI)")
    command.add_argument("--api-url", help="GitHub's API (default: $GITHUB_API_URL, else api.github.com)")
    command.add_argument(
        "--issue-file", type=Path, metavar="JSON",
        help="read the issue from this file instead of GitHub (for a machine that cannot reach it): title, "
        "body, created_at, and optionally labels, comments, pull_request, fix",
    )  # fmt: skip
    command.add_argument("--no-reduce", action="store_true", help="leave pasted.py as it is")
    command.add_argument(
        "--timeout", type=float, default=300.0, help="seconds per judged point (default 300)"
    )
    command.add_argument("--matrix", type=Path, help="matrix file (default: the packaged one)")
    command.add_argument("--corpus", type=Path, default=Path("corpus"), help="default: corpus")
    command.set_defaults(run=command_import)
