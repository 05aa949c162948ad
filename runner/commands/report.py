"""`kregress report`: the matrix page (HTML) and its markdown, rendered from the history."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from kregress.commands.history import add_history_option, history_file
from kregress.errors import ExitCode
from kregress.history import recent_runs
from kregress.page import build as build_page
from kregress.page import matrix_markdown, render_html
from kregress.paths import write_output


def command_report(args: argparse.Namespace) -> ExitCode:
    """Render the matrix page (HTML) and its markdown from the history."""
    runs = recent_runs(history_file(args), args.runs)
    matrix = build_page(runs)
    if args.html:
        folder = args.html.endswith(("/", os.sep)) or Path(args.html).is_dir()
        target = Path(args.html) / "index.html" if folder else Path(args.html)
        write_output(target, render_html(matrix))
        print(f"wrote {target} ({len(matrix.cases)} cases × {len(matrix.columns)} columns, {len(runs)} runs)")
    if args.markdown:
        write_output(args.markdown, matrix_markdown(matrix))
        print(f"wrote {args.markdown}")
    if not args.html and not args.markdown:
        print(matrix_markdown(matrix))
    return ExitCode.OK


def register(commands: argparse._SubParsersAction) -> None:
    report = commands.add_parser(
        "report",
        help="the matrix page: cases × targets and toolchains, trends, new since the last run",
        description="Render the newest --runs runs of the history as one self-contained HTML file "
        "(--html FILE, or a folder for index.html) and/or markdown; markdown on stdout by default.",
    )
    report.add_argument("--runs", type=int, default=20, help="runs shown in trends (default 20)")
    report.add_argument("--html", help="HTML file, or a folder (trailing /) to write index.html into")
    report.add_argument("--markdown", type=Path, help="markdown file")
    add_history_option(report)
    report.set_defaults(run=command_report)
