"""`kregress import`: from an issue on a (fake) GitHub to a proven draft, with a compiler made here
and released on a local index (tests/compiler_fixture.py); and the inputs it must refuse, each with
its exit code and nothing left behind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomllib
from compiler_fixture import BAD, GOOD, Step, build_release, local_index, make_compiler_repo
from fake_github import FakeGitHub, serving

from kregress.bisect.triage.importer import (
    ImportStopped,
    Locator,
    Point,
    Summary,
    UpstreamIssue,
    extract,
    missing_api,
    targets_to_try,
)
from kregress.bisect.triage.quotes import error_pattern, quoted_error, quoted_errors
from kregress.bisect.triage.releases import named_release
from kregress.judge import Outcome

REPO = "example/tinycc"
HISTORY = [
    Step("Initial compiler", GOOD, release="0.1"),
    Step("Release 0.2", GOOD, release="0.2"),
    Step("Vectorize scale (#42)", BAD),
    Step("Release 0.3", BAD, release="0.3"),
    Step("Release 0.4", BAD, release="0.4"),
]

MISMATCH_ISSUE = """Since 0.3 `tinycc.scale` gets the last element wrong.

```python
import numpy as np
import tinycc

x = np.arange(4.0)
out = tinycc.scale(x)
expected = x * 2
assert np.array_equal(out, expected), f"Mismatched elements: {out} vs {expected}"
print("fine")
```

It fails with

```
Traceback (most recent call last):
  File "repro.py", line 8, in <module>
AssertionError: Mismatched elements: [0. 2. 4. 7.] vs [0. 2. 4. 6.]
```
"""

NO_CODE_ISSUE = "scale() is wrong on my machine since yesterday, no idea why. Please help!"

NEVER_SHOWS_ISSUE = """```python
import numpy as np
import tinycc

assert tinycc.scale(np.zeros(2)).sum() == 0
```

```
AssertionError: zeros are not kept
```
"""


# The reporter's own assertion is wrong (scale doubles): it fails in every release, and nothing is quoted.
ALWAYS_FAILS_ISSUE = """```python
import numpy as np
import tinycc

out = tinycc.scale(np.arange(4.0))
assert out[1] == 3.0
```
"""


NEEDS_ANOTHER_PACKAGE_ISSUE = """```python
import numpy as np
import tinycc
from the_reporters_model import attention_layer

print(attention_layer(tinycc.scale(np.arange(4.0))))
```
"""

NEEDS_A_NAME_GONE_ISSUE = """```python
import numpy as np
import tinycc
from json.decoder import AsyncCompile

print(tinycc.scale(np.arange(4.0)), AsyncCompile)
```
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("tinycc")
    repo, shas = make_compiler_repo(root / "repo", HISTORY)
    released = [sha for sha, step in zip(shas, HISTORY, strict=True) if step.release]
    wheels = [build_release(repo, sha, root / "wheels") for sha in released]
    with local_index(root / "index", wheels) as url:
        yield url


SHARED: dict[str, Path] = {}


@pytest.fixture(scope="module", autouse=True)
def shared_environments(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One folder of toolchain environments for the imports of this module (per worker), as a
    machine has one: an environment is keyed by its toolchain and its index, so a release is
    installed once, not once per test; each import keeps a cache (and a memo) of its own besides."""
    SHARED["envs"] = tmp_path_factory.mktemp("tinycc-envs")


def run_import(
    tmp_path: Path, fake: FakeGitHub, index: str, url: str, *args: str
) -> subprocess.CompletedProcess:
    (tmp_path / "corpus").mkdir(exist_ok=True)
    (tmp_path / "cache").mkdir(exist_ok=True)
    if not (tmp_path / "cache" / "envs").exists():
        (tmp_path / "cache" / "envs").symlink_to(SHARED["envs"], target_is_directory=True)
    env = {**os.environ, "GITHUB_API_URL": fake.url, "KREGRESS_INDEX_URL": index,
           "KREGRESS_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip
    env.pop("GITHUB_TOKEN", None)  # a public repository needs none
    command = [sys.executable, "-m", "kregress.cli", "import", url, "--corpus", str(tmp_path / "corpus"),
               "--package", "tinycc", *args]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=900, check=False)


def opened(fake: FakeGitHub, number: int, body: str, title: str = "scale is wrong", **more: object) -> str:
    fake.repository(REPO).opened[number] = {
        "title": title,
        "body": body,
        "created_at": "2026-03-01T00:00:00Z",
        **more,
    }
    return f"https://github.com/{REPO}/issues/{number}"


@pytest.mark.slow  # builds an environment per release judged
def test_an_issue_with_a_quoted_mismatch_becomes_a_proven_draft(tmp_path: Path, index: str) -> None:
    with serving() as fake:
        url = opened(fake, 7, MISMATCH_ISSUE, labels=None)
        fake.repository(REPO).issues[7] = [
            {"id": 1, "body": "Same here on 0.4.", "created_at": "x", "updated_at": "x"}
        ]
        fake.repository(REPO).opened[43] = {
            "title": "Fix scale",
            "pull_request": {"merged_at": "2026-03-02T00:00:00Z"},
        }
        fake.repository(REPO).timeline[7] = [{"event": "cross-referenced", "pull": 43}]
        done = run_import(tmp_path, fake, index, url, "--no-reduce")
        assert not fake.writes()  # importing only reads
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    draft = tmp_path / "corpus" / "tinycc_7_draft"
    pasted = draft / "pasted.py"
    assert "assert np.array_equal(out, expected)" in pasted.read_text()  # as pasted
    assert "Mismatched elements: [0. 2. 4. 7.]" in (draft / "ISSUE.md").read_text()
    manifest = tomllib.loads((draft / "case.toml").read_text())
    assert manifest["upstream"] == {"repo": REPO, "issue": url, "fix": f"https://github.com/{REPO}/pull/43"}
    assert manifest["reproduce"]["bad"] == ["tinycc==0.3"] and manifest["reproduce"]["good"] == [
        "tinycc==0.2"
    ]
    assert "known_bad" not in manifest  # its range would be on triton's version, not tinycc's
    assert "known_bad: left out" in said
    assert [e["name"] for e in manifest["expect"]] == ["runs"]
    assert "locate: shows on cpu:interpreter under tinycc==0.4" in said
    assert "bisect: shows from tinycc==0.3 … tinycc==0.4; no release without it" in said
    assert "verify: PROVEN" in said


def test_an_issue_without_code_stops_at_extract_and_leaves_nothing(tmp_path: Path, index: str) -> None:
    with serving() as fake:
        done = run_import(tmp_path, fake, index, opened(fake, 8, NO_CODE_ISSUE))
    assert done.returncode == 65, done.stderr
    assert "stopped at extract: the issue holds no Python code block" in done.stderr
    assert not any((tmp_path / "corpus").iterdir())


@pytest.mark.slow  # builds an environment per release judged
def test_code_that_shows_nothing_here_stops_at_locate_and_leaves_nothing(tmp_path: Path, index: str) -> None:
    with serving() as fake:
        done = run_import(tmp_path, fake, index, opened(fake, 9, NEVER_SHOWS_ISSUE), "-t", "cpu:interpreter")
    assert done.returncode == 65, done.stderr
    assert "stopped at locate: the code shows the quoted error nowhere" in done.stderr
    assert "tinycc==0.4 on cpu:interpreter: PASS" in done.stderr
    assert not any((tmp_path / "corpus").iterdir())


@pytest.mark.slow  # builds an environment per release judged
@pytest.mark.parametrize(
    "body",
    [ALWAYS_FAILS_ISSUE, ALWAYS_FAILS_ISSUE + "\n```\nAssertionError\n```\n"],
    ids=["none", "class-only"],
)
def test_with_nothing_quoted_a_failure_in_every_release_is_never_proven(
    tmp_path: Path, index: str, body: str
) -> None:
    """No error quoted (or one cut to its class, which any assertion would match) and no release
    without the failure: the code's own failure (here the reporter's wrong assertion) looks the same
    as an open compiler bug, so it proves nothing."""
    with serving() as fake:
        issue = opened(fake, 12, body)
        done = run_import(tmp_path, fake, index, issue, "-t", "cpu:interpreter")
    assert done.returncode == 1, done.stderr
    assert "stopped at bisect: with no error quoted, the code fails on cpu:interpreter in every release" in (
        done.stderr
    )
    assert "PROVEN" not in done.stdout + done.stderr


@pytest.mark.slow  # builds an environment per release judged
@pytest.mark.parametrize(
    ("number", "body", "missing"),
    [
        (10, NEEDS_ANOTHER_PACKAGE_ISSUE, "the_reporters_model"),
        (11, NEEDS_A_NAME_GONE_ISSUE, "AsyncCompile from json.decoder"),
    ],
)
def test_code_that_needs_what_is_missing_here_is_not_taken_for_the_bug(
    tmp_path: Path, index: str, number: int, body: str, missing: str
) -> None:
    """No error quoted, so any FAIL would do, but an ImportError of another package (one not
    installed, or a name an installed one no longer has, as Inductor's generated code imports
    torch._inductor internals) is the draft's problem, never the compiler's bug: both once proved a
    draft this way."""
    with serving() as fake:
        issue = opened(fake, number, body)
        done = run_import(tmp_path, fake, index, issue, "-t", "cpu:interpreter")
    assert done.returncode == 65, done.stderr
    assert f"stopped at locate: the code imports {missing}, which is not installed here" in done.stderr
    assert not any((tmp_path / "corpus").iterdir())


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("https://github.com/example/tinycc/wiki/Home", "is not a GitHub issue or pull request URL"),
        ("https://github.com/example/tinycc/pull/7", "is an issue, not what the URL's /pull/ says"),
    ],
)
def test_what_is_not_an_issue_or_pull_request_is_a_usage_error(
    tmp_path: Path, index: str, url: str, said: str
) -> None:
    with serving() as fake:
        opened(fake, 7, MISMATCH_ISSUE)
        done = run_import(tmp_path, fake, index, url)
    assert done.returncode == 64, done.stderr
    assert said in done.stderr
    assert not any((tmp_path / "corpus").iterdir())


def issue(
    body: str, title: str = "t", labels: tuple[str, ...] = (), repository: str = "triton-lang/triton"
) -> UpstreamIssue:
    import datetime as dt

    url = "https://github.com/o/r/issues/1"
    return UpstreamIssue(
        url, repository, 1, False, title, body, [], list(labels), dt.datetime(2025, 1, 1), None
    )


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("Traceback (most recent call last):\n  File x\n"
         "triton.compiler.errors.CompilationError: at 3:4: bad\n",
         "triton.compiler.errors.CompilationError: at 3:4: bad"),
        ("ptxas /tmp/x.ptx, line 42; error   : Feature 'f64 atomics' requires .target sm_60",
         "ptxas /tmp/x.ptx, line 42; error   : Feature 'f64 atomics' requires .target sm_60"),
        ("LLVM ERROR: Cannot select\nerror: 'llvm.fadd' op requires the same type",
         "error: 'llvm.fadd' op requires the same type"),
        ("Mismatched elements: 3 / 1024 (0.3%)\nGreatest absolute difference: 2.0",
         "Mismatched elements: 3 / 1024 (0.3%)"),
        ("python: Pass.cpp:324: void f(): Assertion `op->getNumOperands() == 2' failed.\n"
         "RuntimeError: PassManager::run failed",
         "Assertion `op->getNumOperands() == 2' failed"),
        # a CompilationError ends with its diagnosis as the exception's repr, on a line of its own
        ("triton.compiler.errors.CompilationError: at 4:4:\n    for i in range(8):\n    ^\n"
         'AssertionError("Loop carried variable a0 changed type, was tensor")',
         "AssertionError: Loop carried variable a0 changed type, was tensor"),
        ("it is slow", None),
    ],
)  # fmt: skip
def test_the_quoted_error_is_the_last_raise_else_a_compiler_error_else_a_mismatch(
    text: str, quoted: str | None
) -> None:
    assert quoted_error(text) == quoted


def test_a_message_the_title_quotes_in_double_quotes_is_a_quoted_error() -> None:
    """A body cut before its traceback's last line still has the title's quoted message."""
    title = 'tl.zeros fails with "Cannot call @triton.jit\'d outside of the scope of a kernel"'
    evidence = extract(issue("```python\nimport triton\nprint(1)\n```\n", title))
    assert evidence.errors == ["Cannot call @triton.jit'd outside of the scope of a kernel"]
    pattern = error_pattern(evidence.errors[0])
    assert pattern and re.search(
        pattern, "RUNTIME_ERROR: RuntimeError(\"Cannot call @triton.jit'd outside of"
    )
    mlir = "atomic_add complains \"'tt.atomic_rmw' op failed to verify that ptr type matches value type\""
    assert extract(issue("```python\nimport triton\nprint(1)\n```\n", mlir)).errors == [
        "'tt.atomic_rmw' op failed to verify that ptr type matches value type"
    ]
    assert extract(issue("```python\nimport triton\nprint(1)\n```\n", 'add "fast math" flag')).errors == []


def test_the_error_pattern_keeps_the_class_and_the_words_before_what_varies() -> None:

    pattern = error_pattern("triton.compiler.errors.CompilationError: at 3:4: unsupported 'bf16'")
    assert pattern is not None and re.search(pattern, "COMPILE_ERROR: [default] CompilationError: at 5:6: x")
    pattern = error_pattern("AssertionError: Mismatched elements: [0. 7.]")
    assert re.search(pattern, "RUNTIME_ERROR: AssertionError: Mismatched elements: [0. 8.]")
    assert not re.search(pattern, "RUNTIME_ERROR: AssertionError: something else")
    # Newer releases wrap a frontend TypeError in a CompilationError that drops its class name.
    pattern = error_pattern("TypeError: '<=' not supported between instances of 'int' and 'NoneType'")
    assert re.search(pattern, "COMPILE_ERROR: CompilationError: '<=' not supported between instances of")
    assert not re.search(pattern, "COMPILE_ERROR: CompilationError: 'int' object is not callable")
    # TVM's check prints its condition, which a reporter may leave out: a clause still names it.
    pattern = error_pattern(
        "tvm.error.InternalError: Check failed: Trying to update var 'x' with a different value"
    )
    said = (
        "InternalError: Check failed: (ExprDeepEqual()(a, b)) is false: Trying to update var 'tmp' with a "
        "different value"
    )
    assert pattern and re.search(pattern, said)
    # A failed check with its condition: the condition (or the message) names it, across the classes
    # TVM's releases raise it as; "InternalError: Check failed:" alone is any check of any pass.
    pattern = error_pattern(
        "tvm.error.InternalError: Check failed: (layout_map.count(buffer)) is false: Layout for C not found"
    )
    assert pattern and re.search(
        pattern, "COMPILE_ERROR: [default] RuntimeError: Check failed: (layout_map.count(buffer)) is false: x"
    )
    assert not re.search(pattern, "COMPILE_ERROR: [default] InternalError: Check failed: (n > 0) is false: y")
    # A heading over the lines that say what failed is no quote of its own.
    assert error_pattern("tvm.error.InternalError: Traceback (most recent call last):") == "InternalError"
    assert error_pattern("RuntimeError: Compilation error:") == "RuntimeError"
    # The missing attribute is the error: another object lacking another attribute is another bug.
    pattern = error_pattern("AttributeError: 'Tuple' object has no attribute 'id'")
    assert pattern and re.search(
        pattern, "COMPILE_ERROR: CompilationError: 'Tuple' object has no attribute 'id'"
    )
    assert not re.search(
        pattern, "RUNTIME_ERROR: AttributeError: 'InterpretedFunction' object has no attribute 'signature'"
    )
    assert not re.search(pattern, "AttributeError: 'Name' object has no attribute 'idx'")
    # A KeyError's message is its key, quoted.
    pattern = error_pattern("KeyError: 'key is not in Map'")
    assert pattern and re.search(pattern, "COMPILE_ERROR: [default] KeyError: 'key is not in Map'")
    assert not re.search(pattern, "COMPILE_ERROR: [default] KeyError: 'layout'")
    pattern = error_pattern("KeyError: 'BLOCK_SIZE_K'")  # a name: only as the KeyError shows it
    assert pattern and re.search(pattern, "RUNTIME_ERROR: KeyError: 'BLOCK_SIZE_K'")
    assert not re.search(pattern, "CompilationError: at 3:4: acc = tl.zeros((BLOCK_SIZE_K, 16)) ValueError")
    # MLIR names the operation first, in quotes: the op and what failed are the error.
    pattern = error_pattern("error: 'tt.atomic_rmw' op failed to verify that ptr type matches value type")
    assert pattern and re.search(
        pattern, "x.py:12:21: error: 'tt.atomic_rmw' op failed to verify that ptr type matches value type"
    )
    assert not re.search(pattern, "x.py:3:4: error: 'tt.load' op failed to verify that ptr type matches")
    # A message that starts with what varies is matched by its longest run of fixed words.
    pattern = error_pattern("error: 128 bytes of shared memory exceed what the layout allows")
    assert pattern and re.search(pattern, "error: 96 bytes of shared memory exceed what the layout allows")
    # A reporter's stand-in (X, XXX, ...) for what varies is what varies: the fixed words around it.
    pattern = error_pattern("variables X are used, but are not passed in as API arguments")
    assert pattern and re.search(
        pattern, "Check failed: undefined.size() == 0 : In PrimFunc main variables [i] are used, but are not "
        "passed in as API arguments",
    )  # fmt: skip
    assert not re.search(pattern, "variables [i] are used")
    assert error_pattern("Check failed: x is X") is None  # no fixed run long enough to tell it by
    assert error_pattern("LLVM ERROR: Cannot select: X = intrinsic") is None
    pattern = error_pattern("ValueError: X is not supported for this layout")
    assert pattern and re.search(pattern, "ValueError: 'y' is not supported for this layout")
    assert not re.search(pattern, "ValueError: bad shape")  # never the class alone
    assert error_pattern("RuntimeError: XXX: failed") == "RuntimeError"  # too little: taken as no quote
    assert error_pattern("Xavier failed to compile X.y") == re.escape("Xavier failed to compile X.y")
    assert error_pattern(None) is None


def test_a_failed_cpp_assertion_is_quoted_by_its_condition_and_another_crash_is_not_it(
    tmp_path: Path,
) -> None:
    """A source build's abort names its file and signature, then the condition: the condition is
    the bug's. A release that aborts on another assertion (or says only that it was killed) shows
    another bug: it once proved a draft on an XPU release's unrelated abort."""
    printed = (
        "python: /home/u/triton/lib/Dialect/TritonGPU/IR/Dialect.cpp:195: llvm::SmallVector<unsigned int> "
        'f(mlir::Attribute): Assertion `contigPerThread.size() == rank && "Unexpected size"\' failed.\n'
        "Aborted (core dumped)\n"
    )
    body = f"```python\nimport triton\nprint(1)\n```\n\nHere is the error:\n\n```python\n{printed}```\n"
    evidence = extract(issue(body))
    assert evidence.error == 'Assertion `contigPerThread.size() == rank && "Unexpected size"\' failed'
    pattern = error_pattern(evidence.error)
    locator = Locator(tmp_path, "d", [pattern], Summary("u"), 60.0)
    killed = (
        "CRASH: child process killed by SIGABRT"  # the message; what it printed is the record's diagnostics
    )
    same = "python: Dialect.cpp:201: Assertion `contigPerThread.size() == rank' failed."
    other = "python: SmallVector.h:291: Assertion `idx < size()' failed."
    release = ("xpu:dg2", "triton-xpu==3.2.0b1", Outcome.FAIL, killed, "CRASH")
    assert locator.shows(Point(*release, diagnostics=same))
    assert not locator.shows(Point(*release, diagnostics=other))
    assert not locator.shows(Point(*release))


