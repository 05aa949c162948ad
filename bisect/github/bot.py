"""Commands in comments: `/kregress bisect|run|verify CASE ...` in an issue or PR comment starts the
work on the runner that carries the target and answers in one comment, edited in place as it goes
(queued, running, the result).

`kregress bot accept` (a light job, no compilers) reads the comment from the event, refuses with a
one-line reply anyone who is not a member or collaborator, an unknown case or target, and a
malformed command (nothing runs), and otherwise posts "queued" and names the runner for the
workflow. `kregress bot run` (on that runner) does the work and edits the same reply. The command
is data parsed here, never a shell line: the workflow passes it on as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kregress.bisect.github.client import IssueRef, Reporter, ReportError
from kregress.errors import ExitCode, KregressError
from kregress.markdown import fenced
from kregress.matrix import load_matrix, runner_for
from kregress.results import load_results
from kregress.schema import SchemaError

PREFIX = "/kregress"
ALLOWED = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})  # GitHub's author_association values
USAGE = (
    "`/kregress bisect CASE [-t TARGET] [-e EXPECTATION] [--good X --bad Y]`, "
    "`/kregress run CASE [-t TARGET] [--toolchain SPEC]` or `/kregress verify CASE`"
)


class CommandError(KregressError):
    """The comment asks for something kregress will not run; the message is the reply."""


@dataclass(frozen=True)
class BotCommand:
    verb: str  # bisect | run | verify
    case: str
    target: str | None = None
    expectation: str | None = None
    good: str | None = None
    bad: str | None = None
    regress: str = "fail"
    toolchain: str | None = None

    def shown(self) -> str:
        parts = [PREFIX, self.verb, self.case]
        flags = {"-t": self.target, "-e": self.expectation, "--good": self.good, "--bad": self.bad}
        for flag, value in {**flags, "--toolchain": self.toolchain}.items():
            if value:
                parts += [flag, value]
        if self.regress != "fail":
            parts += ["--regress", self.regress]
        return " ".join(parts)


class CommentParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise CommandError(f"{message}; the commands are {USAGE}")


def parser() -> CommentParser:
    top = CommentParser(prog=PREFIX, add_help=False)
    verbs = top.add_subparsers(dest="verb", required=True, parser_class=CommentParser)
    for verb in ("bisect", "run", "verify"):
        sub = verbs.add_parser(verb, add_help=False)
        sub.add_argument("case")
        if verb != "verify":
            sub.add_argument("-t", "--target")
        if verb == "bisect":
            sub.add_argument("-e", "--expectation")
            sub.add_argument("--good")
            sub.add_argument("--bad")
        if verb == "run":
            sub.add_argument("--toolchain")
    return top


def command_line(body: str) -> str | None:
    """The first line of the comment that starts with /kregress (quoted lines are not commands)."""
    for line in body.splitlines():
        if line.strip().startswith(PREFIX):
            return line.strip()
    return None


def parse_command(line: str, corpus: Path, matrix_path: Path | None = None) -> BotCommand:
    """A checked command: the case exists, the target is the matrix's and a runner carries it, and
    a bisect has both ends (given, or the case's [reproduce] releases: when it was fixed)."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise CommandError(f"cannot read the command ({exc}); the commands are {USAGE}") from None
    args = parser().parse_args(words[1:])
    if (
        Path(args.case).name != args.case
        or args.case in (".", "..")
        or not (corpus / args.case / "case.toml").is_file()
    ):
        raise CommandError(f"there is no case `{args.case}` in corpus/ (a case is a folder name)")
    from kregress.manifest import load_case

    try:
        case = load_case(corpus / args.case / "case.toml")
    except (SchemaError, OSError) as exc:
        raise CommandError(f"the case `{args.case}` does not load: {str(exc).splitlines()[0]}") from None
    reproduce = case.manifest.reproduce
    target = getattr(args, "target", None) or (
        reproduce.targets[0] if reproduce and reproduce.targets else None
    )
    matrix = load_matrix(matrix_path)
    if args.verb != "verify":
        if target is None:
            raise CommandError(f"say where: `-t TARGET` (the case names no [reproduce] targets); {USAGE}")
        if target not in matrix.targets:
            raise CommandError(f"unknown target `{target}`; known: {', '.join(sorted(matrix.targets))}")
        try:
            runner_for(matrix, target)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
    command = BotCommand(args.verb, args.case, target, toolchain=getattr(args, "toolchain", None))
    if args.verb == "bisect":
        good, bad, regress = args.good, args.bad, "fail"
        if (good is None) != (bad is None):
            raise CommandError(
                "give both `--good` and `--bad`, or neither (then the case's releases are used)"
            )
        if good is None:
            if not reproduce or not reproduce.bad or not reproduce.good:
                raise CommandError(f"`{args.case}` names no bad and good releases: give `--good X --bad Y`")
            good, bad, regress = reproduce.bad[0], reproduce.good[0], "pass"  # when was it fixed
        command = BotCommand("bisect", args.case, target, args.expectation, good, bad, regress)
    return command


def runner_labels(command: BotCommand, matrix_path: Path | None = None) -> list[str]:
    """Where the work runs: the runner that carries the target (verify: a hosted one)."""
    matrix = load_matrix(matrix_path)
    if command.target is None:
        hosted = [name for name, runner in matrix.runners.items() if runner.hosted]
        return matrix.runners[hosted[0]].labels if hosted else ["ubuntu-latest"]
    return matrix.runners[runner_for(matrix, command.target)].labels


def reply_key(comment_id: int) -> str:
    return f"command-{comment_id}"


def run_link() -> str:
    server, repo, run = (
        os.environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    return f" ([run]({server}/{repo}/actions/runs/{run}))" if server and repo and run else ""


def accept(
    event: dict[str, Any], corpus: Path, matrix_path: Path | None = None
) -> tuple[BotCommand | None, str]:
    """The command to run and the reply to post, or None and the one-line refusal."""
    comment = event.get("comment") or {}
    line = command_line(comment.get("body") or "")
    if line is None:
        return None, ""
    who = (comment.get("user") or {}).get("login", "someone")
    association = comment.get("author_association", "NONE")
    if association not in ALLOWED:
        return None, (
            f"@{who}: only members and collaborators of this repository can start kregress work "
            f"(you are {association.lower().replace('_', ' ')}); nothing was run."
        )
    try:
        command = parse_command(line, corpus, matrix_path)
    except CommandError as exc:
        return None, f"@{who}: `{line}`: {exc}; nothing was run."
    labels = ", ".join(runner_labels(command, matrix_path))
    return command, f"⏳ queued: `{command.shown()}` on a runner labelled `{labels}`{run_link()}"


def issue_of_event(event: dict[str, Any]) -> IssueRef:
    return IssueRef(event["repository"]["full_name"], int(event["issue"]["number"]))


def work(command: BotCommand, corpus: Path, out: Path, matrix_path: Path | None = None) -> tuple[bool, str]:
    """Run the command as kregress's own CLI would; (it ran, the markdown answer)."""
    kregress = [sys.executable, "-m", "kregress.cli"]
    if command.verb == "run":
        results = out / "results.json"
        line = [sys.executable, "-m", "pytest", str(corpus / command.case), "-p", "no:cacheprovider", "-q"]
        backend = load_matrix(matrix_path).target(command.target or "").backend  # a device target needs it
        line += ["--backend", backend, "--target", command.target or "", "--kregress-json", str(results)]
        if command.toolchain:
            line += ["--toolchain", command.toolchain]
    elif command.verb == "verify":
        results = out / "verify.json"
        line = [*kregress, "verify", command.case, "--corpus", str(corpus), "--json", str(results)]
    else:
        results = out / "report.md"
        line = [*kregress, "bisect", command.case, "--corpus", str(corpus), "--target", command.target or ""]
        line += ["--good", command.good or "", "--bad", command.bad or "", "--regress", command.regress]
        line += ["--markdown", str(results)]
        if command.expectation:
            line += ["--expectation", command.expectation]
    done = subprocess.run(line, capture_output=True, text=True, check=False)
    output = done.stdout + done.stderr
    tail = "\n".join(output.splitlines()[-40:])
    if command.verb == "bisect" and results.exists():
        return done.returncode in (0, 1), results.read_text()
    if command.verb == "run" and results.exists():
        rows = ["| expectation | target | outcome | detail |", "|---|---|---|---|"]
        for item in load_results(results).items:
            detail = (item.message or "")[:200].replace("|", "\\|").replace("\n", " ")
            rows.append(f"| `{item.expectation}` | `{item.target}` | {item.outcome.value} | {detail} |")
        return done.returncode in (0, 1), "\n".join(rows)
    ran = done.returncode in (0, 1) and results.exists()
    return ran, f"exit {done.returncode}\n\n" + fenced(tail)


def command_bot(args: argparse.Namespace) -> ExitCode:
    event = json.loads(Path(args.event or os.environ["GITHUB_EVENT_PATH"]).read_text())
    corpus = args.corpus
    token = os.environ.get("GITHUB_TOKEN")
    if not token:
        print("kregress bot: set GITHUB_TOKEN", file=sys.stderr)
        return ExitCode.USAGE
    reporter = Reporter(token, os.environ.get("GITHUB_API_URL"))
    target = issue_of_event(event)
    key = reply_key(int(event["comment"]["id"]))
    try:
        if args.bot_command == "accept":
            command, reply = accept(event, corpus, args.matrix)
            if not reply:
                print("kregress bot: the comment holds no /kregress command")
                return ExitCode.REFUSED
            reporter.post(target, key, reply)
            print(reply)
            outputs = {"accepted": "true" if command else "false"}
            if command:
                outputs["command"] = json.dumps(asdict(command))
                outputs["labels"] = json.dumps(runner_labels(command, args.matrix))
            if args.github_output and os.environ.get("GITHUB_OUTPUT"):
                with open(os.environ["GITHUB_OUTPUT"], "a") as handle:
                    handle.writelines(f"{k}={v}\n" for k, v in outputs.items())
            return ExitCode.OK if command else ExitCode.REFUSED
        command = BotCommand(**json.loads(args.command))
        reporter.post(target, key, f"🏃 running: `{command.shown()}`{run_link()}")
        with tempfile.TemporaryDirectory() as folder:
            ran, answer = work(command, corpus, Path(folder), args.matrix)
        verdict = "✅ done" if ran else "❌ could not finish"
        reporter.post(target, key, f"{verdict}: `{command.shown()}`{run_link()}\n\n{answer}")
        return ExitCode.OK if ran else ExitCode.INFRASTRUCTURE
    except ReportError as exc:
        print(f"kregress bot: {exc}", file=sys.stderr)
        return ExitCode.GITHUB


def register(commands: argparse._SubParsersAction) -> None:
    bot = commands.add_parser(
        "bot",
        help="commands in issue and PR comments: /kregress bisect|run|verify CASE",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = bot.add_subparsers(dest="bot_command", required=True)
    accept_parser = verbs.add_parser(
        "accept", help="read the comment, refuse or post 'queued' (exit 0 accepted, 1 not)"
    )
    accept_parser.add_argument("--github-output", action="store_true", help="write accepted, command, labels")
    run_parser = verbs.add_parser("run", help="do an accepted command and edit its reply with the result")
    run_parser.add_argument("--command", required=True, help="the command as `bot accept` wrote it (JSON)")
    for sub in (accept_parser, run_parser):
        sub.add_argument("--event", type=Path, help="the event JSON (default: GITHUB_EVENT_PATH)")
        sub.add_argument("--corpus", type=Path, default=Path("corpus"), help="the corpus folder")
        sub.add_argument("--matrix", type=Path, help="the matrix file (default: the installed one)")
        sub.set_defaults(run=command_bot)
