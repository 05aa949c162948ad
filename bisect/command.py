"""`kregress bisect`: find the compiler release or commit where a case's outcome changed.

Exit codes: 0 a single culprit found; 1 no single culprit (an endpoint did not verify, skips left
a range, or history was not monotone); 3 infrastructure (the runner or the package index failed);
64 usage.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from kregress.bisect.bisect_report import markdown, points_table
from kregress.bisect.bisection import Bisection, search_between, verify_ends
from kregress.bisect.candidates import (
    CandidateError,
    CommitBuilder,
    commit_candidates,
    parse_version_ref,
    release_candidates,
)
from kregress.bisect.judging import REGRESSIONS, CaseRun, InfrastructureError, Memo
from kregress.bisect.search import plain_bound

# Parsing and the order of the steps only: candidates.py lists them, bisection.py judges and
# searches, bisect_report.py renders.
EXIT_FOUND, EXIT_NOT_FOUND, EXIT_INFRASTRUCTURE, EXIT_USAGE = 0, 1, 3, 64


def command_bisect(args: argparse.Namespace) -> int:
    console = Console(stderr=True, highlight=False)
    if args.jobs < 1 or args.reruns < 1:
        console.print("kregress bisect: --jobs and --reruns must be at least 1")
        return EXIT_USAGE
    if not (args.corpus / args.case / "case.toml").exists():
        console.print(
            f"kregress bisect: no case {args.case!r} ({args.corpus / args.case / 'case.toml'} is missing)"
        )
        return EXIT_USAGE
    try:
        if parse_version_ref(args.good) or parse_version_ref(args.bad):
            candidates = release_candidates(args.good, args.bad, pre=args.pre)
            builder = None
        else:
            if args.repo is None:
                console.print("kregress bisect: git refs need --repo PATH (a local clone of the compiler)")
                return EXIT_USAGE
            candidates = commit_candidates(args.repo, args.good, args.bad, first_parent=not args.all_parents)
            builder = CommitBuilder(args.repo, args.build_cmd)
    except CandidateError as exc:
        console.print(f"kregress bisect: {exc}")
        return EXIT_USAGE
    except OSError as exc:
        console.print(f"kregress bisect: cannot list the candidates: {exc}")
        return EXIT_INFRASTRUCTURE
    run = CaseRun(args.corpus, args.case, args.expectation, args.target, args.matrix, args.case_timeout)
    bisection = Bisection(run, args.regress, args.reruns, builder, Memo(), console)
    between = len(candidates) - 2
    console.print(
        f"bisecting {args.case} over {len(candidates)} candidates "
        f"({candidates[0].label} … {candidates[-1].label}): "
        f"at most {plain_bound(between)} points without skips"
        + (f", {args.jobs} at a time" if args.jobs > 1 else "")
    )
    try:
        console.print("verifying both ends")
        problems = verify_ends(bisection, candidates)
        if problems:
            for end in (candidates[0], candidates[-1]):
                point = bisection.points[end.key]
                console.print(f"  observed at {end.label}: {point.note or point.describe()}")
            console.print(
                f"kregress bisect: {'; '.join(problems)} for --regress {args.regress}: nothing to search"
            )
            return EXIT_NOT_FOUND
        result = search_between(bisection, candidates, args.jobs)
    except InfrastructureError as exc:
        console.print(f"kregress bisect: {exc}")
        return EXIT_INFRASTRUCTURE
    text = markdown(args.case, args.expectation, args.target, args.regress, candidates, result, bisection)
    console.print(points_table(candidates, bisection))
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    return EXIT_FOUND if result.exact else EXIT_NOT_FOUND


def add_parser(commands: argparse._SubParsersAction) -> None:
    bisect = commands.add_parser(
        "bisect",
        help="find the release or commit where a case's outcome changed",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bisect.add_argument("case", help="the case folder name under --corpus")
    bisect.add_argument("--good", required=True, help="a release (triton==3.2.0) or, with --repo, a git ref")
    bisect.add_argument("--bad", required=True, help="a release (triton==3.6.0) or, with --repo, a git ref")
    bisect.add_argument(
        "--expectation", "-e", help="judge this expectation only (default: all of the case's)"
    )
    bisect.add_argument(
        "--target", "-t", help="judge on this target (default: every target of --backend cpu)"
    )
    bisect.add_argument(
        "--regress", default="fail", choices=REGRESSIONS,
        help="the outcome that counts as bad: fail (default), pass (to find a fix), crash, error",
    )  # fmt: skip
    bisect.add_argument("--corpus", type=Path, default=Path("corpus"), help="default: corpus")
    bisect.add_argument("--repo", type=Path, help="local clone of the compiler, for git refs")
    bisect.add_argument(
        "--build-cmd",
        help="shell command building a commit: {src} is its source tree, {out} where to leave wheels "
        "(default: install the source tree as it is)",
    )
    bisect.add_argument("--all-parents", action="store_true", help="walk every commit, not first-parent only")
    bisect.add_argument("--pre", action="store_true", help="include pre-releases between the ends")
    bisect.add_argument("-j", "--jobs", type=int, default=1, help="points judged in parallel per round")
    bisect.add_argument(
        "--reruns", type=int, default=1, help="judge each point K times; the majority decides"
    )
    bisect.add_argument("--case-timeout", type=float, help="seconds per child process (default: the case's)")
    bisect.add_argument("--markdown", type=Path, help="also write the report here (for a GitHub comment)")
    bisect.set_defaults(run=command_bisect)