def test_code_blocks_are_kept_as_pasted_and_the_framework_is_read_from_them() -> None:
    body = "```python\nimport tilelang\nprint(1)\n```\n\n```\nRuntimeError: boom\n```\n"
    body += "```py\nfrom x import y\nprint(y)\n```"
    evidence = extract(issue(body))
    assert evidence.code == "import tilelang\nprint(1)\n\n\nfrom x import y\nprint(y)\n"
    assert (
        evidence.framework == "tilelang" and evidence.error == "RuntimeError: boom" and evidence.blocks == 2
    )


def test_an_exception_named_in_a_sentence_is_quoted_after_the_lines_that_quote_one() -> None:
    text = (
        "In the interpreter it will report triton.runtime.errors.InterpreterError: "
        "TypeError(\"'int' object is not iterable\"). With the change below codegen fails:\n\n"
        "triton.compiler.errors.CompilationError: at 4:4:\n"
    )
    assert quoted_errors(text) == [
        "triton.compiler.errors.CompilationError: at 4:4:",
        "triton.runtime.errors.InterpreterError: TypeError(\"'int' object is not iterable\")",
    ]
    pattern = error_pattern(quoted_errors(text)[1])
    assert pattern and re.search(pattern, "InterpreterError: TypeError(\"'int' object is not iterable\")")
    assert quoted_errors("Values differ: see the table below.\n") == []


def test_an_api_the_release_lacks_is_never_the_bug_but_a_missing_attribute_of_an_object_can_be(
    tmp_path: Path,
) -> None:
    """tl.atomic_load before the release that added it once proved a draft of a bug in it."""
    source = "val = tl.atomic_load(IN + offs)\nflags = tl.full([2], False, tl.int1)\n"
    locator = Locator(tmp_path, "d", [], Summary("u"), 60.0, source=source)
    lacking = (
        "RUNTIME_ERROR: InterpreterError: AttributeError(\"module 'triton.language' has no attribute "
        "'atomic_load'\")"
    )
    builder = "RUNTIME_ERROR: AttributeError: 'InterpreterBuilder' object has no attribute 'get_int1_ty'"
    assert missing_api(lacking, source) == "triton.language.atomic_load"
    assert not locator.shows(
        Point("cpu:interpreter", "triton==3.8.0", Outcome.FAIL, lacking, "RUNTIME_ERROR")
    )
    assert missing_api(builder, source) is None
    assert missing_api(lacking, "x = tl.load(p)\n") is None  # a name the code never uses is not its API
    # a keyword the code passes and the release does not take yet: cannot run there, never a bad end
    keyword = "RUNTIME_ERROR: TypeError: reshape() got an unexpected keyword argument 'can_reorder'"
    reshaping = "y = tl.reshape(x, [4, 4], can_reorder=True)\n"
    assert missing_api(keyword, reshaping) == "reshape(can_reorder=...)"
    quoted = Locator(tmp_path, "d", ["TypeError"], Summary("u"), 60.0, source=reshaping)
    assert not quoted.shows(Point("cpu:interpreter", "triton==3.0.0", Outcome.FAIL, keyword, "RUNTIME_ERROR"))
    assert missing_api(keyword, "y = tl.reshape(x, [4, 4])\n") is None  # not the code's keyword
    # an API the release says it removed (Triton 3.9 on block pointers): never the bug's bad end
    removed = (
        "COMPILE_ERROR: 1 of 1 configs did not compile | [default] CompilationError: at 10:18: "
        "ValueError('Block pointers have been removed in favor of the tensor descriptor API')"
    )
    blocks = "p = tl.make_block_ptr(base=x, shape=(4, 4), strides=(4, 1), offsets=(0, 0))\n"
    assert missing_api(removed, blocks) == "Block pointers (removed in favor of the tensor descriptor API)"
    assert not locator.shows(Point("cuda:sm_90", "triton==3.9.0", Outcome.FAIL, removed, "COMPILE_ERROR"))


def test_a_fence_never_closed_runs_to_the_end_of_its_text_as_github_renders_it() -> None:
    """A paste (or a saved copy) cut before its closing fence still holds its code; what is left of
    the fence is not code."""
    for cut in ("", "`", "``"):
        evidence = extract(issue("Minimal:\n\n```py\nimport triton\n\nkernel[(1,)]()\n" + cut))
        assert evidence.code == "import triton\n\nkernel[(1,)]()\n" and evidence.blocks == 1, cut


def test_code_indented_without_fences_is_a_code_block_as_github_renders_it() -> None:
    """A reporter who pastes without fences indents the code four spaces (or a tab): GitHub shows a
    code block, so a triager reads the code there; an indented line that continues a paragraph, and
    an indented traceback, are not code to run."""
    body = (
        "The kernel below fails to compile:\n\n"
        "    import triton\n    import triton.language as tl\n\n    @triton.jit\n"
        "    def kernel(x):\n        tl.store(x, 1)\n\n\tkernel[(1,)](t)\n\n"
        "With 3.1 it says\n\n    Traceback (most recent call last):\n"
        "    triton.compiler.errors.CompilationError: at 2:4: boom\n\n"
        "Steps:\n    this line continues the paragraph above\n"
    )
    evidence = extract(issue(body))
    assert evidence.blocks == 1
    assert evidence.code == (
        "import triton\nimport triton.language as tl\n\n@triton.jit\ndef kernel(x):\n"
        "    tl.store(x, 1)\n\nkernel[(1,)](t)\n"
    )
    assert evidence.error == "triton.compiler.errors.CompilationError: at 2:4: boom"
    # indented code inside a fence is the fence's, read once
    fenced = extract(issue("```python\nimport triton\n\n    x = 1\n```\n"))
    assert fenced.blocks == 1


HERE = {
    "cpu:interpreter": ("interpreter", "cpu"),
    "cuda:sm_80": ("compile", "cuda"),
    "cuda:sm_90": ("compile", "cuda"),
    "hip:gfx942": ("compile", "hip"),
    "xpu:pvc": ("compile", "xpu"),
    "xpu:dg2": ("compile", "xpu"),
}


def test_the_targets_the_issue_names_are_tried_first() -> None:
    assert targets_to_try(issue("fails on MI300X"), HERE, "triton")[0] == "hip:gfx942"
    assert targets_to_try(issue("x", labels=("H100",)), HERE, "triton")[0] == "cuda:sm_90"
    # Hopper and Ampere parts sold under other names (H20, GH200; A800, A40, RTX 3090)
    for said in ("crashes on H20", "GH200 superchip"):
        assert targets_to_try(issue(said), HERE, "triton")[0] == "cuda:sm_90", said
    for said in ("wrong on A800", "an A40 box", "my RTX 3090"):
        assert targets_to_try(issue(said), HERE, "triton")[0] == "cuda:sm_80", said
    intel = targets_to_try(issue("x", repository="intel/intel-xpu-backend-for-triton"), HERE, "triton")
    assert intel[:2] == ["xpu:pvc", "xpu:dg2"]
    every = ["cpu:interpreter", "cuda:sm_90", "cuda:sm_80", "hip:gfx942", "xpu:pvc", "xpu:dg2"]
    assert targets_to_try(issue("nothing said"), HERE, "triton") == every
    # An Ada GPU named: sm_89, a target the corpus run judges only where a case names it, comes first
    # where this machine judges it, and is never tried where it is not named.
    ada = HERE | {"cuda:sm_89": ("compile", "cuda")}
    assert targets_to_try(issue("Casting breaks on SM89"), ada, "triton")[0] == "cuda:sm_89"
    assert targets_to_try(issue("fails on an RTX 4090"), ada, "triton")[0] == "cuda:sm_89"
    assert "cuda:sm_89" not in targets_to_try(issue("nothing said"), ada, "triton")


def test_a_gpu_of_now_the_issue_names_is_tried_first() -> None:
    """Blackwell, CDNA4, RDNA4 and Xe2/Xe3 targets are judged here: named, each comes first (before
    the older generation its vendor's words also name), and never tried unnamed."""
    now = HERE | {t: ("compile", t.split(":")[0]) for t in
                  ("cuda:sm_100", "cuda:sm_103", "cuda:sm_120", "hip:gfx950", "hip:gfx1201", "xpu:bmg",
                   "xpu:lnl", "xpu:ptl")}  # fmt: skip
    named = {
        "dot_scaled crashes on a B200": "cuda:sm_100", "fails on GB300": "cuda:sm_103",
        "tl.dot_scaled crashes on sm_120": "cuda:sm_120", "wrong on an RTX 5090": "cuda:sm_120",
        "AMD MI355X: LDS overflow": "hip:gfx950", "gfx1201 miscompiles": "hip:gfx1201",
        "Intel Arc B580 hangs": "xpu:bmg", "Lunar Lake iGPU": "xpu:lnl", "on Panther Lake": "xpu:ptl",
    }  # fmt: skip
    for said, target in named.items():
        assert targets_to_try(issue(said), now, "triton")[0] == target, said
    assert targets_to_try(issue("fails on MI300X"), now, "triton")[0] == "hip:gfx942"
    assert targets_to_try(issue("nothing said"), now, "triton") == targets_to_try(
        issue("nothing said"), HERE, "triton"
    )
    assert targets_to_try(issue("crashes on a B200"), now, "tilelang")[0] == "cuda:sm_100"


def test_a_draft_is_tried_only_where_its_framework_builds() -> None:
    """TileLang has no interpreter and builds CUDA only: not cpu:interpreter first, nor AMD or XPU."""
    assert targets_to_try(issue("fails on MI300X"), HERE, "tilelang") == ["cuda:sm_90", "cuda:sm_80"]


BF16_ISSUE = {
    "title": "atomic_add on bf16 does not compile for H100",
    "created_at": "2025-05-10T00:00:00Z",
    "labels": ["bug"],
    "body": "On an H100:\n\n```python\nimport torch\nimport triton\nimport triton.language as tl\n\n\n"
    "@triton.jit\ndef accumulate(src, dst, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    m = offs < n\n"
    "    tl.atomic_add(dst + offs % 8, tl.load(src + offs, mask=m), mask=m)\n\n\n"
    "src = torch.randn(256, device='cuda', dtype=torch.bfloat16)\n"
    "dst = torch.zeros(8, device='cuda', dtype=torch.bfloat16)\n"
    "accumulate[(2,)](src, dst, 256, BLOCK=128)\n```\n\n"
    "```\ntriton.compiler.errors.CompilationError: at 5:4:\n"
    "ValueError: atomic_add does not support bf16\n```\n",
}

INT1_ISSUE = {
    "title": "[Interpreter] tl.full with tl.int1 fails",
    "created_at": "2025-03-14T00:00:00Z",
    "body": "```python\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\ndef kernel():\n"
    "    flags = tl.full([2], False, tl.int1)\n\n\nkernel[(1,)]()\n```\n\nwith TRITON_INTERPRET=1:\n\n```\n"
    "AttributeError: 'InterpreterBuilder' object has no attribute 'get_int1_ty'\n```\n",
}


SELECT_ISSUE = {
    "title": "[BUG] vectorized select emits invalid CUDA",
    "created_at": "2026-07-16T00:00:00Z",
    "labels": ["bug"],
    "body": "\n".join(
        [
            "With 0.1.12 this fails to build on an H100:",
            "",
            "```python",
            "import tilelang",
            "from tilelang import language as T",
            "",
            "N = 8",
            "",
            "",
            "@tilelang.jit",
            "def make():",
            "    @T.prim_func",
            "    def pick(src: T.Tensor[(N,), T.float32], dst: T.Tensor[(N,), T.float32]):",
            "        with T.Kernel(1, threads=1):",
            "            for i in T.vectorized(N):",
            "                x = src[i]",
            "                dst[i] = T.Select(x > 0.0, x, x * 2.0)",
            "",
            "    return pick",
            "",
            "",
            "make()",
            "```",
            "",
            "```",
            "error: expression must have bool type (or be convertible to bool)",
            "```",
            "",
        ]
    ),
}


# An eager @tilelang.jit kernel whose frontend refuses a reduction while building its prim_func,
# before tilelang.compile is reached (tilelang#1690's kind of failure, written here).
EAGER_REDUCE_ISSUE = {
    "title": "[BUG] T.reduce_max in an eager jit kernel fails",
    "created_at": "2026-01-19T00:00:00Z",
    "labels": ["bug"],
    "body": "\n".join(
        [
            "```python",
            "import tilelang",
            "import tilelang.language as T",
            "",
            "",
            "@tilelang.jit",
            "def row_max(X):",
            '    M = T.const("M")',
            "    X: T.Tensor[[M], T.float16]",
            "    with T.Kernel():",
            "        frag = T.alloc_fragment((M,), T.float16)",
            "        best = T.alloc_fragment(1, T.float16)",
            "        T.copy(X, frag)",
            "        T.reduce_max(frag, best, dim=0)",
            "",
            "",
            "row_max.compile(M=32)",
            "```",
            "",
        ]
    ),
}


# Nothing quoted, and the oldest releases fail otherwise: they lack `flatten` altogether.
FLATTEN_ISSUE = {
    "title": "tl.range(flatten=True) fails to compile a loop nest that carries two values",
    "created_at": "2026-08-01T00:00:00Z",
    "body": "\n".join(
        [
            "```python",
            "import torch",
            "import triton",
            "import triton.language as tl",
            "",
            "",
            "@triton.jit",
            "def recurrence(out_ptr, BLOCKS: tl.constexpr):",
            "    value = 1",
            "    carry = 2",
            "    for _ in tl.range(BLOCKS, flatten=True):",
            "        for j in range(2):",
            "            value += j",
            "        value += carry",
            "        carry = value",
            "    tl.store(out_ptr, value)",
            "",
            "",
            "out = torch.zeros(1, dtype=torch.int32, device='cuda')",
            "recurrence[(1,)](out, BLOCKS=2)",
            "```",
            "",
        ]
    ),
}


# The same bugs as pasted in real issues: without their imports, with a stray indent, with the
# error given only in the title (every one of them was a stop at extract or locate before repairs).
NO_IMPORTS = {**BF16_ISSUE, "body": BF16_ISSUE["body"].replace(
    "import torch\nimport triton\nimport triton.language as tl\n\n\n", "")}  # fmt: skip
