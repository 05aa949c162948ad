"""The shell blocks of README.md and docs/*.md name what exists: each `kregress` line a subcommand
and options that its --help lists, each `pytest` line options pytest knows with the kregress
plugin, each `bash .ci/X` and `python bench/X.py` line a file of this repository, and a case a
folder of corpus/. Nothing is run: every check reads --help (once per subcommand) or the tree. A
line of another program is listed with the reason it is not checked, never passed in silence.

Also: the README keeps its two commands and stays short, its command table names every
subcommand, and every relative link of the docs leads to a file and, with #anchor, a heading.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from kregress import cli

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]
SHELL_FENCES = {"sh", "bash", "console"}
FENCE = re.compile(r"^\s*```\s*([\w-]*)\s*$")
SEPARATORS = {"&&", "||", ";", "|", "&"}
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
# An option as a help line shows it: its name, then a metavar when it takes a value.
OPTION_WITH_VALUE = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)(?:[ =]([A-Za-z_{\[][^\s,]*))?")
CHOICES = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)[ =]\{([^}]*)\}")
GROUP = re.compile(r"^usage: [^{]*\{([\w,-]+)\}\s+\.\.\.")
KREGRESS = ("kregress", ".venv/bin/kregress")
PYTEST = ("pytest", ".venv/bin/pytest")
PYTHON = ("python", "python3", ".venv/bin/python")
CASE_COMMANDS = {"bisect", "reduce", "verify"}  # their positionals are cases of corpus/


@dataclass(frozen=True)
class Line:
    where: str  # file:line
    text: str


@dataclass(frozen=True)
class Help:
    """What one --help lists: options, which of them take a value, their choices, subcommands."""

    options: frozenset[str]
    valued: frozenset[str]
    choices: dict[str, frozenset[str]]
    subcommands: frozenset[str]


def shell_lines(path: Path) -> list[Line]:
    """Every command line of the ```sh, ```bash and ```console blocks of a markdown file: a line
    ending in a backslash joined with the next, and in a console block only the `$ ` lines."""
    lines: list[Line] = []
    fence: str | None = None
    pending: tuple[int, str] | None = None
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        opened = FENCE.match(raw)
        if opened and fence is None:
            fence = opened.group(1)
            continue
        if opened and not opened.group(1):
            fence, pending = None, None
            continue
        if fence not in SHELL_FENCES:
            continue
        text = raw.strip()
        if pending is None:
            if fence == "console":
                if not text.startswith("$ "):
                    continue
                text = text[2:]
            if not text or text.startswith("#"):
                continue
            pending = (number, "")
        start, before = pending
        if text.endswith("\\"):
            pending = (start, before + text[:-1] + " ")
            continue
        lines.append(Line(f"{path.relative_to(REPO)}:{start}", before + text))
        pending = None
    return lines


def commands_of(text: str) -> list[list[str]]:
    """A shell line's simple commands (split at &&, ||, ;, |), comments dropped, without the
    variable assignments that lead them."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    for token in lexer:
        if token in SEPARATORS:
            commands.append([])
        else:
            commands[-1].append(token)
    return [command for command in commands if command]


def parse_help(text: str) -> Help:
    options: set[str] = set()
    valued: set[str] = set()
    choices: dict[str, frozenset[str]] = {}
    usage, _, _ = text.partition("\n\n")
    for line in [usage, *(line for line in text.splitlines() if line.lstrip().startswith("-"))]:
        options.update(OPTION.findall(line))
        for name, value in OPTION_WITH_VALUE.findall(line.replace("[-", " -")):
            if value:
                valued.add(name)
        for name, listed in CHOICES.findall(line):
            choices[name] = frozenset(listed.split(","))
    group = GROUP.match(text)
    subcommands = frozenset(group.group(1).split(",")) if group else frozenset()
    return Help(frozenset(options), frozenset(valued), choices, subcommands)


@functools.cache
def kregress_help(*words: str) -> Help:
    """`kregress WORDS --help`, through kregress.cli.main, once per subcommand."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main([*words, "--help"])
    assert code == 0, f"kregress {' '.join(words)} --help exited {code}"
    return parse_help(out.getvalue())


@functools.cache
def pytest_help() -> Help:
    """`pytest --help` with the kregress plugin and this repository's conftest, once."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--help"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--backend" in done.stdout, "pytest --help lists no kregress options: is the plugin installed?"
    return parse_help(done.stdout)


@functools.cache
def targets() -> frozenset[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["targets"]) == 0
    return frozenset(line.split()[0] for line in out.getvalue().splitlines() if ":" in line.split()[0])


def unhyphenated(option: str) -> str:
    """pytest's --help shows one spelling of options that differ only in hyphens (--junit-xml for
    --junitxml): both are the same option."""
    return option[:2] + option[2:].replace("-", "")


def check_options(argv: list[str], help: Help, command: str) -> tuple[list[str], list[str]]:
    """Problems with argv's options against help, and its positionals (option values left out)."""
    problems: list[str] = []
    positionals: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        index += 1
        if not token.startswith("-") or token == "-" or re.fullmatch(r"-\d+(\.\d+)?", token):
            positionals.append(token)
            continue
        name, equals, value = token.partition("=")
        if name not in help.options and unhyphenated(name) not in map(unhyphenated, help.options):
            problems.append(f"`{command}` has no option {name}")
            continue
        if name in help.valued and not equals and index < len(argv) and not argv[index].startswith("--"):
            value = argv[index]
            index += 1
        if name in help.choices and value and "$" not in value and value not in help.choices[name]:
            problems.append(f"`{command} {name}` takes one of {sorted(help.choices[name])}, not {value!r}")
        if name in ("--target", "-t") and value and "$" not in value and value not in targets():
            problems.append(f"`{command} {name}`: {value!r} is no target of the matrix (kregress targets)")
    return problems, positionals


def check_kregress(argv: list[str]) -> list[str]:
    top = kregress_help()
    words: list[str] = []
    index = 0
    while index < len(argv) and argv[index].startswith("-"):  # options before the subcommand
        if argv[index] not in top.options:
            return [f"`kregress` has no option {argv[index]}"]
        index += 2 if argv[index] in top.valued else 1
    if index == len(argv):
        return ["`kregress` without a subcommand"]
    help = top
    while help.subcommands:
        word = argv[index] if index < len(argv) else ""
        if word not in help.subcommands:
            return [f"`kregress {' '.join(words)}` has no subcommand {word!r}: {sorted(help.subcommands)}"]
        words.append(word)
        index += 1
        help = kregress_help(*words)
    command = "kregress " + " ".join(words)
    problems, positionals = check_options(argv[index:], help, command)
    if words[0] in CASE_COMMANDS and "--corpus" not in argv:
        for name in positionals:
            if "/" in name or name.endswith(".py") or "$" in name:
                continue
            if not (REPO / "corpus" / name / "case.toml").is_file():
                problems.append(f"`{command}`: {name!r} is no case of corpus/")
    return problems


def check_pytest(argv: list[str]) -> list[str]:
    problems, positionals = check_options(argv, pytest_help(), "pytest")
    for path in positionals:
        if path.startswith(("corpus/", "tests/")) and not (REPO / path.split("::")[0]).exists():
            problems.append(f"`pytest {path}`: no such path")
    return problems


def check_line(text: str) -> tuple[list[str], list[str]]:
    """(problems, reasons it was not checked) for one shell line; both empty when it holds."""
    problems: list[str] = []
    unchecked: list[str] = []
    for command in commands_of(text):
        while command and ASSIGNMENT.match(command[0]):
            command = command[1:]
        if not command:
            unchecked.append("sets a shell variable")
            continue
        program, args = command[0], command[1:]
        if program in PYTHON and args[:2] == ["-m", "kregress.cli"]:
            program, args = "kregress", args[2:]
        if program in PYTHON and args[:2] == ["-m", "pytest"]:
            program, args = "pytest", args[2:]
        if program in KREGRESS:
            problems += check_kregress(args)
        elif program in PYTEST:
            problems += check_pytest(args)
        elif program == "bash" and args and args[0].startswith(".ci/"):
            if not (REPO / args[0]).is_file():
                problems.append(f"`bash {args[0]}`: no such file")
        elif program in PYTHON and args and args[0].startswith("bench/"):
            if not (REPO / args[0]).is_file():
                problems.append(f"`python {args[0]}`: no such file")
        else:
            unchecked.append(f"runs {program}, which this test does not know (only kregress, pytest, "
                             ".ci/ and bench/)")  # fmt: skip
    return problems, unchecked


def test_the_shell_blocks_name_what_exists(capsys: pytest.CaptureFixture[str]) -> None:
    lines = [line for page in PAGES for line in shell_lines(page)]
    assert len(lines) > 40, "the blocks were not found: has the fence syntax changed?"
    stale: list[str] = []
    unchecked: list[str] = []
    for line in lines:
        problems, reasons = check_line(line.text)
        stale += [f"{line.where}: {problem}\n    {line.text}" for problem in problems]
        unchecked += [f"{line.where}: {reason}\n    {line.text}" for reason in reasons]
    with capsys.disabled():
        print(f"\ntest_docs: {len(lines)} shell lines, {len(lines) - len(unchecked)} checked against "
              f"--help and the tree (none run); {len(unchecked)} not checked:")  # fmt: skip
        for entry in unchecked:
            print(f"  {entry}")
    assert not stale, "stale command lines in the docs:\n" + "\n".join(stale)


@pytest.mark.parametrize(
    "text",
    [
        "kregress bisect interp_sum_int32_wrap --good triton==3.0.0 --bad triton==3.5.0 --no-such-option",
        "kregress bisect --no-such-option",
        "kregress frobnicate",
        "kregress envs frobnicate",
        "kregress comment post report.md --on 5 --key k --no-such-option",
        "kregress --no-such-option targets",
        "kregress bisect no_such_case -t cpu:interpreter --good triton==3.0.0 --bad triton==3.5.0",
        "kregress bisect interp_sum_int32_wrap -t cuda:sm_1 --good triton==3.0.0 --bad triton==3.5.0",
        "kregress bisect interp_sum_int32_wrap --search sideways --good triton==3.0.0 --bad triton==3.5.0",
        "pytest corpus/ --no-such-pytest-option",
        "pytest corpus/ --backend tpu",
        ".venv/bin/pytest tests/test_no_such_file.py",
        "bash .ci/setup && .venv/bin/pytest corpus/ --backend cpu -n auto --no-such-pytest-option",
        "bash .ci/no-such-script",
        "python bench/bench_no_such_bench.py",
    ],
)
def test_a_stale_line_fails(text: str) -> None:
    problems, _ = check_line(text)
    assert problems, f"not found stale: {text}"


def test_what_holds_passes_and_what_cannot_be_checked_is_said() -> None:
    assert check_line("bash .ci/setup && .venv/bin/pytest corpus/ --backend cpu -n auto") == ([], [])
    assert check_line("kregress bisect layout_conversion_smem -e shared-under-limit -t xpu:pvc "
                      "--repo ~/src/triton --good v3.4.0 --bad main --build-cmd 'pip wheel --no-deps'"
                      ) == ([], [])  # fmt: skip
    assert check_line("CI=true bash .ci/run  # a comment --no-such-option") == ([], [])
    problems, unchecked = check_line(".venv/bin/act schedule --no-such-option")
    assert problems == [] and len(unchecked) == 1 and "act" in unchecked[0]


def test_the_readme_keeps_its_two_commands_and_stays_short() -> None:
    text = README.read_text()
    for command in (
        "bash .ci/setup && .venv/bin/pytest corpus/ --backend cpu -n auto",
        "bash .ci/setup && .venv/bin/pytest tests/ -n auto",
    ):
        assert f"```sh\n{command}\n```" in text
    assert len(text.splitlines()) <= 200


def test_the_readme_table_names_every_subcommand_once() -> None:
    section = README.read_text().partition("\n## Commands\n")[2].partition("\n## ")[0]
    named = re.findall(r"^\| `([\w-]+)` \|", section, re.MULTILINE)
    assert sorted(named) == sorted(kregress_help().subcommands)
    assert len(named) == len(set(named))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.MULTILINE | re.DOTALL)
    return {slug(match) for match in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def test_every_relative_link_leads_somewhere() -> None:
    broken: list[str] = []
    for page in PAGES:
        prose = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.MULTILINE | re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            linked = (page.parent / file).resolve() if file else page
            if not linked.exists():
                broken.append(f"{page.relative_to(REPO)}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)
