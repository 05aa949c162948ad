"""Commands in comments, read as data: who may start work, what a command must name, and the one
reply every refusal gets (the workflow itself runs under act in test_workflows_act)."""

from __future__ import annotations

from pathlib import Path

import pytest
from compiler_fixture import CASE

from kregress.bisect.github.bot import BotCommand, CommandError, accept, command_line, parse_command

REPRODUCE = """
[[known_bad]]
link = "https://github.com/example/compiler/issues/1"
versions = "<3.4"
[reproduce]
targets = ["cpu:interpreter"]
bad = ["triton==3.3.1"]
good = ["triton==3.4.0"]
"""
REPRO = "import numpy as np\n\n\ndef check(device):\n    return np.arange(4.0) * 2, np.arange(4.0) * 2\n"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    for name, extra in (("corpus/doubles", ""), ("corpus/fixed_once", REPRODUCE), ("outside", "")):
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "case.toml").write_text(CASE + extra)
        (tmp_path / name / "repro.py").write_text(REPRO)
    return tmp_path / "corpus"


def event(body: str, association: str = "MEMBER") -> dict:
    return {"comment": {"id": 9, "body": body, "author_association": association, "user": {"login": "ada"}}}


def test_members_queue_work_on_the_runner_that_carries_the_target(corpus: Path) -> None:
    command, reply = accept(
        event("thanks!\n/kregress run doubles -t cuda:device --toolchain triton==3.5.0"), corpus
    )
    assert command == BotCommand("run", "doubles", "cuda:device", toolchain="triton==3.5.0")
    assert reply.startswith("⏳ queued: `/kregress run doubles -t cuda:device --toolchain triton==3.5.0`")
    assert "`self-hosted, cuda-h100`" in reply
    command, _ = accept(event("/kregress run doubles -t cuda:sm_90", "COLLABORATOR"), corpus)
    assert command is not None and command.target == "cuda:sm_90"  # compile-only: the hosted runner


@pytest.mark.parametrize("association", ["CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "NONE"])
def test_anyone_else_gets_one_line_and_nothing_runs(corpus: Path, association: str) -> None:
    command, reply = accept(event("/kregress run doubles -t cpu:interpreter", association), corpus)
    assert command is None and "\n" not in reply
    assert reply.startswith("@ada: only members and collaborators") and "nothing was run" in reply


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("/kregress run nothere -t cpu:interpreter", "there is no case `nothere` in corpus/"),
        ("/kregress run doubles -t cuda:sm_75", "unknown target `cuda:sm_75`; known: "),
        ("/kregress run doubles", "say where: `-t TARGET`"),
        ("/kregress explode doubles", "invalid choice: 'explode'"),
        ("/kregress bisect doubles -t cpu:interpreter", "`doubles` names no bad and good releases"),
        (
            "/kregress bisect doubles -t cpu:interpreter --good triton==3.4.0",
            "give both `--good` and `--bad`",
        ),
        ('/kregress run "doubles', "cannot read the command"),
        ("/kregress run doubles -t cpu:interpreter; rm -rf /", "unrecognized arguments: rm -rf /"),
        ("/kregress run ../outside -t cpu:interpreter", "there is no case `../outside` in corpus/"),
    ],
)
def test_unknown_or_malformed_commands_are_refused_saying_why(corpus: Path, body: str, words: str) -> None:
    command, reply = accept(event(body), corpus)
    assert command is None and words in reply and "nothing was run" in reply, reply
    with pytest.raises(CommandError):
        parse_command(command_line(body) or "", corpus)


def test_a_bisect_without_ends_asks_when_the_case_was_fixed(corpus: Path) -> None:
    command = parse_command("/kregress bisect fixed_once", corpus)
    assert command == BotCommand(
        "bisect", "fixed_once", "cpu:interpreter", None, "triton==3.3.1", "triton==3.4.0", "pass"
    )
    given = parse_command(
        "/kregress bisect doubles -t cuda:sm_90 -e numerics --good triton==3.5.0 --bad triton==3.6.0", corpus
    )
    assert (given.good, given.bad, given.regress, given.expectation) == (
        "triton==3.5.0",
        "triton==3.6.0",
        "fail",
        "numerics",
    )


def test_comments_without_a_command_are_left_alone(corpus: Path) -> None:
    assert accept(event("> /kregress run doubles\nquoting someone"), corpus) == (None, "")
    assert command_line("please /kregress run x") is None