STRAY_INDENT = {**INT1_ISSUE, "body": INT1_ISSUE["body"].replace("\nkernel[(1,)]()", "\n   kernel[(1,)]()")}
# The reporter's own helpers, left imported and unused, that no release's environment holds.
LEFTOVER_IMPORTS = {**INT1_ISSUE, "body": INT1_ISSUE["body"].replace(
    "import triton\n", "import triton\nfrom icecream import ic\nimport einops as ein\n", 1)}  # fmt: skip
TITLE_ONLY = {
    **INT1_ISSUE,
    "title": "[Interpreter] tl.full with tl.int1: AttributeError: 'InterpreterBuilder' object has no "
    "attribute 'get_int1_ty'",
    "body": INT1_ISSUE["body"].split("\n\nwith TRITON_INTERPRET=1")[0] + "\n",
}
# The error named only in a sentence, beside another error quoted on a line of its own (for a variant
# of the code that is not pasted whole).
ERROR_IN_A_SENTENCE = {
    **INT1_ISSUE,
    "body": INT1_ISSUE["body"].split("\n\nwith TRITON_INTERPRET=1")[0]
    + "\n\nWith TRITON_INTERPRET=1 it raises AttributeError: 'InterpreterBuilder' object has no attribute "
    "'get_int1_ty'. Written with tl.zeros instead it compiles, but:\n\n"
    "triton.compiler.errors.CompilationError: at 2:4:\n",
}
# The code only in a maintainer's comment, whose closing fence the paste lost.
FENCE_CUT_IN_COMMENT = {
    **INT1_ISSUE,
    "body": "Under TRITON_INTERPRET=1:\n\n```\n"
    "AttributeError: 'InterpreterBuilder' object has no attribute 'get_int1_ty'\n```\n",
    "comments": ["Minimal reproducer:\n\n" + INT1_ISSUE["body"].split("\n\nwith TRITON_INTERPRET=1")[0][:-1]],
}
CUT_SHORT = {**BF16_ISSUE, "body": BF16_ISSUE["body"].replace("accumulate[(2,)](src, dst, 256, BLOCK=128)",
                                                             "accumulate[(2,)](src, dst, 2")}  # fmt: skip


def import_saved(tmp_path: Path, url: str, saved: dict, *extra: str) -> tuple[int, str]:
    """`kregress import URL --issue-file` of an issue saved as JSON, into a corpus of its own."""
    import json

    issue_file = tmp_path / "issue.json"
    issue_file.write_text(json.dumps(saved))
    (tmp_path / "corpus").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "kregress.cli", "import", url, "--issue-file", str(issue_file),
         "--corpus", str(tmp_path / "corpus"), "--no-reduce", *extra],
        capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("url", "saved", "repaired"),
    [
        ("https://github.com/triton-lang/triton/issues/1387", NO_IMPORTS,
         "repair: added the imports it uses and lacks: tl, triton, torch"),
        ("https://github.com/triton-lang/triton/issues/6200", STRAY_INDENT,
         "repair: line 10: a stray indent set to its block's (0 columns)"),
        ("https://github.com/triton-lang/triton/issues/6200", TITLE_ONLY,
         "errors quoted: AttributeError: 'InterpreterBuilder' object has no attribute 'get_int1_ty'"),
        ("https://github.com/triton-lang/triton/issues/6200", FENCE_CUT_IN_COMMENT,
         "extract: 1 code block(s)"),
        ("https://github.com/triton-lang/triton/issues/6200", ERROR_IN_A_SENTENCE,
         "locate: shows on cpu:interpreter under triton==3.2.0 (/has no attribute ['\\\"]?get_int1_ty"),
        ("https://github.com/triton-lang/triton/issues/6200", LEFTOVER_IMPORTS,
         "repair: dropped the imports of icecream, einops: not installed here, and the code uses none"),
    ],
    ids=["no-imports", "stray-indent", "error-in-title", "fence-cut-in-comment", "error-in-a-sentence",
         "leftover-imports"],
)  # fmt: skip
def test_damaged_pastes_are_repaired_into_proven_drafts_with_the_right_range(
    tmp_path: Path, url: str, saved: dict, repaired: str
) -> None:
    """Each kind of paste damage, on a real bug under real releases: repaired, said, and PROVEN with
    the range the whole paste gives (3.0.0 ... 3.3.1, first fixed 3.4.0)."""
    code, said = import_saved(tmp_path, url, saved)
    assert code == 0, said
    assert repaired in said and "first fixed triton==3.4.0" in said and "verify: PROVEN" in said, said
    (draft,) = (tmp_path / "corpus").glob("*_draft")
    assert tomllib.loads((draft / "case.toml").read_text())["known_bad"][0]["versions"].endswith(",<3.4.0")
    assert "## Repairs, as a triager would make them" in (draft / "ISSUE.md").read_text()


@pytest.mark.slow
def test_with_nothing_quoted_the_failure_found_is_the_one_bisected(tmp_path: Path) -> None:
    """Releases that fail the code another way (3.0.0 has no `flatten`: an unexpected keyword) are
    stepped round, not read as the bug: it once bisected this to 3.0.0 … 3.8.0."""
    url = "https://github.com/triton-lang/triton/issues/11620"
    code, said = import_saved(tmp_path, url, FLATTEN_ISSUE, "-t", "cuda:sm_90")
    assert code == 0, said
    assert "locate: nothing quoted; bisecting the failure it shows there" in said
    assert "first fixed triton==3.9.0" in said and "shows from triton==3.0.0" not in said, said
    assert "could not tell at triton==3." in said, said


@pytest.mark.slow
def test_a_paste_cut_inside_its_launch_is_proven_on_its_kernel_never_on_its_syntax(tmp_path: Path) -> None:
    """The launch cut short is dropped, not completed, and never proven on a SyntaxError of its own:
    the kernel left is compiled as a triager would (its one constexpr only sizes a block, so any
    power of two does), and shows the quoted error with the range the whole paste gives."""
    url = "https://github.com/triton-lang/triton/issues/1387"
    code, said = import_saved(tmp_path, url, CUT_SHORT, "-t", "cuda:sm_90")
    assert code == 0, said
    assert "the last statement was cut short in the paste" in said and "BLOCK as 16" in said
    assert "first fixed triton==3.4.0" in said and "SyntaxError" not in said


@pytest.mark.slow
@pytest.mark.parametrize(
    ("url", "saved", "shown", "bisected", "bound"),
    [
        ("https://github.com/triton-lang/triton/issues/1387", BF16_ISSUE,
         "locate: shows on cuda:sm_90 under triton==3.3.0",
         "bisect: shows from triton==3.0.0 … triton==3.3.1; first fixed triton==3.4.0", ",<3.4.0"),
        ("https://github.com/triton-lang/triton/issues/6200", INT1_ISSUE,
         "locate: shows on cpu:interpreter under triton==3.2.0", "first fixed triton==3.4.0", ",<3.4.0"),
        ("https://github.com/tile-ai/tilelang/issues/2682", SELECT_ISSUE,
         "locate: shows on cuda:sm_90 under tilelang==0.1.12",
         "bisect: shows from tilelang==0.1.7 … tilelang==0.1.13; first fixed tilelang==0.1.14", ",<0.1.14"),
        ("https://github.com/tile-ai/tilelang/issues/1690", EAGER_REDUCE_ISSUE,
         "locate: shows on cuda:sm_90 under tilelang==0.1.7.post3", "first fixed tilelang==0.1.8", ",<0.1.8"),
    ],
)  # fmt: skip
def test_real_issues_saved_as_json_become_proven_drafts(
    tmp_path: Path, url: str, saved: dict, shown: str, bisected: str, bound: str
) -> None:
    """A compile error on sm_90 (the first launch captured and compiled for the target), an
    interpreter bug, a TileLang build that nvcc refuses (the first prim_func handed to
    tilelang.compile) and an eager TileLang kernel its frontend refuses before any compile (the
    compiler's failure, not the paste's), each under the release of the issue's date, bisected over
    real releases."""
    code, said = import_saved(tmp_path, url, saved)
    assert code == 0, said
    assert shown in said and bisected in said and "verify: PROVEN" in said
    (draft,) = (tmp_path / "corpus").glob("*_draft")
    manifest = tomllib.loads((draft / "case.toml").read_text())
    assert manifest["known_bad"][0]["versions"].endswith(bound)


AHEAD_OF_TIME = """import triton
import triton.language as tl


@triton.jit
def reverse(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.flip(tl.load(x_ptr + offs)))


src = triton.compiler.ASTSource(
    fn=reverse,
    signature={"x_ptr": "*fp16", "out_ptr": "*fp16", "n": "i32", "BLOCK": "constexpr"},
    constexprs={"BLOCK": 128},
)
triton.compile(src, target=triton.backends.compiler.GPUTarget("cuda", 80, 32))
raise SystemExit("the capture stops the code at triton.compile")
"""


def test_an_ahead_of_time_compile_is_captured_like_a_launch(tmp_path: Path) -> None:
    """Reporters who have no GPU paste `triton.compile(ASTSource(...), target=...)`: its kernel, its
    constexprs and a tensor of each pointer's dtype become the draft's kernel."""
    import torch

    from kregress.pasted import capture_first_launch

    pasted = tmp_path / "pasted.py"
    pasted.write_text(AHEAD_OF_TIME)
    kernel = capture_first_launch(pasted)
    arguments = kernel.args()
    assert kernel.fn.fn.__name__ == "reverse"
    assert arguments["BLOCK"] == 128 and arguments["n"] == 1
    assert arguments["x_ptr"].dtype == arguments["out_ptr"].dtype == torch.float16


def test_sources_keyed_by_position_as_older_releases_key_them() -> None:
    """Releases before 3.3 key an ASTSource's signature by position and its constants by a tuple path."""
    from types import SimpleNamespace

    import torch
    import triton
    import triton.language as tl

    from kregress.pasted import arguments_of_source

    @triton.jit
    def scale(x_ptr, factor, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + tl.arange(0, BLOCK)) * factor)

    source = SimpleNamespace(fn=scale, signature={0: "*bf16", 1: "fp32"}, constants={(2,): 64})
    arguments = arguments_of_source(source)
    assert arguments["x_ptr"].dtype == torch.bfloat16
    assert arguments["factor"] == 1.0 and arguments["BLOCK"] == 64


FIXED_HISTORY = [
    Step("Vectorized scale", BAD, release="0.1"),
    Step("Release 0.2", BAD, release="0.2"),
    Step("Fix scale (#50)", GOOD, release="0.3"),
]


def index_of_releases(factory: pytest.TempPathFactory, name: str, history: list[Step]) -> Iterator[str]:
    """A local index whose releases are every step of `history`, each built as a wheel."""
    root = factory.mktemp(name)
    repo, shas = make_compiler_repo(root / "repo", history)
    wheels = [build_release(repo, sha, root / "wheels") for sha in shas]
    with local_index(root / "index", wheels) as url:
        yield url


@pytest.fixture(scope="module")
def fixed_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from index_of_releases(tmp_path_factory, "tinycc-fixed", FIXED_HISTORY)


@pytest.mark.slow  # builds an environment per release judged
def test_an_issue_older_than_every_release_is_tried_on_the_oldest(tmp_path: Path, fixed_index: str) -> None:
    """Reported on a nightly before any release installable here, and fixed since: the newest
    release holds, so the bug is looked for in the oldest, where it shows."""
    with serving() as fake:
        url = opened(fake, 8, MISMATCH_ISSUE)
        fake.repository(REPO).opened[8]["created_at"] = "2020-01-01T00:00:00Z"
        done = run_import(tmp_path, fake, fixed_index, url, "--no-reduce")
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "locate: shows on cpu:interpreter under tinycc==0.1" in said
    assert "first fixed tinycc==0.3" in said


# A bug of one release, fixed in the next: an issue opened after the fix shows nothing in the
# release current then or the newest; only the one its reporter names shows it.
ONE_RELEASE_HISTORY = [
    Step("Initial compiler", GOOD, release="0.1"),
    Step("Vectorized scale", BAD, release="0.2"),
    Step("Fix scale (#51)", GOOD, release="0.3"),
]


@pytest.fixture(scope="module")
def one_release_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from index_of_releases(tmp_path_factory, "tinycc-one-release", ONE_RELEASE_HISTORY)


@pytest.mark.slow  # builds an environment per release judged
def test_the_release_the_reporter_names_is_tried_first(tmp_path: Path, one_release_index: str) -> None:
    body = MISMATCH_ISSUE.replace("Since 0.3 `tinycc.scale`", "On tinycc 0.2 (pip) `tinycc.scale`")
    with serving() as fake:
        url = opened(fake, 12, body)
        fake.repository(REPO).opened[12]["created_at"] = "2030-01-01T00:00:00Z"
        done = run_import(tmp_path, fake, one_release_index, url, "--no-reduce")
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "locate: the issue names tinycc==0.2 (the first release it names): tried first" in said
    assert "locate: shows on cpu:interpreter under tinycc==0.2" in said
    assert "bisect: shows from tinycc==0.2 … tinycc==0.2; first fixed tinycc==0.3" in said, said


# A release whose scale fails as an MLIR pass does: the diagnostic printed on stderr, the exception
# saying only that the pass manager failed.
PRINTS_ITS_ERROR = """import os
def scale(x):
    os.write(2, b"scale.py:3:4: error: 'tiny.scale' op failed to verify that operand type matches result\\n")
    raise RuntimeError("PassManager::run failed")
"""
PRINTED_HISTORY = [
    Step("Initial compiler", GOOD, release="0.1"),
    Step("Verify scale's types", PRINTS_ITS_ERROR, release="0.2"),
    Step("Fix scale's verifier (#52)", GOOD, release="0.3"),
]

PRINTED_ERROR_ISSUE = """On tinycc 0.2 (pip) `tinycc.scale` stops:

```python
import numpy as np
import tinycc

print(tinycc.scale(np.arange(4.0)))
```

```
scale.py:3:4: error: 'tiny.scale' op failed to verify that operand type matches result
```
"""


@pytest.fixture(scope="module")
def printed_error_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from index_of_releases(tmp_path_factory, "tinycc-printed", PRINTED_HISTORY)


@pytest.mark.slow  # builds an environment per release judged
def test_an_error_the_compiler_prints_and_does_not_raise_is_the_quoted_one(
    tmp_path: Path, printed_error_index: str
) -> None:
    """MLIR prints its diagnostic and raises only "PassManager::run failed": the quote is found in
    what the child printed, kept in the record, and verify holds the bad end to it."""
    with serving() as fake:
        url = opened(fake, 13, PRINTED_ERROR_ISSUE)
        done = run_import(tmp_path, fake, printed_error_index, url, "--no-reduce")
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "locate: shows on cpu:interpreter under tinycc==0.2" in said
    assert "bisect: shows from tinycc==0.2 … tinycc==0.2; first fixed tinycc==0.3" in said, said
    manifest = tomllib.loads((tmp_path / "corpus" / "tinycc_13_draft" / "case.toml").read_text())
    assert "tiny" in manifest["reproduce"]["fails_with"] and "verify: PROVEN" in said


def test_a_release_is_named_by_its_package_and_version_as_reporters_write_them() -> None:
    triton = [f"triton=={v}" for v in ("3.0.0", "3.3.0", "3.3.1", "3.6.0", "3.7.0")]
    tilelang = [f"tilelang=={v}" for v in ("0.1.6.post2", "0.1.7", "0.1.8", "0.1.9")]
    environment = "### Environment details\n\nTriton: 3.6.0\nGPU: T4"
    assert named_release(environment, "triton", triton) == "triton==3.6.0"
    assert named_release("pip install triton==3.3.1 torch==2.7", "triton", triton) == "triton==3.3.1"
    form = "### What version of TileLang are you using?\n\n0.1.8+cuda.git71a7940c\n"
    assert named_release(form, "tilelang", tilelang) == "tilelang==0.1.8"  # a git build: its release
    assert named_release("it broke after triton 3.3", "triton", triton) == "triton==3.3.0"
    assert named_release("Triton version: 3.3.1", "triton-xpu", ["triton-xpu==3.3.1"]) == "triton-xpu==3.3.1"
    assert named_release("I run triton on 3 GPUs", "triton", triton) is None  # a count, not a version
    assert named_release("torch 2.7.0, triton 3.12.0", "triton", triton) is None  # no such release here
    assert named_release("tilelang 0.1.8", "triton", triton) is None  # another package's
    assert named_release("import triton\nimport torch\nx = 3.3", "triton", triton) is None  # code lines


# A release built against a runtime this machine lacks: it cannot run the code, so it tells nothing.
UNLOADABLE = 'raise OSError("libtinyrt.so.13: cannot open shared object file: No such file or directory")\n'
GAPPY_HISTORY = [
    Step("Build against tinyrt 13", UNLOADABLE, release="0.1"),
    Step("Vectorized scale", BAD, release="0.2"),
    Step("Build against tinyrt 13 again", UNLOADABLE, release="0.3"),
    *(Step(f"Release 0.{n}", BAD, release=f"0.{n}") for n in range(4, 8)),
]


