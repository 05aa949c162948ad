"""`kregress comment`: put a report where compiler engineers see it.

  post         a markdown file (e.g. `kregress bisect --markdown`) on an issue or PR
  xpass        "looks fixed" on the upstream issue of every XPASS in a results file
  regressions  one comment listing the FAILs of a nightly results file, with bisect reports
  culprit      the bisect's culprit commit, on its pull request upstream (never a range or suspect)

Exit codes: 0 posted (or printed with --dry-run), 3 GitHub refused or kept failing (nothing
posted), 64 usage (no token, no repository, unreadable input). The token is never printed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from pathlib import Path

from kregress.bisect.bisect_report import CulpritFile
from kregress.bisect.github.client import IssueRef, Reporter, ReportError, issue_of, safe_body
from kregress.errors import ExitCode
from kregress.judge import Outcome
from kregress.judging_service import RegressOn
from kregress.markdown import fenced
from kregress.record import ItemRecord
from kregress.results import ChangeEntry, ResultsError, built_commits, load_changes, load_results, report_name
from kregress.schema import SchemaError


def target_of(text: str, repository: str | None) -> IssueRef:
    if text.isdigit():
        if not repository:
            raise ReportError("an issue number needs --repo or GITHUB_REPOSITORY (owner/name)")
        return IssueRef(repository, int(text))
    return issue_of(text)


def xpass_reports(
    items: list[ItemRecord], refused: list[str] | None = None
) -> list[tuple[IssueRef, str, str]]:
    """A "looks fixed" note per XPASS; an item whose upstream link is no issue is left out and
    said in `refused`, so one bad case does not cost the others their notes."""
    reports = []
    for item in items:
        if item.outcome != Outcome.XPASS or not item.upstream:
            continue
        versions = ", ".join(f"{k} {v}" for k, v in sorted((item.toolchain or {}).items()))
        body = (
            f"### kregress: `{item.case}` looks fixed\n\n"
            f"`{item.expectation}` on `{item.target}` now passes ({versions or 'toolchain unknown'}), "
            "though the corpus lists it as known bad for this issue.\n\n"
            f"{fenced(item.message or '')}\n\n"
            "If the fix is intended, this issue can be closed and the case's `known_bad` entry updated."
        )
        try:
            target = issue_of(item.upstream)
        except ReportError as exc:
            if refused is None:
                raise
            refused.append(f"{item.case} / {item.expectation} on {item.target}: {exc}; not posted")
            continue
        reports.append((target, f"xpass:{item.case}:{item.target}", body))
    return reports


def regressions_report(path: Path, reports: Path | None) -> str | None:
    """The FAILs of a results file, or only the new ones of a `kregress compare --json` file,
    each followed by its bisect report when the reports folder has one."""
    document = json.loads(path.read_text())
    lost: list[ChangeEntry] = []
    fixed: list[ChangeEntry] = []
    failed: list[ChangeEntry] | list[ItemRecord]
    if isinstance(document, dict) and "kregress_changes" in document:
        changes = load_changes(document, path)
        failed, title = changes["new_fail"], "new failures"
        lost = changes["lost_coverage"]
        fixed = [f for f in changes["fixed"] if f.line.endswith("@")]
    else:
        failed, title = [i for i in load_results(path).items if i.outcome == Outcome.FAIL], "failures"
    if not failed and not lost and not fixed:
        return None
    lines = [f"### kregress nightly: {title if failed else 'lost coverage' if lost else 'fixed'}", ""]
    if failed:
        lines += ["| case | expectation | target | failure |", "|---|---|---|---|"]
    for item in failed:
        lines.append(
            f"| `{item.case}` | `{item.expectation}` | `{item.target}` | {item.failure_kind or ''} |"
        )
    if lost:
        heading = f"**Lost coverage: {len(lost)}** item(s) that held are judged no more (SKIP, ERROR):"
        lines += [
            "",
            heading,
            "",
            "| case | expectation | target | was → now | why |",
            "|---|---|---|---|---|",
        ]
        for change in lost:
            why = next(iter(change.message.splitlines()), "").replace("|", "\\|")[:200]
            lines.append(f"| `{change.case}` | `{change.expectation}` | `{change.target}` | "
                         f"{change.was} → {change.now} | {why} |")  # fmt: skip
    if fixed:
        lines += ["", f"**Fixed on a branch head: {len(fixed)}** item(s) that failed pass again:", "",
                  "| case | expectation | target | fixed by |", "|---|---|---|---|"]  # fmt: skip
        for change in fixed:
            by = fixing_commit(change, reports)
            lines.append(f"| `{change.case}` | `{change.expectation}` | `{change.target}` | {by} |")
    for item in failed:
        lines += ["", f"**{item.case} / {item.expectation} on {item.target}**", fenced(item.message or "")]
        candidates = [report_name(item.case, item.target), f"{item.case}.md"] if reports else []
        bisected = next((reports / name for name in candidates if (reports / name).exists()), None)
        if bisected:
            lines += ["", bisected.read_text()]
    return "\n".join(lines)


def repository_slug(url: str) -> str | None:
    """owner/name of a GitHub repository URL (https or ssh), None for any other."""
    found = re.match(r"(?:https?://github\.com/|git@github\.com:)([\w.-]+/[\w.-]+?)(?:\.git)?/?$", url)
    return found.group(1) if found else None


def culprit_report(
    culprit: CulpritFile, report: Path | None, repository: str | None
) -> list[tuple[IssueRef, str, str]]:
    """One comment on the culprit's pull request (`kregress bisect --culprit-json`), keyed by case and
    target so a second night edits it; none when the bisect found no single culprit commit or the
    commit names no PR."""
    found = culprit.culprit
    if found is None:
        print(f"kregress comment: no culprit commit to tell: {culprit.why_none or 'none found'}")
        return []
    if found.pr is None:
        said = f"the culprit {found.commit[:12]} names no pull request ({found.subject!r})"
        print(f"kregress comment: {said}")
        return []
    if not repository:
        raise ReportError("the culprit's repository is unknown: pass --repo owner/name")
    where = f"`{culprit.case}`" + (f" / `{culprit.expectation}`" if culprit.expectation else "")
    where += f" on `{culprit.target}`" if culprit.target else ""
    fixed = culprit.regress == RegressOn.PASS
    lines = [
        f"### kregress: this pull request {'fixed' if fixed else 'changed'} {where}",
        "",
        f"Bisected between {culprit.good} and {culprit.bad}: the first "
        f"{'fixed' if fixed else 'bad'} commit is {found.commit} ({found.subject}).",
    ]
    if found.pins_moved:
        lines += ["", "It also moves a pinned dependency:", *(f"- {pin}" for pin in found.pins_moved)]
    if report is None:  # the report lists them itself
        lines += culprit.pins_said()
    if report is not None:
        lines += ["", report.read_text()]
    key = f"culprit:{culprit.case}:{culprit.target or ''}"
    return [(IssueRef(repository, found.pr), key, "\n".join(lines))]


def fixing_commit(change: ChangeEntry, reports: Path | None) -> str:
    """The commit that fixed a head, where the nightly's `--regress pass` bisect named it (its culprit
    file in `reports`), with its PR; else the range of commits it is among."""
    name = report_name(change.case, change.target, fix=True).removesuffix(".md") + ".culprit.json"
    path = reports / name if reports else None
    if path is not None and path.exists():
        with contextlib.suppress(SchemaError):
            found = CulpritFile.load(path).culprit
            if found is not None:
                pr = f" (#{found.pr})" if found.pr and f"#{found.pr}" not in found.subject else ""
                return f"`{found.commit[:12]}` {found.subject}{pr}"
    return f"one of {fixing_range(change)}"


def fixing_range(change: ChangeEntry) -> str:
    """The commits after the last build where it failed, up to tonight's (a head's fix)."""
    before, now = built_commits(change.was_toolchain), built_commits(change.toolchain)
    ranges = [f"{package} `{before[package][:12]}..{commit[:12]}`" for package, commit in sorted(now.items())
              if package in before]  # fmt: skip
    return ", ".join(ranges) or "the commits since the last night (not recorded)"


def command_comment(args: argparse.Namespace) -> ExitCode:
    repository = args.repo or os.environ.get("GITHUB_REPOSITORY")
    refused: list[str] = []
    code = ExitCode.OK
    try:
        if args.comment_command == "post":
            posts = [(target_of(args.on, repository), args.key, args.body.read_text())]
        elif args.comment_command == "culprit":
            culprit = CulpritFile.load(args.culprit)
            upstream = args.repo or repository_slug(args.repository or "")
            posts = culprit_report(culprit, args.report, upstream)
        else:
            if args.comment_command == "xpass":
                posts = xpass_reports(load_results(args.results).items, refused)
            else:
                body = regressions_report(args.results, args.reports)
                posts = [(target_of(args.on, repository), "nightly-regressions", body)] if body else []
    except (OSError, json.JSONDecodeError, SchemaError, ReportError, ResultsError) as exc:
        print(f"kregress comment: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    for reason in refused:
        print(f"kregress comment: {reason}", file=sys.stderr)
    if refused:
        code = ExitCode.USAGE  # the rest is posted; the exit says something was not
    if not posts:
        print("kregress comment: nothing to report")
        return code
    if args.dry_run:
        for target, key, body in posts:
            shown = safe_body(body, target.issue, key)
            print(f"--- would post on {target.repository}#{target.issue} (key {key}) ---\n{shown}\n")
        return code
    token = args.token or os.environ.get("GITHUB_TOKEN")
    if not token:
        print("kregress comment: no token: pass --token or set GITHUB_TOKEN", file=sys.stderr)
        return ExitCode.USAGE
    reporter = Reporter(token, args.api_url or os.environ.get("GITHUB_API_URL"), retries=args.retries)
    try:
        for target, key, body in posts:
            url = reporter.post(target, key, body, label=args.label)
            print(f"posted {url}")
    except ReportError as exc:
        print(f"kregress comment: {exc}", file=sys.stderr)
        return ExitCode.GITHUB
    return code


def register(commands: argparse._SubParsersAction) -> None:
    comment = commands.add_parser(
        "comment",
        help="post bisect results, looks-fixed notes and regressions on GitHub",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    kinds = comment.add_subparsers(dest="comment_command", required=True)
    post = kinds.add_parser("post", help="post a markdown file on an issue or PR")
    post.add_argument("body", type=Path, help="markdown file, e.g. from kregress bisect --markdown")
    post.add_argument(
        "--key", required=True, help="what the comment is about (e.g. case:target): one comment per key"
    )
    xpass = kinds.add_parser("xpass", help="'looks fixed' on the upstream issue of every XPASS")
    regressions = kinds.add_parser(
        "regressions", help="one comment listing a run's failures (only the new ones, given compare --json)"
    )
    xpass.add_argument("results", type=Path, help="results file from pytest --kregress-json")
    regressions.add_argument(
        "results", type=Path, help="results file (every FAIL) or `kregress compare --json` file (new FAILs)"
    )
    regressions.add_argument(
        "--reports", type=Path, help="folder of bisect reports named <case>.<target>.md (':' as '-')"
    )
    culprit = kinds.add_parser(
        "culprit",
        help="the culprit commit of a bisect on its pull request upstream",
        description="Post the bisect report on the pull request of the culprit commit that "
        "`kregress bisect --culprit-json` wrote: one comment per case and target, edited on a second "
        "run; nothing for a range, a suspect or a commit that names no PR. Its repository: --repo "
        "owner/name, else the one --repository (the compiler's git URL) names on github.com.",
    )
    culprit.add_argument("culprit", type=Path, help="the file `kregress bisect --culprit-json` wrote")
    culprit.add_argument("--report", type=Path, help="the bisect's markdown report, shown below")
    culprit.add_argument("--repository", help="the compiler's git URL (https://github.com/owner/name.git)")
    for parser in (post, regressions):
        parser.add_argument("--on", required=True, help="issue or PR: a URL, or a number with --repo")
    for parser in (post, xpass, regressions, culprit):
        parser.add_argument("--repo", help="owner/name (default: GITHUB_REPOSITORY)")
        parser.add_argument("--token", help="API token (default: GITHUB_TOKEN); never printed")
        parser.add_argument("--api-url", help="API base URL for GitHub Enterprise (default: GITHUB_API_URL)")
        parser.add_argument("--label", help="also add this label (e.g. looks-fixed)")
        parser.add_argument(
            "--retries", type=int, default=3, help="retries on rate limits and 5xx (default 3)"
        )
        parser.add_argument("--dry-run", action="store_true", help="print what would be posted, send nothing")
        parser.set_defaults(run=command_comment)