@pytest.fixture(scope="module")
def gappy_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from index_of_releases(tmp_path_factory, "tinycc-gappy", GAPPY_HISTORY)


@pytest.mark.slow  # builds an environment per release judged
def test_a_release_that_cannot_run_the_code_is_stepped_round_not_taken_for_either_side(
    tmp_path: Path, gappy_index: str
) -> None:
    """0.3 is the first midpoint and cannot load: read as "does not show", it moved the search
    above it and named 0.4. Skipped, the search finds 0.2, and says 0.1 could not tell."""
    with serving() as fake:
        url = opened(fake, 9, MISMATCH_ISSUE)
        done = run_import(tmp_path, fake, gappy_index, url, "--no-reduce")
    said = done.stdout + done.stderr
    assert "locate: shows on cpu:interpreter under tinycc==0.7" in said, said
    assert "bisect: shows from tinycc==0.2 … tinycc==0.7; no release without it" in said, said
    assert "could not tell at tinycc==0.1 on cpu:interpreter" in said and "libtinyrt.so.13" in said, said


# The release current at the issue's date cannot load here; the next one has the bug, the newest not.
UNLOADABLE_AT_THE_DATE_HISTORY = [
    Step("Build against tinyrt 13", UNLOADABLE, release="0.1"),
    Step("Vectorized scale", BAD, release="0.2"),
    Step("Release 0.3", BAD, release="0.3"),
    Step("Fix the vectorized tail", GOOD, release="0.4"),
]


@pytest.fixture(scope="module")
def unloadable_at_the_date_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from index_of_releases(tmp_path_factory, "tinycc-unloadable", UNLOADABLE_AT_THE_DATE_HISTORY)


@pytest.mark.slow  # builds an environment per release judged
def test_where_the_release_of_the_issues_date_cannot_judge_the_next_one_is_tried(
    tmp_path: Path, unloadable_at_the_date_index: str
) -> None:
    """0.1 (the oldest, where the index gives no dates) cannot load and 0.4 has the bug fixed: both
    ends told nothing, and the draft stopped at locate. A triager tries the next release, 0.2."""
    with serving() as fake:
        url = opened(fake, 14, MISMATCH_ISSUE)
        done = run_import(tmp_path, fake, unloadable_at_the_date_index, url, "--no-reduce")
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "locate: shows on cpu:interpreter under tinycc==0.2" in said, said
    assert "bisect: shows from tinycc==0.2 … tinycc==0.3; first fixed tinycc==0.4" in said, said
    assert "verify: PROVEN" in said, said


STATED_ISSUE = """`tinycc.scale(3.0)` returns 7.0 instead of 6.0 since 0.3.

```python
import tinycc

print(tinycc.scale(3.0))
```
"""


# The same bug, stated as two output blocks and the words above them.
STATED_AS_OUTPUTS_ISSUE = """Since 0.3 the scale is off.

```python
import tinycc

print(tinycc.scale(3.0))
```

Running this on main gives:

```
me@box042 ~/src $ python repro.py
7.0
```

On 0.2 it gives (what I think is) the correct answer:
```
me@box042 ~/src $ python repro.py
6.0
```
"""


@pytest.mark.slow  # builds an environment per release judged
@pytest.mark.parametrize(("number", "body"), [(11, STATED_ISSUE), (15, STATED_AS_OUTPUTS_ISSUE)])
def test_an_issue_stating_a_wrong_value_becomes_a_proven_draft_judged_against_it(
    tmp_path: Path, index: str, number: int, body: str
) -> None:
    """No exception, no assertion: the issue only says what the code prints and what it should, in
    a sentence or as output blocks. The draft judges the printed value against both, so it FAILs
    from 0.3 and holds at 0.2."""
    with serving() as fake:
        done = run_import(tmp_path, fake, index, opened(fake, number, body), "--no-reduce")
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "stated: expected [6.0], wrong [7.0]" in said
    assert "locate: shows on cpu:interpreter under tinycc==0.4" in said
    assert "bisect: shows from tinycc==0.3 … tinycc==0.4; no release without it" in said
    manifest = tomllib.loads((tmp_path / "corpus" / f"tinycc_{number}_draft" / "case.toml").read_text())
    assert manifest["reproduce"]["good"] == ["tinycc==0.2"] and manifest["reproduce"]["bad"] == [
        "tinycc==0.3"
    ]
    assert "verify: PROVEN" in said


@pytest.mark.slow  # builds an environment per release judged
def test_a_stated_value_the_code_never_prints_is_never_taken_for_the_bug(tmp_path: Path, index: str) -> None:
    body = STATED_ISSUE.replace("print(tinycc.scale(3.0))", "tinycc.scale(3.0)")
    with serving() as fake:
        done = run_import(tmp_path, fake, index, opened(fake, 12, body), "--no-reduce")
    said = done.stdout + done.stderr
    assert done.returncode == 65, said
    assert "the output shows neither of the values the issue states" in said
    assert not any((tmp_path / "corpus").iterdir())


@pytest.mark.parametrize(
    ("text", "expected", "wrong"),
    [
        ("`tl.sum` returns 7.0 instead of 6.0", (6.0,), (7.0,)),
        ("I expected 6.0, but got 7.0 on the H100", (6.0,), (7.0,)),
        ("Expected [0, 2, 4, 6] but the kernel returns [0, 2, 4, 7]", (0, 2, 4, 6), (0, 2, 4, 7)),
        ("the result should be 1e-3 but it is 0.5", (1e-3,), (0.5,)),
        ("got tensor(7.) instead of tensor(6.)", (6.0,), (7.0,)),
        ("```\nexpected: 6.0\nactual: 7.0\n```", (6.0,), (7.0,)),
        ("TypeError: expected 3 arguments, got 2", None, None),  # an error's words, not a value
        ("it was expected 3 arguments, got 2", None, None),
        ("the sum is 12 for 3 elements", None, None),
    ],
)
def test_the_values_an_issue_states_are_read_apart_from_the_numbers_of_its_errors(
    text: str, expected: tuple | None, wrong: tuple | None
) -> None:
    from kregress.bisect.triage.stated import stated_values

    found = stated_values([text])
    if expected is None:
        assert found is None, found
    else:
        assert found is not None and (found.expected, found.wrong) == (expected, wrong)


def test_output_blocks_the_prose_calls_expected_and_wrong_are_stated_values() -> None:
    """ "Output (incorrect, ...):" / "Expected output:" above two blocks, or one block called the
    correct answer beside one the prose says nothing of: the reporter's stated values, less a
    tensor's device and dtype and the shell's prompt. An environment block is no wrong output."""
    labelled = (
        "Output (incorrect, only the first is written):\n\n```\nout tensor([ 5, -1, -1], "
        "device='cuda:0', dtype=torch.int32)\n```\n\nExpected output (as TRITON_INTERPRET=1 gives):\n"
        "```\nout tensor([ 5,  1,  7], device='cuda:0', dtype=torch.int32)\n```\n"
    )
    stated = extract(issue("```python\nimport triton\nprint(1)\n```\n" + labelled)).stated
    assert stated is not None and (stated.expected, stated.wrong) == ((5.0, 1.0, 7.0), (5.0, -1.0, -1.0))
    environment = "```\nPython 3.12.1, torch 2.7.0, CUDA 12.8\n```\n\nExpected output:\n```\n[1, 2]\n```\n"
    assert extract(issue("```python\nimport triton\nprint(1)\n```\n" + environment)).stated is None
    # each text's blocks pair among themselves: the body's expected one and a comment's output are not
    body = "```python\nimport triton\n```\nExpected output:\n```\n[1, 2]\n```\n"
    comment = UpstreamIssue(**{**issue(body).__dict__, "comments": ["```\n[3, 4]\n```"]})
    assert extract(comment).stated is None


def test_printed_values_are_judged_against_the_stated_ones_and_neither_cannot_tell() -> None:
    from kregress.child_results import CaseError
    from kregress.pasted import judge_stated

    stated = {"expected": [0.0, 2.0, 4.0, 6.0], "wrong": [0.0, 2.0, 4.0, 7.0]}
    got, want = judge_stated("tensor([0., 2., 4., 7.])", stated)
    assert list(got) != list(want)  # the wrong value printed: a mismatch
    got, want = judge_stated("[0. 2. 4. 6.]", stated)
    assert list(got) == list(want)
    got, want = judge_stated("out [0. 2. 4. 7.]\nref [0. 2. 4. 6.]", stated)  # the reference printed too
    assert list(got) != list(want)
    with pytest.raises(CaseError, match="neither"):
        judge_stated("done", stated)
    with pytest.raises(CaseError, match="both"):  # 0 and 1: any output may print them
        judge_stated("0 1", {"expected": [1.0], "wrong": [0.0]})


SCOPE_ISSUE = {
    "title": "[AMD] atomic_add ignores scope",
    "created_at": "2025-01-20T00:00:00Z",
    "body": "\n".join(
        [
            "On MI300X a histogram whose bins belong to one program asks for block-scoped atomics:",
            "",
            "```python",
            "import torch",
            "import triton",
            "import triton.language as tl",
            "",
            "",
            "@triton.jit",
            "def histogram(values, bins, N: tl.constexpr, BINS: tl.constexpr):",
            "    offs = tl.program_id(0) * N + tl.arange(0, N)",
            "    slot = tl.load(values + offs) % BINS",
            "    one = tl.full([N], 1, tl.int32)",
            '    tl.atomic_add(bins + tl.program_id(0) * BINS + slot, one, scope="cta")',
            "",
            "",
            "values = torch.randint(0, 100, (512,), device='cuda', dtype=torch.int32)",
            "bins = torch.zeros(32, device='cuda', dtype=torch.int32)",
            "histogram[(2,)](values, bins, N=256, BINS=16)",
            "```",
            "",
            'The LLVM IR emits `syncscope("agent")` where `syncscope("workgroup")` is expected.',
        ]
    ),
}


def test_a_spelling_names_its_stage_by_the_words_around_it_or_by_how_it_is_written() -> None:
    """PTX instructions say they are PTX (`div.full.f32`) where no word does; TileLang's reporters
    call its generated code "the generated CUDA code"; "lowers to `X`, not `Y`" states both."""
    from kregress.bisect.triage.stated import stated_spelling

    ptx = stated_spelling(["`x / y` emits `div.full.f32` instead of `div.rn.f32` at fp32 midpoints"])
    assert ptx is not None and (ptx.stage, ptx.wrong, ptx.right) == ("ptx", "div.full.f32", "div.rn.f32")
    comma = stated_spelling(["Triton's `/` lowers to `div.full.f32` (<= 2 ULP), not `div.rn.f32` (IEEE 754)"])
    assert comma is not None and (comma.stage, comma.wrong, comma.right) == (
        "ptx",
        "div.full.f32",
        "div.rn.f32",
    )
    # words of no stage, spellings of no stage: nothing to check
    assert stated_spelling(["the kernel uses `acc` instead of `out`"]) is None
    cuda = "The generated CUDA code uses `make_longlong4` where `make_int4` is expected."
    source = stated_spelling([cuda], "tilelang")
    assert source is not None and (source.stage, source.wrong) == ("cuda_source", "make_longlong4")
    assert stated_spelling([cuda], "triton") is None  # Triton has no CUDA source stage


@pytest.mark.slow
def test_an_issue_naming_a_wrong_spelling_of_the_generated_code_becomes_a_proven_ir_draft(
    tmp_path: Path,
) -> None:
    """No error at all: the issue says which spelling the LLVM IR has and which it should. The draft's
    `ir` check FAILs on gfx942 under the releases that emit it and holds from the one that fixed it."""
    code, said = import_saved(tmp_path, "https://github.com/triton-lang/triton/issues/5570", SCOPE_ISSUE)
    assert code == 0, said
    assert 'stated: the generated llir has `syncscope("agent")`' in said
    assert "locate: shows on hip:gfx942" in said and "first fixed triton==3.3.0" in said, said
    assert "verify: PROVEN" in said
    (draft,) = (tmp_path / "corpus").glob("*_draft")
    manifest = tomllib.loads((draft / "case.toml").read_text())
    (ir,) = manifest["expect"]
    assert (ir["kind"], ir["stage"], ir["max_count"]) == ("ir", "llir", 0)
    assert manifest["known_bad"][0]["versions"].endswith(",<3.3.0")


# The launch cut off: the kernel, its tensors and its block size are all in the paste.
CUT_LAUNCH = {**BF16_ISSUE, "body": BF16_ISSUE["body"].replace(
    "src = torch.randn", "BLOCK = 128\nsrc = torch.randn").replace(
    "accumulate[(2,)](src, dst, 256, BLOCK=128)", "accumulate[(2,)](src, dst, 2")}  # fmt: skip
# A TileLang kernel factory the paste defines and never calls.
# A barrier TileLang leaves out between a shared slot's atomic bump and its read (written here after
# tilelang#1257's kind of report): the title names what the generated CUDA lacks.
MISSING_SYNC_ISSUE = {
    "title": "[BUG] Missing `__syncthreads()` after `T.atomic_add` in the generated CUDA source",
    "created_at": "2025-11-20T00:00:00Z",
    "labels": ["bug"],
    "body": "\n".join(
        [
            "Each thread bumps its neighbour's slot and reads its own back: no barrier between.",
            "",
            "```python",
            "import tilelang",
            "import tilelang.language as T",
            "",
            "",
            "@tilelang.jit",
            "def neighbours(n: int):",
            "    @T.prim_func",
            '    def bump(out: T.Tensor[(n,), "int32"]):',
            "        with T.Kernel(1, threads=n):",
            '            slots = T.alloc_shared((n,), "int32")',
            "            t = T.get_thread_binding(0)",
            "            slots[t] = 0",
            "            T.atomic_add(slots[(t + 1) % n], 1)",
            "            out[t] = slots[t]",
            "",
            "    return bump",
            "",
            "",
            "print(neighbours(32).get_kernel_source())",
            "```",
            "",
        ]
    ),
}
# Shared memory written only by the threads of a branch, then read by all: TileLang before 0.1.7.post3
# put its partial barrier inside the branch (written here after tilelang#1604's kind of report).
MISPLACED_SYNC_ISSUE = {
    "title": "[BUG] Wrong `__sync_thread_partial` placement when a branch fills shared memory",
    "created_at": "2026-01-10T00:00:00Z",
    "labels": ["bug"],
    "body": "\n".join(
        [
            "Only the first 64 threads fill the tables; every thread reads one back.",
            "",
            "```python",
            "import tilelang",
            "import tilelang.language as T",
            "",
            "",
            "@tilelang.jit",
            "def tables(n: int):",
            "    @T.prim_func",
            '    def first(out: T.Tensor[(n,), "float32"]):',
            "        with T.Kernel(1, threads=n):",
            '            lo = T.alloc_shared((64,), "float32")',
            '            hi = T.alloc_shared((64,), "float32")',
            "            t = T.get_thread_binding()",
            "            if t < 64:",
            "                lo[t] = t * 2",
            "                hi[t] = t * 3",
            "            out[t] = lo[t % 64]",
            "",
            "    return first",
            "",
            "",
            "print(tables(256).get_kernel_source())",
            "```",
            "",
        ]
    ),
}
# A factory whose paste ends after its kernel's last whole statement (its return and call lost): a
# fold TileLang's layout inference refused before 0.1.7.post2 (written here after tilelang#1374's kind)
CUT_FACTORY_ISSUE = {
    "title": "[BUG] Layout inference fails when a fragment is folded into a narrower one",
    "created_at": "2025-12-03T00:00:00Z",
    "labels": ["bug"],
    "body": "\n".join(
        [
            "Folding columns of a fragment by `j // 32` needs the narrow fragment replicated:",
            "",
            "```python",
            "import tilelang",
            "import tilelang.language as T",
            "",
            "",
            "@tilelang.jit",
            "def fold(M: int = 1024):",
            "    @T.prim_func",
            '    def main(A: T.Tensor((32, 7), "int32"), B: T.Tensor((32, 224), "int32")):',
            "        with T.Kernel(1, threads=128):",
            '            narrow = T.alloc_fragment((32, 7), "int32")',
            "            T.copy(A, narrow)",
            "            for i, j in T.Parallel(32, 224):",
            "                narrow[i, j // 32] += B[i, j]",
            "",
        ]
    ),
}

# Two kernels compiled one after the other, the first one fine, the second refused by TileLang
# before 0.1.7 (a row number loaded inside `T.Pipelined`, written here after tilelang#1210's kind of
# report): "the plain one compiles, the pipelined one raises".
SECOND_COMPILE_ISSUE = {
    "title": "[BUG] T.Pipelined refuses a loop that loads its row number",
    "created_at": "2025-11-08T00:00:00Z",
    "labels": ["bug"],
    "body": "\n".join(
        [
            "Same loop, `T.serial` compiles, `T.Pipelined` does not:",
            "",
            "```python",
            "import tilelang",
            "import tilelang.language as T",
            "",
            "",
            "@tilelang.jit",
            "def serial_gather(steps: int):",
            "    @T.prim_func",
            '    def main(Table: T.Tensor((4, 4), "float32"), Rows: T.Tensor((steps,), "int32")):',
            "        with T.Kernel(steps, threads=1):",
            '            row = T.alloc_shared((4,), "float32")',
            "            for step in T.serial(steps):",
            "                T.copy(Table[Rows[step], :], row)",
            "",
            "    return main",
            "",
            "",
            "@tilelang.jit",
            "def pipelined_gather(steps: int):",
            "    @T.prim_func",
            '    def main(Table: T.Tensor((4, 4), "float32"), Rows: T.Tensor((steps,), "int32")):',
            "        with T.Kernel(steps, threads=1):",
            '            row = T.alloc_shared((4,), "float32")',
            '            staged = T.alloc_shared((4,), "float32")',
            "            for step in T.Pipelined(steps, num_stages=1):",
            "                picked = Rows[step]",
            "                T.copy(Table[picked, :], row)",
            "                T.clear(staged)",
            "",
            "    return main",
            "",
            "",
            "serial_gather(4)  # compiles",
            "pipelined_gather(4)  # raises",
            "```",
            "",
            "```",
            "ValueError: Check failed: undefined.size() == 0 : In PrimFunc main variables [step] are used, "
            "but are not passed in as API arguments",
            "```",
        ]
    ),
}


# The same, its reference taken from a package this machine lacks, used only after the compiles.
ABSENT_REFERENCE_ISSUE = {
    **SECOND_COMPILE_ISSUE,
    "body": SECOND_COMPILE_ISSUE["body"]
    .replace("import tilelang\n", "import tilelang\nfrom flash_attn import flash_attn_func\n", 1)
    .replace("pipelined_gather(4)  # raises", "out = pipelined_gather(4)  # raises\nflash_attn_func(out)"),
}


FACTORY_NEVER_CALLED = {**SELECT_ISSUE, "body": SELECT_ISSUE["body"].replace(
    "@tilelang.jit\ndef make():", "def make(N):").replace("\nmake()\n", "\n")}  # fmt: skip


def test_a_kernel_never_launched_is_completed_with_what_its_body_and_the_paste_imply() -> None:
    from kregress.bisect.triage.complete import completion_for

    code = extract(issue(CUT_LAUNCH["body"], CUT_LAUNCH["title"])).code
    completion = completion_for(code, "triton")
    assert completion is not None and completion.function == "accumulate"
    assert completion.pointers == {"src": "bfloat16", "dst": "bfloat16"}  # the tensors of those names
    assert completion.values == {"BLOCK": 128} and completion.scalars == ("n",) and not completion.missing
    assert "src, dst as bfloat16 pointers; n as 1024; BLOCK=128" in completion.said()
    # Without the constant, BLOCK only sizes a block (`tl.arange(0, BLOCK)`): any power of two, said
    bare = completion_for(code.replace("BLOCK = 128\n", ""), "triton")
    assert bare is not None and bare.values == {"BLOCK": 16} and not bare.missing
    assert "BLOCK as 16 (blocks' sizes in its body" in bare.said() and "BLOCK=16" not in bare.said()
    # ... but a value the kernel also compares steers it: named, never guessed
    steered = completion_for(code.replace("BLOCK = 128\n", "").replace("m = offs < n", "m = offs < BLOCK"),
                             "triton")  # fmt: skip
    assert steered is not None and steered.missing == ("BLOCK",) and "no value for BLOCK" in steered.said()


def test_a_tilelang_factorys_buffer_sizes_are_implied_its_dtypes_only_as_the_paste_names_one() -> None:
    from kregress.bisect.triage.complete import completion_for

    code = (
        "import tilelang\nimport tilelang.language as T\n\n\n"
        "def copy(M, N, block_M, dtype, threads=128):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((M, N), dtype), B: T.Tensor[(M, N), dtype]):\n"
        "        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:\n"
        "            s = T.alloc_shared((block_M, N), dtype)\n"
        "            T.copy(A[bx * block_M, 0], s)\n"
        "            T.copy(s, B[bx * block_M, 0])\n"
        "    return main\n"
    )
    completion = completion_for(code, "tilelang")
    assert completion is not None and completion.implied == ("M", "N", "block_M")
    assert completion.missing == ("dtype",)  # the paste names no dtype: none is made up
    assert completion.values == {"threads": 128, "M": 64, "N": 64, "block_M": 64}
    assert "M, N, block_M as 64: sizes of its buffers, grid or loops" in completion.said()
    # The paste's own code names a dtype (its cut call's tensors, another default): the buffers'
    # dtype it gives none is that one, as a triager completes the call (before: an ERROR "no value
    # for dtype" at every release)
    named = "x = torch.zeros(8, dtype=torch.bfloat16)\ny = torch.ones(8, dtype=torch.bfloat16)\n"
    typed = completion_for(code + named + "z = T.float16\n", "tilelang")
    assert typed is not None and typed.typed == ("dtype",) and not typed.missing
    assert typed.values["dtype"] == "bfloat16"
    assert "dtype: dtypes of its buffers, which the paste gives no value for" in typed.said()
    assert "dtype='bfloat16'" in typed.said()
    # an accumulator's dtype is float32; a dtype the code compares, or hands on as a keyword, steers
    accum = code.replace("dtype, threads=128", "dtype, accum_dtype, threads=128").replace(
        "s = T.alloc_shared((block_M, N), dtype)", "s = T.alloc_shared((block_M, N), dtype)\n"
        "            f = T.alloc_fragment((block_M,), accum_dtype)"
    )  # fmt: skip
    both = completion_for(accum + named, "tilelang")
    assert both is not None and both.values["accum_dtype"] == "float32" and both.values["dtype"] == "bfloat16"
    compared = code.replace("    return main", "    assert dtype != 'float8'\n    return main")
    assert completion_for(compared + named, "tilelang").missing == ("dtype",)  # type: ignore[union-attr]
    steered = completion_for(code.replace("    return main", "    assert M > 4\n    return main"), "tilelang")
    assert steered is not None and "M" in steered.missing


def test_a_size_the_factory_computes_from_a_parameter_makes_the_parameter_a_size() -> None:
    """`aligned = (n + 31) // 32 * 32` sizing a fragment: `n` is a size as much as `aligned` (the
    draft was an ERROR "no value for n" at every release); one compared after it steers."""
    from kregress.bisect.triage.complete import completion_for

    code = (
        "import tilelang\nimport tilelang.language as T\n\n\n@tilelang.jit\n"
        "def gate(n: int):\n    threads = 32\n    aligned = (n + threads - 1) // threads * threads\n\n"
        "    @T.prim_func\n    def main():\n        with T.Kernel(1, threads=threads) as pid:\n"
        "            f = T.alloc_fragment((aligned,), T.int32)\n            T.fill(f, 0)\n"
        "    return main\n"
    )
    completion = completion_for(code, "tilelang")
    assert completion is not None and completion.implied == ("n",) and not completion.missing
    assert completion.values == {"n": 64}
    steered = completion_for(code.replace("    return main", "    assert n > 4\n    return main"), "tilelang")
    assert steered is not None and steered.missing == ("n",)
    # only arithmetic makes a size: a flag choosing between sizes, and a dtype whose width a call
    # reads, steer it and stay missing (never called with 64)
    chosen = code.replace("def gate(n: int):", "def gate(n: int, wide):").replace(
        "aligned = (n + threads - 1) // threads * threads", "aligned = n * 2 if wide else n"
    )  # fmt: skip
    flagged = completion_for(chosen, "tilelang")
    assert flagged is not None and flagged.implied == ("n",) and flagged.missing == ("wide",)
    widths = code.replace("def gate(n: int):", "def gate(n: int, dtype):").replace(
        "aligned = (n + threads - 1) // threads * threads", "aligned = n * T.DataType(dtype).bits // 8"
    )  # fmt: skip
    width = completion_for(widths, "tilelang")
    assert width is not None and width.implied == ("n",) and width.missing == ("dtype",)


def test_a_fence_in_a_sentence_is_inline_code_never_a_block() -> None:
    """ "places ```__syncthreads()``` inside a loop": GitHub opens a block only at a line's start; read
    as a fence, it swallowed the kernel's real one and the issue held no code."""
    body = (
        "The compiler places ```__syncthreads()``` inside a vectorized loop.\n\n```python\n"
        "@T.prim_func\ndef k(a: T.Tensor[(4,), 'int32']):\n    with T.Kernel(1, threads=4):\n"
        "        a[0] = 1\n```\n"
    )
    from kregress.bisect.triage.quotes import code_blocks

    evidence = extract(issue(body))
    assert evidence.blocks == 1 and "@T.prim_func\ndef k(" in evidence.code
    quoted = "> ```python\n> import triton\n> ```\n"
    assert code_blocks(quoted)[0][0][0] == "python"  # a fence in a quote starts its line


def test_a_prim_func_pasted_without_its_factory_has_its_free_sizes_bound() -> None:
    """`T.Tensor[(m,), "int32"]` with `m` bound nowhere (the factory that sized it left out): the
    paste's NameError was the draft's ERROR at every release; a free name that is no size stays."""
    from kregress.bisect.triage.complete import with_free_sizes_bound

    kernel = (
        "import tilelang.language as T\n\n\n@T.prim_func\n"
        "def k(a: T.Tensor[(m,), 'int32'], b: T.Tensor[(m,), 'int32']):\n"
        "    with T.Kernel(T.ceildiv(m, 32), threads=32) as bx:\n        b[bx] = a[bx]\n"
    )
    code, said = with_free_sizes_bound(kernel)  # type: ignore[misc]
    assert "m = 64\n\n@T.prim_func\ndef k(" in code and said.startswith("m, which the paste never binds")
    assert compile(code, "k.py", "exec") is not None
    assert with_free_sizes_bound(kernel.replace("b[bx] = a[bx]", "b[bx] = a[bx + off]")) is None
    assert with_free_sizes_bound(kernel.replace("\n\n\n@T", "\nm = 8\n\n@T")) is None  # bound
    evidence = extract(issue(f"```python\n{kernel}```\n"))
    assert any("bound to 64 before the kernel" in said for said in evidence.repairs)


def test_a_compiler_error_quoted_inline_in_a_sentence_ends_at_its_quote() -> None:
    from kregress.bisect.triage.quotes import quoted_errors

    said = "It raises `error: Can't deduce copy extents from args`, the error is raised by `T.copy(x)`."
    assert quoted_errors(said) == ["error: Can't deduce copy extents from args"]
    assert quoted_errors("ptxas error   : Entry function uses too much data") == [
        "ptxas error   : Entry function uses too much data"
    ]


def test_a_factorys_grid_loop_and_tile_offset_sizes_are_implied_its_defaults_kept() -> None:
    """`block_M` only in `T.ceildiv(M, block_M)` and a tile's offset `bx * block_M` is a size; a
    default the code gives that is no literal (`T.float16`) is the code's, never missing."""
    from kregress.bisect.triage.complete import completion_for

    code = (
        "import tilelang.language as T\n\n\n"
        "def broadcast(M, N, block_M, stages, src_dtype=T.float16, dst_dtype=T.float16):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((M, N), src_dtype), B: T.Tensor((M,), dst_dtype)):\n"
        "        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:\n"
        "            for k in T.Pipelined(T.ceildiv(N, 32), num_stages=stages):\n"
        "                T.copy(A[bx * block_M : (bx + 1) * block_M], B[bx * block_M : (bx + 1) * block_M])\n"
        "    return main\n"
    )
    completion = completion_for(code, "tilelang")
    assert completion is not None and completion.implied == ("M", "N", "block_M")
    assert completion.defaulted == ("src_dtype", "dst_dtype") and "src_dtype" not in completion.values
    assert completion.missing == ("stages",)  # handed on as a keyword: steers, never a size
    assert "src_dtype, dst_dtype left at the defaults the code gives" in completion.said()
    literal = completion_for(code.replace("src_dtype=T.float16", "src_dtype='float16'"), "tilelang")
    assert (
        literal is not None
        and literal.values["src_dtype"] == "float16"
        and literal.defaulted == ("dst_dtype",)
    )


def test_an_error_quoted_inline_in_a_sentence_ends_at_its_quote() -> None:
    from kregress.bisect.triage.quotes import quoted_errors

    said = "It throws `IndexError: Variable is not defined: bx] mismatched, the buffer is A`: unclear."
    assert quoted_errors(said) == ["IndexError: Variable is not defined: bx] mismatched, the buffer is A"]
    doubled = 'and throws "TypeError: Check failed: (a == b) is false: int64 vs. int32" here.'
    assert "TypeError: Check failed: (a == b) is false: int64 vs. int32" in quoted_errors(doubled)
    assert quoted_errors("it will report InterpreterError: TypeError(x). Then") == [
        "InterpreterError: TypeError(x)"
    ]


def test_block_sizes_are_the_names_that_size_blocks_and_steer_nothing() -> None:
    import ast

    from kregress.bisect.triage.complete import block_sizes

    kernel = ast.parse(
        "def k(p, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, S: tl.constexpr, F: tl.constexpr):\n"
        "    a = tl.zeros([M, K], dtype=tl.float32)\n"
        "    d = tl.make_block_ptr(p, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(M, N),"
        " order=(1, 0))\n"
        "    r = tl.reshape(a, (M * K,))\n"
        "    if S > 2:\n        F = 1\n"
    ).body[0]
    assert block_sizes(kernel) == {"M", "N", "K"}  # S steers; F sizes nothing


LAUNCHED_ON_A_GPU = """```python
import torch
import triton
import triton.language as tl

@triton.jit
def bump(x_ptr, stride, ROWS: tl.constexpr, COLS: tl.constexpr = 8):
    offsets = tl.arange(0, ROWS)[:, None] * stride + tl.arange(0, COLS)[None, :]
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) + 1)

if __name__ == "__main__":
    rows, cols = 2, 4
    x = torch.ones((rows, cols), dtype=torch.float64, device="cuda")
    bump[(1,)](x_ptr=x, stride=x.stride(0), ROWS=rows, COLS=cols)
```
"""


def test_a_combine_function_handed_to_a_scan_is_never_the_kernel_compiled() -> None:
    """`tl.associative_scan(x, 0, combine_fn=op)` hands `op` over without calling it: compiled
    alone as the draft's kernel (its four scalars as 1024), every release failed a pass, and on XPU
    crashed: failures of a function that is no kernel, never the compiler's bug."""
    from kregress.bisect.triage.complete import completion_for

    code = (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef op(fl, xl, fr, xr):\n"
        "    return fr * fl, fr * xl + xr\n\n\n@triton.jit\n"
        "def scan(f_ptr, x_ptr, BS: tl.constexpr):\n    r = tl.arange(0, BS)\n"
        "    f, x = tl.associative_scan((tl.load(f_ptr + r), tl.load(x_ptr + r)), 0, combine_fn=op)\n"
        "    tl.store(f_ptr + r, f)\n    tl.store(x_ptr + r, x)\n"
    )
    completion = completion_for(code, "triton")
    assert completion is not None and completion.function == "scan"
    assert completion.implied == ("BS",) and not completion.missing  # a block's size: any power of two


def test_a_launch_that_cannot_run_here_gives_the_kernel_the_values_it_was_launched_with() -> None:
    """The launch's tensors are on a GPU, so the kernel is compiled instead: with what the reporter
    launched it with (keywords naming the script's constants, in its main block), a default
    overridden, and each pointer typed as the tensor passed for it."""
    from kregress.bisect.triage.complete import completion_for

    code = extract(issue(LAUNCHED_ON_A_GPU, "bump fails")).code
    completion = completion_for(code, "triton")
    assert completion is not None and completion.function == "bump"
    assert completion.values == {"ROWS": 2, "COLS": 4} and not completion.missing
    assert completion.pointers == {"x_ptr": "float64"} and completion.scalars == ("stride",)
    # Launched positionally from a function, with its own constants.
    inside = code.replace(
        'if __name__ == "__main__":\n    rows, cols = 2, 4', "def main():\n    rows = 2\n    cols = rows"
    ).replace("bump[(1,)](x_ptr=x, stride=x.stride(0), ROWS=rows, COLS=cols)", "bump[(1,)](x, 4, rows, cols)")
    completion = completion_for(inside, "triton")
    assert completion is not None and completion.values == {"ROWS": 2, "COLS": 2, "stride": 4}
    assert completion.scalars == () and not completion.missing


def test_a_tilelang_factory_never_called_is_called_with_the_values_the_paste_gives() -> None:
    from kregress.bisect.triage.complete import completion_for

    code = extract(issue(FACTORY_NEVER_CALLED["body"], FACTORY_NEVER_CALLED["title"])).code
    completion = completion_for(code, "tilelang")
    assert completion is not None
    assert (completion.function, completion.values, completion.call) == ("make", {"N": 8}, True)
    called = completion_for(extract(issue(SELECT_ISSUE["body"], SELECT_ISSUE["title"])).code, "tilelang")
    assert called is not None and called.function == "make"  # used only where nothing is compiled


def test_a_factory_cut_before_its_return_returns_its_kernel_never_none() -> None:
    """A paste cut inside its kernel at a statement's end still parses; its factory then returns
    None, which TileLang refuses ("target function must be a PrimFunc but got NoneType") in every
    release from 0.1.7: a draft had been PROVEN on that refusal. The factory that ends the paste
    returns the one prim_func it holds, as a triager finishes it, said among the repairs; one that
    returns nothing and does not end the paste is the code's own, and stops at extract; the whole
    factory pasted again below is the one that runs."""
    from kregress.bisect.triage.importer import ImportStopped
    from kregress.errors import ExitCode

    whole = SELECT_ISSUE["body"]
    cut = whole.split("                dst[i] =")[0]  # the store, the return and the call lost
    finished = extract(issue(cut, SELECT_ISSUE["title"]))
    assert finished.code.rstrip().endswith("                x = src[i]\n    return pick")
    assert any("ends inside the kernel factory `make`" in said for said in finished.repairs)
    assert finished.completion is not None and finished.completion.function == "make"
    inside = cut.replace(
        "@tilelang.jit\ndef make", "def unused():\n    return 1\n\n\n@tilelang.jit\ndef make"
    )
    assert "return pick" in extract(issue(inside, SELECT_ISSUE["title"])).code
    own = cut + "\n\n\nmake()\n"  # not the paste's end: the code's own factory returns nothing
    with pytest.raises(ImportStopped) as stopped:
        extract(issue(own, SELECT_ISSUE["title"]))
    assert stopped.value.step == "extract" and stopped.value.code == ExitCode.NO_REPRO
    assert "`make` holds a @T.prim_func and returns nothing" in stopped.value.why
    assert extract(issue(whole, SELECT_ISSUE["title"])).completion is not None
    again = issue(cut + "\n```\n\nThe whole code:\n\n" + whole, SELECT_ISSUE["title"])
    assert "return pick" in extract(again).code


def test_a_factory_is_called_with_what_it_asserts_and_none_for_what_it_never_reads() -> None:
    """`assert nstr == 4` gives nstr; `out`, which only the inner prim_func's own parameter of the
    same name reads, may be anything; `rows`, read by an annotation in the factory's scope, may not
    (it sizes a buffer there: given a tile's size)."""
    from kregress.bisect.triage.complete import completion_for

    code = (
        "import tilelang\nimport tilelang.language as T\n\n\n@tilelang.jit\n"
        "def make(out, rows, nstr: int, tile: int, threads: int = 128):\n"
        "    assert nstr == 4\n    assert 8 == tile\n\n    @T.prim_func\n"
        "    def main(out: T.Tensor([rows, nstr], 'float32')):\n"
        "        with T.Kernel(1, threads=threads) as bx:\n"
        "            T.clear(out)\n\n    return main\n"
    )
    completion = completion_for(code, "tilelang")
    assert completion is not None
    assert completion.values == {"nstr": 4, "tile": 8, "threads": 128, "rows": 64}  # rows sizes a buffer
    assert completion.unread == ("out",) and completion.missing == () and completion.implied == ("rows",)
    assert "out=None" in completion.said() and "rows as 64" in completion.said()


def test_the_child_compiles_the_completed_kernel_or_names_what_it_lacks(tmp_path: Path) -> None:
    import torch

    from kregress.bisect.triage.complete import completion_for
    from kregress.child_results import CaseError
    from kregress.pasted import capture_first_launch

    code = extract(issue(CUT_LAUNCH["body"], CUT_LAUNCH["title"])).code
    pasted = tmp_path / "pasted.py"
    pasted.write_text(code)
    completion = completion_for(code, "triton")
    assert completion is not None
    kernel = capture_first_launch(pasted, completion.as_data())
    arguments = kernel.args()
    assert list(arguments) == ["src", "dst", "n", "BLOCK"]
    assert arguments["src"].dtype == torch.bfloat16 and arguments["n"] == 1024 and arguments["BLOCK"] == 128
    with pytest.raises(CaseError, match="ran to its end without launching"):
        capture_first_launch(pasted)  # no completion: said as before
    lacking = completion_for(code.replace("BLOCK = 128\n", "").replace("m = offs < n", "m = offs < BLOCK"),
                             "triton")  # fmt: skip
    assert lacking is not None
    with pytest.raises(CaseError, match="gives no value for BLOCK"):
        capture_first_launch(pasted, lacking.as_data())


LEFT_FOR_PYTEST = """import torch
import triton
import triton.language as tl


@triton.jit
def double(x_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) * 2)


def launch(x):
    double[(1,)](x, BLOCK=16)


def test_double(n=16):
    x = torch.ones(n, device="cuda", dtype=torch.float16)
    launch(x)
    print("doubled to", x.sum().item())
"""


def test_a_function_that_runs_the_kernel_and_is_never_called_is_called_first(tmp_path: Path) -> None:
    """`def test_double():` left for pytest: a triager calls it. Its launch is the one captured
    for a compile target, and the interpreter runs it; a function the paste calls, or one that
    needs an argument, is no entry."""
    from kregress.bisect.triage.complete import completion_for
    from kregress.pasted import capture_first_launch

    completion = completion_for(LEFT_FOR_PYTEST, "triton")
    assert completion is not None and completion.entry == "test_double"  # `launch` is called by it
    assert completion.said().startswith("`test_double()`, defined to run the kernel and never called, is")
    called = completion_for(LEFT_FOR_PYTEST + "\n\ntest_double()\n", "triton")
    needs_one = completion_for(LEFT_FOR_PYTEST.replace("test_double(n=16)", "test_double(n)"), "triton")
    assert called is not None and called.entry is None and needs_one is not None and needs_one.entry is None
    launches_itself = completion_for(LEFT_FOR_PYTEST + "\n\nlaunch(torch.ones(16))\n", "triton")
    assert launches_itself is not None and launches_itself.entry is None  # its own run is the one judged
    pasted = tmp_path / "pasted.py"
    pasted.write_text(LEFT_FOR_PYTEST)
    kernel = capture_first_launch(pasted, completion.as_data())
    arguments = kernel.args()
    assert list(arguments) == ["x_ptr", "BLOCK"] and arguments["BLOCK"] == 16
    assert str(arguments["x_ptr"].dtype) == "torch.float16" and arguments["x_ptr"].numel() == 16  # its own
    runs = "import sys; from pathlib import Path; from kregress.pasted import run_pasted; " \
        "print(repr(run_pasted(Path(sys.argv[1]), 'cpu', eval(sys.argv[2]))))"  # fmt: skip
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", runs, str(pasted), repr(completion.as_data())], env=env,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0 and "doubled to 32.0" in done.stdout, done.stdout + done.stderr
    # without the completion nothing runs in the interpreter: nothing judged is never a PASS
    done = subprocess.run([sys.executable, "-c", runs, str(pasted), "None"], env=env,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode != 0 and "without launching a Triton kernel in the interpreter" in done.stderr
    # code with no @triton.jit of its own (a compiler's Python API called) is judged by what it printed
    api_only = tmp_path / "api_only.py"
    api_only.write_text("import triton\nimport numpy as np\nprint('sum', np.arange(4.0).sum())\n")
    done = subprocess.run([sys.executable, "-c", runs, str(api_only), "None"], env=env,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0 and "sum 6.0" in done.stdout, done.stdout + done.stderr


def test_what_counts_as_the_code_defining_a_triton_kernel() -> None:
    from kregress.pasted import defines_triton_kernel

    assert defines_triton_kernel("import triton\n@triton.jit\ndef k(x): pass\n")
    assert defines_triton_kernel("import triton\n@triton.jit(do_not_specialize=['n'])\ndef k(n): pass\n")
    assert defines_triton_kernel("from triton import jit as J\n@J\ndef k(x): pass\n")
    assert defines_triton_kernel("import triton as tr\n@tr.jit\ndef k(x): pass\n")
    assert not defines_triton_kernel("import numba\n@numba.jit\ndef k(x): pass\n")
    assert not defines_triton_kernel("from numba import jit\n@jit\ndef k(x): pass\n")
    assert not defines_triton_kernel("import tinycc\nprint(tinycc.scale(1))\n")
    assert not defines_triton_kernel("@triton.jit\ndef k(:\n")  # not Python: the run says so


PARSED_NOT_LAUNCHED = """import triton
import triton.language as tl
from triton._filecheck import run_parser


@triton.jit
def kernel():
    vals: tl.constexpr = [a + b for a, b in ((1, 2), (3, 4))]
    tl.static_assert(vals[0] == 3)


run_parser(kernel)
"""


def test_a_compiler_failure_before_any_launch_is_judged_as_the_kernels_compile(tmp_path: Path) -> None:
    """The code asks Triton's parser for its kernel (no launch): under 3.6 the frontend raises on
    the comprehension's tuple target. For a compile target the kernel the code defines is then
    compiled, where the same frontend fails: a verdict of the compile, not an ERROR of the capture."""
    from triton.compiler.errors import CompilationError

    from kregress.bisect.triage.complete import completion_for
    from kregress.pasted import capture_first_launch

    pasted = tmp_path / "pasted.py"
    pasted.write_text(PARSED_NOT_LAUNCHED)
    completion = completion_for(PARSED_NOT_LAUNCHED, "triton")
    assert completion is not None and completion.function == "kernel" and not completion.missing
    kernel = capture_first_launch(pasted, completion.as_data())
    assert kernel.fn.__name__ == "kernel" and kernel.args() == {}
    with pytest.raises(CompilationError, match="has no attribute 'id'"):
        capture_first_launch(pasted)  # no completion: the failure as it was
    # Triton's API refusing the code's use of it is the code's failure, never a compile in its place
    misused = PARSED_NOT_LAUNCHED.replace(
        "run_parser(kernel)", "blocks = tl.cdiv(64, 16)\nrun_parser(kernel)"
    )
    pasted.write_text(misused)
    with pytest.raises(Exception, match="outside of the scope of a kernel") as raised:
        capture_first_launch(pasted, completion_for(misused, "triton").as_data())  # type: ignore[union-attr]
    assert not isinstance(raised.value, CompilationError)


def test_code_failing_in_its_own_line_before_any_launch_is_completed_or_says_its_line(tmp_path: Path) -> None:
    """A paste that asks the kernel for what its release never had (`.asm` of a @triton.jit
    function, `get_kernel_source()` of a prim_func) fails in its own line before compiling anything:
    a triager compiles the kernel it defines. Without a completion it is the draft's ERROR naming
    that line, never an AttributeError that reads as the driver lacking `pasted_kernel`."""
    from kregress.bisect.triage.complete import completion_for
    from kregress.child_results import CaseError
    from kregress.pasted import capture_first_launch

    code = extract(issue(CUT_LAUNCH["body"], CUT_LAUNCH["title"])).code + "print(accumulate.asm['ptx'])\n"
    pasted = tmp_path / "pasted.py"
    pasted.write_text(code)
    completion = completion_for(code, "triton")
    assert completion is not None
    kernel = capture_first_launch(pasted, completion.as_data())
    assert list(kernel.args()) == ["src", "dst", "n", "BLOCK"]
    with pytest.raises(CaseError, match=r"own code fails at .*pasted.py:\d+: AttributeError: .*'asm'"):
        capture_first_launch(pasted)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("url", "saved", "bisected"),
    [
        ("https://github.com/triton-lang/triton/issues/1387", CUT_LAUNCH,
         "bisect: shows from triton==3.0.0 … triton==3.3.1; first fixed triton==3.4.0"),
        ("https://github.com/tile-ai/tilelang/issues/2682", FACTORY_NEVER_CALLED,
         "bisect: shows from tilelang==0.1.7 … tilelang==0.1.13; first fixed tilelang==0.1.14"),
        ("https://github.com/tile-ai/tilelang/issues/1374", CUT_FACTORY_ISSUE,
         "tilelang==0.1.7.post1; first fixed tilelang==0.1.7.post2"),
    ],
    ids=["cut-off-launch", "factory-never-called", "factory-cut-before-its-return"],
)  # fmt: skip
def test_what_a_triager_completes_becomes_a_proven_draft_with_the_right_range(
    tmp_path: Path, url: str, saved: dict, bisected: str
) -> None:
    """Both once stopped at "ran to its end without launching or compiling a kernel"."""
    code, said = import_saved(tmp_path, url, saved)
    assert code == 0, said
    assert "complete: if the code runs no kernel" in said and bisected in said and "verify: PROVEN" in said
    (draft,) = (tmp_path / "corpus").glob("*_draft")
    assert "## Completions, as a triager would make them" in (draft / "ISSUE.md").read_text()


@pytest.mark.slow
def test_a_spelling_the_generated_code_lacks_is_counted_against_the_newest_release(tmp_path: Path) -> None:
    """Missing `__syncthreads()`: the newest release's CUDA source has 2, so a release with fewer
    shows the bug; once stopped at locate (nothing quoted, every release compiles it)."""
    code, said = import_saved(tmp_path, "https://github.com/tile-ai/tilelang/issues/1257", MISSING_SYNC_ISSUE)
    assert code == 0, said
    assert "stated: the generated cuda_source lacks `__syncthreads()`" in said
    assert "has 2 of /__syncthreads\\(\\)/ in its cuda_source on cuda:sm_90: fewer shows the bug" in said
    assert "first fixed tilelang==0.1.8" in said and "verify: PROVEN" in said
    (draft,) = (tmp_path / "corpus").glob("*_draft")
    manifest = tomllib.loads((draft / "case.toml").read_text())
    ir = next(e for e in manifest["expect"] if e["name"] == "ir")
    assert (ir["pattern"], ir["min_count"]) == (r"__syncthreads\(\)", 2) and "max_count" not in ir
    assert "lacks `__syncthreads()`" in (draft / "ISSUE.md").read_text()


@pytest.mark.slow
def test_a_spelling_placed_inside_a_branch_is_counted_there_against_the_newest(tmp_path: Path) -> None:
    """`__sync_thread_partial` inside the branch: counted inside branches and loops, the newest
    release's count (0) the most. Before, no spelling was read from a placement: every release
    compiled the code, and the import stopped at locate."""
    url = "https://github.com/tile-ai/tilelang/issues/1604"
    code, said = import_saved(tmp_path, url, MISPLACED_SYNC_ISSUE)
    assert code == 0, said
    assert "stated: the generated cuda_source has `__sync_thread_partial` inside a branch or loop" in said
    assert "has 0 of /__sync_thread_partial/ in its cuda_source on cuda:sm_90: more shows the bug" in said
    assert "first fixed tilelang==0.1.7.post3" in said and "verify: PROVEN" in said
    (draft,) = (tmp_path / "corpus").glob("*_draft")
    ir = next(e for e in tomllib.loads((draft / "case.toml").read_text())["expect"] if e["name"] == "ir")
    assert (ir["inside"], ir["max_count"]) == ("branch_or_loop", 0) and "min_count" not in ir


@pytest.mark.slow
def test_a_later_compile_call_the_code_makes_before_using_a_kernel_is_judged_too(tmp_path: Path) -> None:
    """The first kernel compiles in every release; the second, compiled next, is the bug. Before,
    only the first compile call was captured: every release compiled it, and the import stopped at
    locate with the quoted error shown nowhere."""
    url = "https://github.com/tile-ai/tilelang/issues/1210"
    code, said = import_saved(tmp_path, url, SECOND_COMPILE_ISSUE, "--target", "cuda:sm_80")
    assert code == 0, said
    assert "1 of 2 configs did not compile | [call 2]" in said
    assert "first fixed tilelang==0.1.7" in said and "verify: PROVEN" in said


def test_a_package_the_code_imports_and_this_machine_lacks_stands_until_the_code_uses_it(
    tmp_path: Path,
) -> None:
    """A triager comments out the import of a package they lack: what runs before its first use
    runs; the use fails as the import would have (ModuleNotFoundError: never the compiler's), at the
    code's own line. An import inside a `try` asks whether it is there and is left alone."""
    from kregress.pasted import execute, fails_in_own_code

    paste = tmp_path / "pasted.py"
    paste.write_text(
        "import math\nimport plotting_package_absent as plt\nfrom reference_absent.ops import ref\n"
        "try:\n    import optional_absent\n    HAS = True\nexcept ImportError:\n    HAS = False\n"
        "ROOT = math.sqrt(4)\nref(ROOT)\n"
    )
    with pytest.raises(ModuleNotFoundError, match=r"No module named 'reference_absent\.ops'") as raised:
        execute(paste, paste.read_text())
    assert fails_in_own_code(paste, raised.value)
    assert not [name for name in sys.modules if name.endswith("_absent")]  # taken out again
    ran = execute(paste, paste.read_text().replace("ref(ROOT)\n", ""))
    assert ran.ROOT == 2.0 and ran.HAS is False


@pytest.mark.slow
def test_a_kernel_compiled_before_the_code_uses_a_package_it_lacks_is_judged(tmp_path: Path) -> None:
    """Before, the import of flash_attn failed the code's first lines in every release, and the
    import stopped at locate: "the code imports flash_attn, which is not installed here"."""
    url = "https://github.com/tile-ai/tilelang/issues/1210"
    code, said = import_saved(tmp_path, url, ABSENT_REFERENCE_ISSUE, "--target", "cuda:sm_80")
    assert code == 0, said
    assert "first fixed tilelang==0.1.7" in said and "verify: PROVEN" in said


def test_a_spelling_said_missing_is_stated_with_its_stage() -> None:
    from kregress.bisect.triage.stated import stated_missing

    title = "[BUG] Missing `__syncthreads()` after `AtomicAdd` in generated CUDA kernel"
    found = stated_missing([title], "tilelang")
    assert found is not None and (found.stage, found.right, found.wrong, found.missing) == (
        "cuda_source",
        "__syncthreads()",
        "",
        True,
    )
    ptx = stated_missing(["the kernel's PTX never emits it: `fence.proxy.async.shared` is missing"])
    assert ptx is not None and (ptx.stage, ptx.right) == ("ptx", "fence.proxy.async.shared")
    assert stated_missing(["The kernel is missing `x` here"], "tilelang") is None  # no stage said
    assert stated_missing(["a missing value in the CUDA source"], "tilelang") is None  # no spelling
    words = "The generated CUDA code is missing a required synchronization before reading shared memory."
    barrier = stated_missing([words], "tilelang")
    assert barrier is not None and barrier.stage == "cuda_source" and barrier.pattern is not None
    assert re.search(barrier.pattern, "  tl::__sync_thread_partial<3, 128>();") and barrier.missing
    assert re.search(barrier.pattern, "  __syncthreads();") and not re.search(barrier.pattern, "__shfl_sync(")
    assert "a barrier (/" in barrier.lacked()
    assert stated_missing(["the TTGIR is missing a barrier"]) is None  # no spelling known for that stage


@pytest.mark.parametrize(
    "said",
    [
        "There is no `__syncthreads()` between the write to shared memory and the read.",
        "In the generated kernel, __syncthreads() is not inserted after the copy, so threads race.",
        "The kernel source should have a __syncthreads() before reading B_shared, but it doesn't.",
        "TileLang forgets to insert a `__syncthreads()` there.",
        "A `__syncthreads()` is needed after the atomic add.",
        "Missing __syncthreads in the generated code",
        "The second loop reads A_shared without `__syncthreads()`.",
    ],
)
def test_a_builtin_said_missing_in_a_reporters_words_is_counted_in_the_cuda_source(said: str) -> None:
    """How reporters say a barrier is missing: a bare CUDA builtin, "no X between", "forgets to
    insert", "should have X, but": each counted in TileLang's CUDA source. Before, only "missing
    `X`", "`X` is missing", "lacks `X`" and "does not emit `X`" were read, and these stopped at locate."""
    from kregress.bisect.triage.stated import stated_missing

    found = stated_missing([said], "tilelang")
    assert found is not None and found.stage == "cuda_source" and found.right.startswith("__syncthreads")


@pytest.mark.parametrize(
    "said",
    [
        "I ran it without `TRITON_INTERPRET=1` and the PTX is fine.",  # no spelling of the generated code
        "The fix inserts a `__syncthreads()` that was missing.",  # said of the fix
        "With the fix the generated code no longer lacks `__syncthreads()`.",
        "Missing `T.copy` in the loop",  # the kernel language's own, never in the generated code
    ],
)
def test_what_names_no_missing_spelling_of_the_generated_code_is_not_read_so(said: str) -> None:
    from kregress.bisect.triage.stated import stated_missing

    assert stated_missing([said], "triton" if "PTX" in said else "tilelang") is None


@pytest.mark.parametrize(
    "said",
    [
        "No sync is inserted between the two loops in the generated CUDA source.",
        "TileLang does not insert any barrier between the stores and the loads in the generated code.",
        "The lowering forgets to insert a sync in the kernel source.",
    ],
)
def test_a_barrier_said_missing_in_words_is_counted_by_its_spellings(said: str) -> None:
    from kregress.bisect.triage.stated import stated_missing

    found = stated_missing([said], "tilelang")
    assert found is not None and found.pattern is not None and re.search(found.pattern, "__syncthreads();")


def draft_counting_barriers(tmp_path: Path) -> Path:
    """A draft folder whose case.toml counts `__syncthreads()` in the CUDA source (least count 0)."""
    import tomli_w

    folder = tmp_path / "d"
    folder.mkdir(parents=True)
    ir = {"name": "ir", "kind": "ir", "kernel": "pasted_kernel", "stage": "cuda_source",
          "pattern": r"__syncthreads\(\)", "min_count": 0}  # fmt: skip
    (folder / "case.toml").write_text(tomli_w.dumps({"expect": [ir]}))
    return folder


def test_the_least_count_is_the_newest_releases_and_none_there_stops(tmp_path: Path) -> None:

    from kregress.bisect.triage.importer import ImportStopped, count_bound_at

    folder = draft_counting_barriers(tmp_path)
    counted = (Outcome.PASS, r"/__syncthreads\(\)/ in cuda_source: [default] 2 (bound ≥ 0)")
    locator = JudgedAlready({"c==0.4": counted}, [])
    count_bound_at(locator, folder, "cuda:sm_90", "c==0.4", "min_count")
    assert tomllib.loads((folder / "case.toml").read_text())["expect"][0]["min_count"] == 2
    assert locator.summary.judged == []  # judged under the bound of 0: another case's key
    none = (Outcome.PASS, r"/__syncthreads\(\)/ in cuda_source: [default] 0 (bound ≥ 0)")
    with pytest.raises(ImportStopped, match=r"has no .* either"):
        count_bound_at(JudgedAlready({"c==0.4": none}, []), folder, "cuda:sm_90", "c==0.4", "min_count")
    failed = (Outcome.FAIL, "COMPILE_ERROR: 1 of 1 configs did not compile")
    with pytest.raises(ImportStopped, match="could not count"):
        count_bound_at(JudgedAlready({"c==0.4": failed}, []), folder, "cuda:sm_90", "c==0.4", "min_count")
    # Misplaced: the newest release's count (its fix in, 0 included) is the most; the draft's
    # counting bound of min_count 0 goes.
    count_bound_at(JudgedAlready({"c==0.4": none}, []), folder, "cuda:sm_90", "c==0.4", "max_count")
    bounded = tomllib.loads((folder / "case.toml").read_text())["expect"][0]
    assert bounded["max_count"] == 0 and "min_count" not in bounded


def test_a_spelling_said_misplaced_is_stated_with_its_stage() -> None:
    from kregress.bisect.triage.stated import stated_misplaced

    title = "[BUG] Wrong ```__syncthreads()``` placement in a loop with a per-thread trip count"
    found = stated_misplaced([title], "tilelang")
    assert found is not None and (found.stage, found.wrong, found.misplaced, found.missing) == (
        "cuda_source",
        "__syncthreads()",
        True,
        False,
    )
    assert found.counted_against_newest and found.has() == "has `__syncthreads()` inside a branch or loop"
    body = "The lowering wrongly places `tl::__sync_thread_partial` inside the conditional 32 threads take."
    assert (partial := stated_misplaced([body], "tilelang")) is not None
    # where a barrier is, or should be, is no complaint of its own
    where = "It inserts `__syncthreads()` in the kernel if the buffer is shared."
    should = "It should insert `__syncthreads()` inside the loop, wrongly left out."
    never = "It does not place `__syncthreads()` inside the loop (deadlock)"
    assert [stated_misplaced([text], "tilelang") for text in (where, should, never)] == [None, None, None]
    assert partial.wrong == "tl::__sync_thread_partial"
    assert stated_misplaced(["The PTX places `bar.sync` inside a loop"]) is None  # no blocks to read in PTX
    assert stated_misplaced(["`__syncthreads()` is placed correctly"], "tilelang") is None
    assert stated_misplaced(["the wrong placement of the tiles"], "tilelang") is None  # no spelling
    assert stated_misplaced(["Incorrect `T.copy` placement"], "tilelang") is None  # the DSL's, not generated


def test_a_spelling_said_to_be_one_too_many_is_stated_and_never_beside_a_quoted_error() -> None:
    from kregress.bisect.triage.stated import stated_extra

    title = "[BUG] Unexpected CTA-wide __syncthreads() inserted between two warp groups"
    found = stated_extra([title], "tilelang")
    assert found is not None and (found.stage, found.wrong, found.extra) == (
        "cuda_source",
        "__syncthreads()",
        True,
    )
    assert found.fewer_after_the_fix and found.has() == "has `__syncthreads()` where it should not"
    ptx = stated_extra(["The PTX has a redundant `bar.sync 0` after the loop"])
    assert ptx is not None and (ptx.stage, ptx.wrong) == ("ptx", "bar.sync 0")
    assert stated_extra(["unexpected `T.copy` lowering"], "tilelang") is None  # the DSL's own spelling
    assert stated_extra(["unexpected results with `__syncthreads()`"], "tilelang") is None  # not one extra
    assert stated_extra(["an unexpected __init__ call"], "tilelang") is None  # a Python dunder
    assert stated_extra(["a redundant `mov.b32` in the PTX"]) is None  # no barrier: its count drifts
    assert stated_extra(["It should not emit `__syncthreads()` twice"], "tilelang") is not None
    assert stated_extra(["The fix removes the unnecessary `__syncthreads()`"], "tilelang") is None
    code = (
        "```python\nimport tilelang\nimport tilelang.language as T\n\n@T.prim_func\ndef k():\n    pass\n```\n"
    )
    assert extract(issue(code, title, repository="tile-ai/tilelang")).spelling == found
    quoted = code + "\n```\nValueError: the layout cannot be inferred for this buffer\n```\n"
    assert extract(issue(quoted, title, repository="tile-ai/tilelang")).spelling is None  # the error's


def test_an_issue_showing_its_runs_output_is_never_proven_on_an_exception() -> None:
    """A wrong-value report with no error quoted whose text shows what the reporter's run printed:
    the run ended, so an exception a release raises on the paste is not its bug; only the wrong
    value it states can show it."""
    body = "```python\nimport triton\nprint(k())\n```\n\nOutput:\n\n```\ntensor([1., 2., 4.])\n```\n"
    evidence = extract(issue(body))
    assert evidence.shows_output and not evidence.errors
    errored = extract(issue(body + "\n```\nRuntimeError: boom\n```\n"))
    assert not errored.shows_output  # an error quoted: that is the failure kept
    # What a print printed, written as comments after it in the code, is output shown as much.
    commented = "```python\nimport triton\nx = k()\nprint(x)\n# [ 1.,  0.,  inf, nan]]\n```\n"
    assert extract(issue(commented)).shows_output
    assert not extract(issue(commented.replace("print(x)", "y = x"))).shows_output  # a comment, no print
    # The generated code the paste prints, shown as its output ("### Generated Code" and a cuda
    # block): the reporter's run built the kernel, so a release failing to build it is not the bug.
    source = "```python\nimport tilelang\nk = make()\nprint(k.get_kernel_source())\n```\n\n"
    assert extract(
        issue(source + "### Generated Code\n\n```cuda\n#include <tl_templates/cuda/gemm.h>\n```\n")
    ).shows_output
    assert not extract(issue(source + "```\nsome notes\n```\n")).shows_output  # no generated code shown
    summary = Summary("u")
    locator = Locator(Path("."), "d", [], summary, 60.0, shows_output=True)
    raised = "RUNTIME_ERROR: AssertionError: triton.language must be visible"
    exception = Point("cpu:interpreter", "triton==3.0.0", Outcome.FAIL, raised, "RUNTIME_ERROR")
    assert not locator.shows(exception)
    assert Locator(Path("."), "d", [], summary, 60.0).shows(exception)  # as before, where no output shows
    stated = Locator(Path("."), "d", [], summary, 60.0, stated=True, shows_output=True)
    wrong = Point("cpu:interpreter", "triton==3.1.0", Outcome.FAIL, "WRONG_RESULT: 1 of 3", "WRONG_RESULT")
    assert stated.shows(wrong) and not stated.shows(exception)
    # The generated code printed is output too, and the spelling the issue names in it is the bug.
    spelled = Locator(Path("."), "d", [], summary, 60.0, "tilelang", compile_item="ir", shows_output=True)
    misplaced = "IR_MISMATCH: 1 of 1 configs have a count of /x/ inside a branch or loop"
    assert spelled.shows(Point("cuda:sm_90", "tilelang==0.1.7", Outcome.FAIL, misplaced, "IR_MISMATCH"))


def test_the_paste_runs_with_its_own_annotations_not_this_modules_future_import(tmp_path: Path) -> None:
    """kregress.pasted is written with `from __future__ import annotations`; the paste compiled
    there inherited it, so `BLOCK: tl.constexpr` became the string "tl.constexpr" and Triton 3.0 and
    3.1's interpreter took BLOCK for a runtime argument ("Expected a list of constant integers ...
    in `block_shape`"): a failure of kregress's that once proved a draft of triton#4370."""
    import triton.language as tl

    from kregress.pasted import execute

    path = tmp_path / "pasted.py"
    ran = execute(path, "import triton.language as tl\n\n\ndef kernel(x, BLOCK: tl.constexpr):\n    pass\n")
    assert ran.kernel.__annotations__["BLOCK"] is tl.constexpr


def test_an_attribute_the_pastes_line_asks_of_a_compiler_object_is_the_pastes_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TVM's objects refuse a missing attribute in their own __getattr__, so the exception is
    raised inside the compiler though the paste's line asked for it (`get_kernel_source()` of a
    prim_func): that is the paste's failure (the triager's completion follows). An attribute the
    compiler asks of its own objects is not, and can be the bug."""
    from kregress.pasted import execute, fails_in_own_code

    (tmp_path / "fakecompiler.py").write_text(
        "class Func:\n    def __getattr__(self, name):\n"
        "        raise AttributeError(f\"<class 'Func'> has no attribute {name}\")\n\n\n"
        "def builder():\n    return Func().int1_type\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "pasted.py"
    path.write_text("import fakecompiler\n\nprint(fakecompiler.Func().get_kernel_source())\n")
    with pytest.raises(AttributeError) as asked:
        execute(path, path.read_text())
    assert fails_in_own_code(path, asked.value)
    path.write_text("import fakecompiler\n\nfakecompiler.builder()\n")
    with pytest.raises(AttributeError) as inside:
        execute(path, path.read_text())
    assert not fails_in_own_code(path, inside.value)


def test_a_script_reading_its_arguments_runs_with_its_defaults_as_its_reporter_ran_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TileLang's examples, and the reproducers copied from them, size their kernel with argparse's
    defaults in the main block: run in a pytest child, parse_args read the child's own arguments
    and exited before the kernel was built."""
    from kregress.pasted import execute

    monkeypatch.setattr(sys, "argv", ["pytest", "corpus/x", "--toolchain", "tilelang==0.1.15"])
    code = (
        "import argparse\n\nif __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--m', type=int, default=4096)\n    args = parser.parse_args()\n"
        "    M = args.m\n"
    )
    path = tmp_path / "pasted.py"
    assert execute(path, code).M == 4096
    assert sys.argv == ["pytest", "corpus/x", "--toolchain", "tilelang==0.1.15"]  # given back


def test_a_gpus_device_context_selects_nothing_when_the_paste_runs_on_the_cpu(tmp_path: Path) -> None:
    """`with torch.cuda.device(x.device.index):` around a launch: on the CPU the index is None and
    torch refused it ("'<' not supported between 'NoneType' and 'int'") before the kernel ran, a
    failure of the move to the CPU, never the compiler's."""
    from kregress.pasted import execute, on_cpu

    code = (
        "import torch\n\nx = torch.ones(4, device='cuda')\ntorch.cuda.set_device(device=0)\n"
        "with torch.cuda.device(x.device.index):\n    y = x * 2\n"
    )
    assert execute(tmp_path / "pasted.py", on_cpu(code)).y.tolist() == [2.0] * 4
    assert "torch.cuda.device(" not in on_cpu(code) and "set_device" not in on_cpu(code)


def test_a_tilelang_pastes_tensors_move_to_the_cpu_and_its_target_stays(tmp_path: Path) -> None:
    """TileLang's compile is captured before a tensor reaches a GPU: the tensors the code makes on
    one (`device='cuda'`) are made on the CPU, where torch refused them ("Torch not compiled with
    CUDA enabled", inside torch: the draft's ERROR); a "cuda" naming TileLang's target stays."""
    from kregress.pasted import execute, on_cpu

    code = (
        "import torch\n\nt = torch.randn((4,), device='cuda')\nd = torch.device(\"cuda:0\")\n"
        'target = "cuda"\nu = torch.ones(2).cuda()\n'
    )
    moved = on_cpu(code, every_string=False)
    ran = execute(tmp_path / "pasted.py", moved)
    assert str(ran.t.device) == "cpu" and str(ran.d) == "cpu" and ran.target == "cuda"
    assert on_cpu(code).count("'cpu'") == 1 and 'target = "cpu"' in on_cpu(code)  # every string


def test_a_spelling_said_with_should_names_the_right_one_first() -> None:
    """ "should use `X`, not `Y`" names what the code should have first: read the other way round,
    the fixed releases would be the bug's."""
    from kregress.bisect.triage.stated import stated_spelling

    for said in (
        "The PTX should use `div.rn.f32`, not `div.full.f32`.",
        "It must lower to `div.rn.f32` instead of `div.full.f32`.",
        "Triton's `/` lowers to `div.full.f32`, not `div.rn.f32`.",
    ):
        spelling = stated_spelling([said])
        assert spelling is not None, said
        assert (spelling.wrong, spelling.right) == ("div.full.f32", "div.rn.f32"), said
    # dotted names that are no PTX instruction name no stage
    assert stated_spelling(["the kernel uses `acc.local` instead of `acc.shared`"]) is None


@pytest.mark.parametrize(
    ("above", "label"),
    [
        ("Expected output:", "expected"),
        ("On 3.2 it gives (what I think is) the correct answer:", "expected"),
        ("Output (incorrect, only the first is written):", "wrong"),
        ("Output (not what I expected):", "wrong"),
        ("I expected it to match torch. Running it gives:", "run"),
        ("This should work, but it prints:", "run"),
        ("Right now it prints:", "run"),
        ("Input:", None),
        ("Environment:", None),
    ],
)
def test_the_words_above_an_output_block_say_which_side_it_is(above: str, label: str | None) -> None:
    from kregress.bisect.triage.stated import output_label

    assert output_label(f"Some text.\n\n{above}\n") == label


def test_an_input_or_an_error_block_is_never_the_wrong_output() -> None:
    from kregress.bisect.triage.stated import stated_by_outputs

    expected = ("Expected:", "tensor([2, 4, 6])")
    assert stated_by_outputs([[("Input:", "tensor([1, 2, 3])"), expected]]) is None
    errors = ("On main it gives:", "repro.cu(12): error: identifier 'x' is undefined")
    assert stated_by_outputs([[errors, expected]]) is None
    run = ("On main it gives:", "tensor([2, 4, 7])")
    stated = stated_by_outputs([[run, expected]])
    assert stated is not None and stated.wrong == (2.0, 4.0, 7.0)


def test_the_prose_above_a_block_is_the_text_after_the_block_before_it() -> None:
    from kregress.bisect.triage.quotes import code_blocks

    text = "Run:\n\n```python\nprint(expected)\n```\n\nOutput:\n\n```\n[1]\n```\n\n    x = 1\n\nDone."
    blocks, _ = code_blocks(text)
    assert [before for _, _, before in blocks] == ["Run:\n\n", "\n\nOutput:\n\n", "\n\n"]


def test_an_indented_traceback_quoting_an_import_is_output_not_code() -> None:
    body = (
        "```python\nimport triton\nkernel[(1,)]()\n```\n\nIt fails:\n\n"
        "    Traceback (most recent call last):\n"
        '      File "x.py", line 3, in <module>\n        from triton.compiler import compile\n'
        "    RuntimeError: boom\n\n1. Steps\n\n    from the shell, run it\n"
    )
    evidence = extract(issue(body))
    assert evidence.blocks == 1 and evidence.error == "RuntimeError: boom"


def test_syntax_a_frontend_does_not_compile_yet_is_a_release_that_cannot_run_the_code() -> None:
    source = "@triton.jit\ndef k(o):\n    xs = [i for i in range(4) if i % 2]\n"
    refused = (
        "COMPILE_ERROR: 1 of 1 configs did not compile | "
        "UnsupportedLanguageConstruct: unsupported AST node type: ListComp"
    )
    assert missing_api(refused, source) == "the language construct ListComp (unsupported AST node type)"
    assert missing_api(refused, "@triton.jit\ndef k(o):\n    pass\n") is None  # not the code's syntax
    point = Point("xpu:pvc", "t==1", Outcome.FAIL, refused, "COMPILE_ERROR")
    assert not Locator(Path("."), "d", [], Summary("u"), 60.0, source=source).shows(point)
    # the refusal is what the issue quotes: then it is the bug reported
    quoted = Locator(Path("."), "d", ["unsupported AST node type"], Summary("u"), 60.0, source=source)
    assert quoted.shows(point)


def test_a_setting_the_issue_runs_the_code_with_is_set_before_it_runs() -> None:
    code = "```python\nfrom __future__ import annotations\nimport triton\n\n@triton.jit\n"
    code += "def k(x):\n    pass\n```\n"
    body = (
        f'It crashes with `TRITON_F32_DEFAULT = "ieee"`:\n\n{code}\nrun: `TRITON_INTERPRET=1 python x.py`\n'
    )
    evidence = extract(issue(body))
    assert evidence.code.startswith("from __future__ import annotations\nimport os\n\n"
                                    "os.environ['TRITON_F32_DEFAULT'] = 'ieee'\n")  # fmt: skip
    assert "environment: set TRITON_F32_DEFAULT=ieee, as the issue runs the code with it" in evidence.repairs
    assert "TRITON_INTERPRET" not in evidence.code  # the draft chooses how the code runs
    # two values of one setting: which one fails is not said
    both = extract(issue(body + "\nFine with TRITON_F32_DEFAULT=tf32.\n"))
    assert "os.environ" not in both.code


def test_a_paste_cut_inside_its_only_kernel_stops_at_extract() -> None:
    cut = (
        "```python\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x, N: tl.constexpr):\n"
    )
    cut += "    offs = tl.arange(0, N\n"
    with pytest.raises(ImportStopped, match="cut inside its kernel") as stopped:
        extract(issue(cut))
    assert stopped.value.step == "extract"
    # the kernel whole in one block and another block cut short: the kernel is judged
    whole = cut.replace("tl.arange(0, N\n", "tl.arange(0, N)\n```\n\n```python\nk[(1,)](x, N=\n")
    assert "def k(" in extract(issue(whole)).code


def test_code_begun_on_the_opening_fence_keeps_its_first_line() -> None:
    body = "```import torch\nimport triton\n\n@triton.jit\ndef k(x):\n    pass\n```\n"
    evidence = extract(issue(body))
    assert evidence.blocks == 1 and evidence.code.startswith("import torch\nimport triton\n")


def test_a_function_that_compiles_its_prim_func_itself_is_whole() -> None:
    from kregress.bisect.triage.complete import factories_without_return

    kernel = '    @T.prim_func\n    def main(a: T.Tensor((4,), "float32")):\n        pass\n'
    assert factories_without_return(f"def run():\n{kernel}    k = tilelang.compile(main)\n") == []
    assert factories_without_return(f"def make():\n{kernel}    yield main\n") == []
    assert factories_without_return(f"def make():\n{kernel}") == ["make"]


def test_only_a_factory_that_ends_the_paste_is_finished_with_its_return() -> None:
    from kregress.bisect.triage.complete import with_cut_factory_returned

    kernel = (
        '    @T.prim_func\n    def main(a: T.Tensor((4,), "float32")):\n'
        "        with T.Kernel(1):\n            a[0] = 1\n"
    )
    code, said = with_cut_factory_returned(f"def make():\n{kernel}")  # type: ignore[misc]
    assert code.endswith("            a[0] = 1\n    return main\n") and "`return main` added" in said
    assert with_cut_factory_returned(f"def make():\n{kernel}\n\nmake()\n") is None  # the code's own
    assert with_cut_factory_returned(f"def make():\n{kernel}    return main\n") is None  # whole
    two = f"def make():\n{kernel}{kernel.replace('main', 'other')}"
    assert with_cut_factory_returned(two) is None  # which of two it returned is not known


class JudgedAlready(Locator):
    """A locator whose points are given: the search's logic alone."""

    def __init__(self, outcomes: dict[str, tuple[Outcome, str]], patterns: list[str]) -> None:
        super().__init__(Path("."), "d", patterns, Summary("u"), 60.0)
        self.outcomes = outcomes

    def judge(self, target: str, release: str) -> Point:
        outcome, message = self.outcomes[release]
        point = Point(target, release, outcome, message, "COMPILE_ERROR" if outcome == Outcome.FAIL else None)
        self.summary.judged.append(point)
        return point


class JudgedPerTarget(JudgedAlready):
    """Points given per target and release ("cuda:sm_90 c==0.4")."""

    def judge(self, target: str, release: str) -> Point:
        outcome, message = self.outcomes[f"{target} {release}"]
        point = Point(target, release, outcome, message, "COMPILE_ERROR" if outcome == Outcome.FAIL else None)
        self.summary.judged.append(point)
        return point


class ReleasesGiven:
    """The releases of each target, as PackageReleases gives them (the index read already)."""

    def __init__(self, versions: list[str]) -> None:
        self.versions = versions

    def of(self, target: str) -> list[str]:
        return self.versions

    def package_of(self, target: str) -> str:
        return "c"


def test_a_missing_spelling_is_counted_on_the_first_target_whose_newest_release_has_it(
    tmp_path: Path,
) -> None:
    """sm_90's code (warp-specialized, TMA) can lack a barrier that sm_80's has after the fix: the
    draft stopped at "has no /X/ either" on the first target; the next target counts it instead."""

    from kregress.bisect.triage.importer import ImportStopped, bound_by_newest
    from kregress.bisect.triage.stated import StatedSpelling

    folder = draft_counting_barriers(tmp_path)
    none = (Outcome.PASS, r"/__syncthreads\(\)/ in cuda_source: [default] 0 (bound ≥ 0)")
    two = (Outcome.PASS, r"/__syncthreads\(\)/ in cuda_source: [default] 2 (bound ≥ 0)")
    spelling = StatedSpelling("cuda_source", "", "__syncthreads()", "said", missing=True)
    targets = ["cuda:sm_90", "cuda:sm_80", "cpu:interpreter"]
    outcomes = {"cuda:sm_90 c==0.4": none, "cuda:sm_80 c==0.4": two}
    locator = JudgedPerTarget(outcomes, [])
    locator.compile_item = "ir"
    found = bound_by_newest(locator, folder, targets, ReleasesGiven(["c==0.3", "c==0.4"]), spelling)  # type: ignore[arg-type]
    assert found == ["cuda:sm_80"]
    assert tomllib.loads((folder / "case.toml").read_text())["expect"][0]["min_count"] == 2
    assert any(
        "on cuda:sm_90, the newest release's cuda_source has no" in line for line in locator.summary.steps
    )
    assert locator.summary.judged == []  # both judged under the draft's bound of 0: neither kept
    fresh = draft_counting_barriers(tmp_path / "nowhere")
    nowhere = JudgedPerTarget({**outcomes, "cuda:sm_80 c==0.4": none}, [])
    nowhere.compile_item = "ir"
    with pytest.raises(ImportStopped, match=r"on cuda:sm_90, .*has no .* either.*; on cuda:sm_80, .*either"):
        bound_by_newest(nowhere, fresh, targets, ReleasesGiven(["c==0.4"]), spelling)  # type: ignore[arg-type]
    assert "min_count = 0" in (fresh / "case.toml").read_text()  # left as it was


def test_past_a_release_that_cannot_tell_the_next_releases_are_tried_up_to_the_reporters() -> None:
    from kregress.bisect.triage.importer import next_release_showing

    versions = ["c==0.1", "c==0.2", "c==0.3", "c==0.4"]
    unloadable = (Outcome.SKIP, "cannot load here: libtinyrt.so.13")
    shows = (Outcome.FAIL, "COMPILE_ERROR: ValueError: tiny scale")
    clean = (Outcome.PASS, "1 config(s) compiled")
    quoted = ["tiny scale"]
    outcomes = {"c==0.1": unloadable, "c==0.2": shows, "c==0.3": shows, "c==0.4": clean}
    found = next_release_showing(JudgedAlready(outcomes, quoted), "cuda:sm_90", versions, "c==0.1")
    assert found == ["c==0.2"]
    # nothing quoted: any failure of the next releases would count, so nothing is walked
    assert next_release_showing(JudgedAlready(outcomes, []), "cuda:sm_90", versions, "c==0.1") == []
    # the reporter's own release runs clean here: never walked past
    named = JudgedAlready({**outcomes, "c==0.2": clean, "c==0.3": shows}, quoted)
    assert next_release_showing(named, "cuda:sm_90", versions, "c==0.1", "c==0.2") == []
    # the release at the date runs clean and the reporter ran a commit's build (or named none): the
    # next releases are tried, past one that runs clean, up to the newest
    nightly = JudgedAlready({**outcomes, "c==0.1": clean, "c==0.2": clean, "c==0.3": shows}, quoted)
    assert next_release_showing(nightly, "cuda:sm_90", versions, "c==0.1") == ["c==0.3"]
    assert next_release_showing(nightly, "cuda:sm_90", versions, "c==0.1", "c==0.1") == []


def test_a_fix_behind_releases_that_fail_otherwise_is_placed_between_never_pinned() -> None:
    """The quoted error gone at 0.2 and another failure in its place until 0.4: the fix is in one
    of 0.2 … 0.4, and naming 0.4 (the first release that runs clean) would name the wrong one."""
    from kregress.bisect.triage.importer import release_span

    versions = ["c==0.1", "c==0.2", "c==0.3", "c==0.4"]
    shows = (Outcome.FAIL, "COMPILE_ERROR: ValueError: tiny scale")
    otherwise = (Outcome.FAIL, "COMPILE_ERROR: InternalError: Check failed: extent")
    clean = (Outcome.PASS, "1 config(s) compiled")
    outcomes = {"c==0.1": shows, "c==0.2": otherwise, "c==0.3": otherwise, "c==0.4": clean}
    span = release_span(JudgedAlready(outcomes, ["tiny scale"]), "cuda:sm_90", versions, 0)
    assert (span.first_bad, span.fixed, span.earliest_fixed) == (0, 3, 1) and not span.fix_pinned()
    assert span.shown(versions).startswith("shows from c==0.1 … c==0.1; fixed between c==0.2 and c==0.4 (the")
    assert "first fixed" not in span.shown(versions)
    pinned = release_span(JudgedAlready({**outcomes, "c==0.2": shows, "c==0.3": shows}, ["tiny scale"]),
                          "cuda:sm_90", versions, 0)  # fmt: skip
    assert pinned.fix_pinned() and "first fixed c==0.4" in pinned.shown(versions)


def test_a_fix_behind_releases_that_all_fail_otherwise_is_never_no_release_without_it() -> None:
    """The quoted error gone at 0.3 and every later release failing otherwise: the bug is not
    still open, and where it was fixed is not known."""
    from kregress.bisect.triage.importer import release_span

    versions = ["c==0.1", "c==0.2", "c==0.3", "c==0.4"]
    shows = (Outcome.FAIL, "COMPILE_ERROR: IndexError: Variable is not defined")
    otherwise = (Outcome.FAIL, "COMPILE_ERROR: IndexError: Buffer A is 2-dimensional")
    outcomes = {"c==0.1": otherwise, "c==0.2": shows, "c==0.3": otherwise, "c==0.4": otherwise}
    span = release_span(JudgedAlready(outcomes, ["Variable is not defined"]), "cuda:sm_90", versions, 1)
    assert (span.first_bad, span.fixed, span.earliest_fixed) == (1, 4, 2) and not span.fix_pinned()
    assert "fixed at c==0.3 or later (the releases from c==0.3 fail otherwise" in span.shown(versions)
    assert "no release without it" not in span.shown(versions)
    still = release_span(JudgedAlready({**outcomes, "c==0.3": shows, "c==0.4": shows}, ["Variable is not"]),
                         "cuda:sm_90", versions, 1)  # fmt: skip
    assert still.fix_pinned() and "no release without it" in still.shown(versions)


def test_a_commit_build_of_a_release_is_told_from_the_release() -> None:
    from kregress.bisect.triage.releases import release_mention

    triton = ["triton==3.4.0", "triton==3.5.0"]
    assert release_mention("Triton: 3.4.0+git1a2b3c4d", "triton", triton).commit_build
    assert release_mention("tilelang 0.1.8+cuda.git71a7940c", "tilelang", ["tilelang==0.1.8"]).commit_build
    assert release_mention("pytorch-triton 3.5.0.dev20250801", "triton", triton).commit_build
    assert not release_mention("triton==3.4.0, torch 2.8", "triton", triton).commit_build
    assert not release_mention("Triton version: 3.4.0.", "triton", triton).commit_build


def test_a_saved_comment_is_read_as_its_body_as_githubs_api_gives_it(tmp_path: Path) -> None:
    import json

    from kregress.bisect.triage.importer import issue_from_file

    saved = tmp_path / "issue.json"
    comments = [{"body": "```python\nimport triton\n```", "created_at": None}, "plain text"]
    saved.write_text(json.dumps({"title": "t", "body": "b", "created_at": "2025-01-01T00:00:00Z",
                                 "comments": comments}))  # fmt: skip
    read = issue_from_file("https://github.com/triton-lang/triton/issues/1", saved)
    assert read.comments == ["```python\nimport triton\n```", "plain text"]
