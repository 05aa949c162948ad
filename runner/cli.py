"""The `kregress` command: look at the corpus and the matrix without running any compiler.

Judging is `pytest corpus/ --backend ...`; this command checks, lists, compares and bisects.
Exit codes: 0 fine, 2 an invalid manifest, matrix or results file, 3 a toolchain that cannot be
installed, 64 usage error; `kregress compare` exits 1 when something newly FAILs, and
`kregress bisect` documents its own (0 found, 1 not found, 3 infrastructure).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

from kregress import level_zero, xpu_native
from kregress.bisect.bot import add_parser as add_bot_parser
from kregress.bisect.command import add_parser as add_bisect_parser
from kregress.bisect.comment import add_parser as add_comment_parser
from kregress.bisect.reduce import add_parser as add_reduce_parser
from kregress.bisect.verify import add_parser as add_verify_parser
from kregress.errors import ExitCode
from kregress.history import HistoryError, default_path, recent_runs, store
from kregress.manifest import load_case, reproduction_problems
from kregress.matrix import load_matrix, nightly_jobs, runner_for
from kregress.page import build as build_page
from kregress.page import matrix_markdown, render_html
from kregress.results import (
    ResultsError,
    bisect_requests,
    compare,
    load_results,
    merge,
    package_of,
    render_changes,
)
from kregress.scaffold import DRAFT, STARTERS, ScaffoldError, write_case
from kregress.schema import SchemaError
from kregress.toolchains import EnvironmentCache, Toolchain, ToolchainError


def command_check(args: argparse.Namespace) -> ExitCode:
    """Validate every corpus/<case>/case.toml (schema, targets, and that it says how it is shown to
    catch its bug); print one line per case, every problem in full."""
    matrix = load_matrix(args.matrix)
    manifests = sorted(args.corpus.glob("*/case.toml"))
    if not manifests:
        print(f"{args.corpus}: no cases (no */case.toml)", file=sys.stderr)
        return ExitCode.OK
    bad = drafts = 0
    for path in manifests:
        try:
            case = load_case(path, set(matrix.targets))
        except SchemaError as exc:
            bad += 1
            print(f"INVALID {exc}")
            continue
        problems = reproduction_problems(case)
        if problems:
            bad += 1
            print(f"INVALID {path}:" + "".join(f"\n  - {problem}" for problem in problems))
            continue
        names = ", ".join(name for name, _ in case.expectations())
        reproduce = case.manifest.reproduce
        levels = "+".join(reproduce.levels) if reproduce else ""
        if reproduce and (reproduce.guard or "").startswith(DRAFT):
            drafts += 1  # valid, so it runs while written, but it proves nothing yet
            print(f"draft   {case.id} ({case.manifest.framework}): not shown to catch its bug yet: {names}")
            continue
        print(f"ok      {case.id} ({case.manifest.framework}, {levels}): {names}")
    shown = f" ({drafts} drafts)" if drafts else ""
    print(f"{len(manifests) - bad} valid{shown}, {bad} invalid")
    return ExitCode.INVALID_FILE if bad else ExitCode.OK


def command_new(args: argparse.Namespace) -> ExitCode:
    """Write a case folder that already passes `kregress check` and runs."""
    try:
        folder = write_case(
            args.corpus, args.name, args.framework, args.issue, args.title, args.target, args.bad, args.good
        )
    except ScaffoldError as exc:
        print(f"kregress new: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    target = args.target or STARTERS[args.framework].target
    print(f"wrote {folder}/case.toml and {folder}/repro.py")
    print("next:")
    print(f"  1. write the smallest kernel that shows the bug in {folder}/repro.py, and say what must hold")
    print(f"  2. pytest {folder} --target {target}")
    if args.bad:
        print(f"  3. kregress verify {args.name}: FAIL under the bad releases, PASS under the good ones")
    else:
        print(f"  3. name the releases in [reproduce] (bad, good), then kregress verify {args.name}")
    return ExitCode.OK


def command_targets(args: argparse.Namespace) -> ExitCode:
    """Print the matrix: targets with their limits, and what each backend judges by default."""
    matrix = load_matrix(args.matrix)
    for name, target in matrix.named.items():
        limits = ", ".join(f"{k}={v}" for k, v in target.limits.items()) or "-"
        print(f"{name:18} {target.kind:12} {limits}")
    for backend, entry in matrix.backends.items():
        print(f"--backend {backend}: {', '.join(entry.targets)}")
    return ExitCode.OK


def command_matrix(args: argparse.Namespace) -> ExitCode:
    """The nightly jobs as a workflow matrix, or the runner labels for one target."""
    matrix = load_matrix(args.matrix)
    if args.repository_for:
        package = package_of(args.repository_for, args.repository_for)
        entry = matrix.repositories.get(package)
        outputs = {
            "repository": entry.url if entry else "",
            "tag-pattern": entry.tag_pattern if entry else "",
            "build-cmd": (entry.build_cmd or "") if entry else "",
        }
        print(json.dumps({"package": package, **outputs}))
    elif args.runner_for:
        try:
            name = runner_for(matrix, args.runner_for)
        except ValueError as exc:
            print(f"kregress matrix: {exc}", file=sys.stderr)
            return ExitCode.USAGE
        outputs = {"labels": json.dumps(matrix.runners[name].labels)}
        print(outputs["labels"])
    else:
        outputs = {"matrix": json.dumps({"include": nightly_jobs(matrix)})}
        print(outputs["matrix"])
    if args.github_output:
        with open(os.environ.get("GITHUB_OUTPUT") or os.devnull, "a") as handle:
            handle.writelines(f"{key}={value}\n" for key, value in outputs.items())
    return ExitCode.OK


def command_compare(args: argparse.Namespace) -> ExitCode:
    """Merge this run's result files, compare with earlier runs, say what is new."""
    try:
        current = merge([load_results(path) for path in args.results])
        previous = [merge([load_results(path)]) for path in args.previous]
    except ResultsError as exc:
        print(f"kregress compare: {exc}", file=sys.stderr)
        return ExitCode.INVALID_FILE
    if args.history:
        if args.history.exists():
            previous += recent_runs(args.history, args.window)
        else:
            print(f"kregress compare: {args.history} does not exist yet: no earlier runs", file=sys.stderr)
    changes = compare(current, previous, window=args.window)
    markdown = render_changes(changes)
    print(markdown)
    if args.merged:
        write(args.merged, json.dumps(current, indent=2))
    if args.json:
        write(args.json, json.dumps(changes.as_dict(), indent=2))
    if args.markdown:
        write(args.markdown, markdown + "\n")
    if args.bisect_requests:
        matrix = load_matrix(args.matrix)
        packages = {name: package_of(t.toolchain, "") for name, t in matrix.targets.items() if t.toolchain}
        repositories = {package: entry.url for package, entry in matrix.repositories.items()}
        requests = bisect_requests(changes, previous, packages, repositories)
        write(args.bisect_requests, json.dumps({"include": requests}))
    return ExitCode.REGRESSED if changes.new_fail or changes.lost_coverage else ExitCode.OK


def history_file(args: argparse.Namespace) -> Path:
    return args.history or default_path()


def command_history_add(args: argparse.Namespace) -> ExitCode:
    """Store result files: each as a run, or with --merge all of them as one run."""
    try:
        documents = [load_results(path) for path in args.results]
    except ResultsError as exc:
        print(f"kregress history: {exc}", file=sys.stderr)
        return ExitCode.INVALID_FILE
    path = history_file(args)
    batches = [(merge(documents), ", ".join(map(str, args.results)))] if args.merge else [
        (document, str(source)) for document, source in zip(documents, args.results, strict=True)
    ]  # fmt: skip
    for document, source in batches:
        run_id = store(path, document, source=source)
        print(f"stored run {run_id} ({len(document['items'])} items) from {source} in {path}")
    return ExitCode.OK


def command_history_fetch(args: argparse.Namespace) -> ExitCode:
    """The previous runs' history, through the API (no `gh` needed on the runner)."""
    from kregress.bisect.github import Reporter, ReportError, fetch_run_artifact

    token, repository = os.environ.get("GITHUB_TOKEN"), os.environ.get("GITHUB_REPOSITORY")
    if not token or not repository:
        print("kregress history fetch: set GITHUB_TOKEN and GITHUB_REPOSITORY", file=sys.stderr)
        return ExitCode.USAGE
    client = Reporter(token, os.environ.get("GITHUB_API_URL")).client
    this_run = os.environ.get("GITHUB_RUN_ID")
    try:
        found = fetch_run_artifact(
            client,
            repository,
            args.workflow,
            args.artifact,
            args.dir,
            branch=args.branch,
            skip_run=int(this_run) if this_run else None,
            limit=args.limit,
        )
    except ReportError as exc:
        print(f"kregress history fetch: {exc}", file=sys.stderr)
        return ExitCode.GITHUB
    if found is None:
        print(f"no completed run of {args.workflow} among the newest {args.limit} has {args.artifact!r}")
        return ExitCode.NOT_FOUND
    print(f"{args.artifact} from run {found.run_id}: {', '.join(found.files)} in {args.dir}")
    return ExitCode.OK


def command_history_runs(args: argparse.Namespace) -> ExitCode:
    for run in recent_runs(history_file(args), args.limit):
        counts = Counter(item["outcome"] for item in run["items"])
        shown = ", ".join(f"{n} {o}" for o, n in sorted(counts.items()))
        started = time.strftime("%Y-%m-%d %H:%M", time.gmtime(run["started"]))
        print(f"{run['id']:5}  {started}  {run['runner'] or '?':14} {shown}")
    return ExitCode.OK


def command_report(args: argparse.Namespace) -> ExitCode:
    """Render the matrix page (HTML) and its markdown from the history."""
    runs = recent_runs(history_file(args), args.runs)
    matrix = build_page(runs)
    if args.html:
        folder = args.html.endswith(("/", os.sep)) or Path(args.html).is_dir()
        target = Path(args.html) / "index.html" if folder else Path(args.html)
        write(target, render_html(matrix))
        print(f"wrote {target} ({len(matrix.cases)} cases × {len(matrix.columns)} columns, {len(runs)} runs)")
    if args.markdown:
        write(args.markdown, matrix_markdown(matrix))
        print(f"wrote {args.markdown}")
    if not args.html and not args.markdown:
        print(matrix_markdown(matrix))
    return ExitCode.OK


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def command_envs_build(args: argparse.Namespace) -> ExitCode:
    """Build (or find) the environment of a toolchain and print where it is."""
    started = time.perf_counter()
    provisioners = {"xpu-native": xpu_native.provision, "level-zero": level_zero.provision}
    if args.spec in provisioners:
        native = provisioners[args.spec](log=lambda m: print(m, file=sys.stderr))
        versions = ", ".join(f"{k} {v}" for k, v in native["versions"].items())
        seconds = time.perf_counter() - started
        print(f"{native['path']}  ({versions}; from {native['source']}; {seconds:.2f} s)")
        return ExitCode.OK
    environment = EnvironmentCache().get(Toolchain.parse(args.spec), log=lambda m: print(m, file=sys.stderr))
    lent = environment.meta.get("lent", {})
    versions = ", ".join(
        [f"{k} {v}" for k, v in environment.versions.items()] + [f"{k} {v} (lent)" for k, v in lent.items()]
    )
    print(f"{environment.root}  ({versions}; {time.perf_counter() - started:.2f} s)")
    return ExitCode.OK


def command_envs_list(args: argparse.Namespace) -> ExitCode:
    entries = EnvironmentCache().entries()
    if args.json:
        print(json.dumps(entries, indent=2))
        return ExitCode.OK
    if not entries:
        print("no cached toolchain environments")
    for entry in entries:
        used = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry["last_used"]))
        size = f"{entry['bytes'] / 2**20:7.1f} MiB (+{entry['shared_bytes'] / 2**20:.0f} shared)"
        stale = "  [old format: removed by prune]" if entry["stale"] else ""
        print(f"{entry['key']}  {size}  last used {used}  {entry['toolchain']}{stale}")
    total = sum(e["bytes"] for e in entries)
    print(f"{len(entries)} environments, {total / 2**20:.1f} MiB of their own")
    return ExitCode.OK


def command_envs_prune(args: argparse.Namespace) -> ExitCode:
    if not (args.all or args.keys or args.older_than is not None):
        print("kregress envs prune: say what to remove: --older-than DAYS, KEY..., or --all", file=sys.stderr)
        return ExitCode.USAGE
    cache = EnvironmentCache()
    removed = (
        cache.prune(older_than_days=args.older_than, keys=args.keys or None)
        if not args.all
        else cache.prune()
    )
    for key in removed:
        print(f"removed {key}")
    print(f"{len(removed)} environments removed")
    return ExitCode.OK


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="kregress",
        description="Regression corpus for GPU kernel compilers. Judge cases with "
        "`pytest corpus/ --backend {cpu,cuda,hip,xpu}`; this command checks cases, shows that they "
        "catch their bugs (verify), compares runs, bisects and reports.",
    )
    top.add_argument("--matrix", type=Path, default=None, help="matrix file (default: the packaged one)")
    commands = top.add_subparsers(dest="command", required=True)
    check = commands.add_parser(
        "check", help="validate every case manifest (and its [reproduce]) without running a compiler"
    )
    check.add_argument("corpus", nargs="?", type=Path, default=Path("corpus"), help="default: corpus")
    check.set_defaults(run=command_check)
    new = commands.add_parser(
        "new",
        help="start a case: a case folder that passes `kregress check` and runs",
        description="Write corpus/NAME/case.toml (every required table, the upstream issue, a "
        "[reproduce] table) and corpus/NAME/repro.py (a kernel, its float64 reference and a check) "
        "for FRAMEWORK. Then make the kernel the bug's, and the expectations what the bug breaks. "
        "Expectation kinds: compiles, resource, ir, numerics, perf, artifact (README: Adding a case). "
        "Without --bad the case is a draft: valid, listed by `kregress check` as not shown yet. "
        "Exit 0 written, 64 usage (bad name, issue URL or framework; the folder exists).",
    )
    new.add_argument("name", help="the case id and folder name: lower case, digits, underscores")
    new.add_argument("--framework", required=True, choices=sorted(STARTERS), help="the compiler of the bug")
    new.add_argument("--issue", required=True, help="the upstream issue or pull request URL")
    new.add_argument("--title", help="one line saying what breaks (default: a placeholder)")
    new.add_argument(
        "--target", help="where the bug shows (default: cpu:interpreter; cuda:sm_90 for tilelang)"
    )
    new.add_argument(
        "--bad", action="append", metavar="SPEC", help="a release with the bug, e.g. triton==3.2.0"
    )
    new.add_argument(
        "--good", action="append", metavar="SPEC", help="a release without it, e.g. triton==3.3.0"
    )
    new.add_argument("--corpus", type=Path, default=Path("corpus"), help="default: corpus")
    new.set_defaults(run=command_new)
    targets = commands.add_parser("targets", help="list the matrix's targets, limits and backends")
    targets.set_defaults(run=command_targets)
    jobs = commands.add_parser(
        "matrix",
        help="the nightly jobs (one per runner) as a GitHub Actions matrix",
        description='Print {"include": [...]} for strategy.matrix: one job per runner of the matrix file, '
        "with its labels, backend, targets and the pytest arguments that judge them.",
    )
    jobs.add_argument("--runner-for", metavar="TARGET", help="print only the labels of the runner for TARGET")
    jobs.add_argument(
        "--repository-for",
        metavar="PACKAGE",
        help="print the source repository the matrix names for PACKAGE (or a requirement like "
        "triton==3.6.0): url, tag pattern and build command, empty when there is none",
    )
    jobs.add_argument("--github-output", action="store_true", help="also append it to $GITHUB_OUTPUT")
    jobs.set_defaults(run=command_matrix)
    comparing = commands.add_parser(
        "compare",
        help="what is new since earlier runs: new FAIL, fixed, new XPASS, lost coverage, flaky",
        description="Merge RESULTS (one run, e.g. one file per runner; an item judged twice keeps every "
        "attempt) and compare with --previous runs. Flaky: attempts in this run disagree, or the item "
        "flipped between PASS and FAIL twice in the window. Exit 0 nothing newly FAILs, 1 something "
        "does, 2 a results file is unreadable, 64 usage.",
    )
    comparing.add_argument("results", nargs="+", type=Path, help="this run's --kregress-json files")
    comparing.add_argument("--previous", nargs="*", type=Path, default=[], help="earlier runs' files")
    comparing.add_argument(
        "--history",
        type=Path,
        help="also the newest runs of this history (kregress history); none yet is fine",
    )
    comparing.add_argument("--window", type=int, default=5, help="earlier runs read (default 5)")
    comparing.add_argument("--json", type=Path, help="write the changes as JSON")
    comparing.add_argument("--markdown", type=Path, help="write the changes as markdown")
    comparing.add_argument("--merged", type=Path, help="write the merged run (the next run's --previous)")
    comparing.add_argument(
        "--bisect-requests", type=Path,
        help="write {include: [case, target, good, bad, repository]} for each new FAIL",
    )  # fmt: skip
    comparing.set_defaults(run=command_compare)
    history = commands.add_parser(
        "history",
        help="the SQLite history of runs: add result files, list runs",
        description="Runs are stored by `pytest --history [PATH]` or `kregress history add`; "
        "default file: ~/.cache/kregress/history.sqlite (KREGRESS_CACHE_DIR moves it).",
    )
    history_commands = history.add_subparsers(dest="history_command", required=True)
    add = history_commands.add_parser("add", help="store --kregress-json files")
    add.add_argument("results", nargs="+", type=Path, help="results files")
    add.add_argument("--merge", action="store_true", help="store the files as one run (one per runner)")
    add.set_defaults(run=command_history_add)
    fetch = history_commands.add_parser(
        "fetch",
        help="download the history a previous workflow run left as an artifact",
        description="Finds the newest completed run of WORKFLOW (on --branch) that still has the "
        "artifact and unpacks it into --dir: how the nightly carries its history from night to "
        "night. Token, repository and API URL from GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL. "
        "Exit 0 found, 1 no earlier run has it, 3 GitHub refused or failed.",
    )
    fetch.add_argument("--workflow", required=True, help="workflow file name, e.g. nightly.yml")
    fetch.add_argument("--artifact", required=True, help="artifact name, e.g. nightly-history")
    fetch.add_argument("--dir", type=Path, required=True, help="where to unpack it")
    fetch.add_argument("--branch", help="only runs of this branch (default: any)")
    fetch.add_argument("--limit", type=int, default=10, help="newest runs to look at (default 10)")
    fetch.set_defaults(run=command_history_fetch)
    runs = history_commands.add_parser("runs", help="list the newest runs")
    runs.add_argument("--limit", type=int, default=20, help="how many (default 20)")
    runs.set_defaults(run=command_history_runs)
    report = commands.add_parser(
        "report",
        help="the matrix page: cases × targets and toolchains, trends, new since the last run",
        description="Render the newest --runs runs of the history as one self-contained HTML file "
        "(--html FILE, or a folder for index.html) and/or markdown; markdown on stdout by default.",
    )
    report.add_argument("--runs", type=int, default=20, help="runs shown in trends (default 20)")
    report.add_argument("--html", help="HTML file, or a folder (trailing /) to write index.html into")
    report.add_argument("--markdown", type=Path, help="markdown file")
    report.set_defaults(run=command_report)
    for parser in (add, runs, report):
        parser.add_argument("--history", type=Path, help="history file (default: in the user cache dir)")
    envs = commands.add_parser("envs", help="toolchain environments: build, list, prune")
    env_commands = envs.add_subparsers(dest="envs_command", required=True)
    build = env_commands.add_parser("build", help="build (or find) a toolchain's environment, print its path")
    build.add_argument(
        "spec",
        help="requirements like 'triton==3.2.0', a wheel or checkout path, 'xpu-native' for Intel's "
        "offline compiler (ocloc + IGC) that builds native XPU code here, or 'level-zero' for the Level "
        "Zero headers and loader that triton-xpu builds against",
    )
    build.set_defaults(run=command_envs_build)
    listing = env_commands.add_parser("list", help="cached environments with size on disk and last use")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(run=command_envs_list)
    prune = env_commands.add_parser("prune", help="delete cached environments")
    prune.add_argument("keys", nargs="*", help="keys of environments to delete (see `envs list`)")
    prune.add_argument("--older-than", type=float, metavar="DAYS", help="delete those unused for DAYS")
    prune.add_argument("--all", action="store_true", help="delete every cached environment")
    prune.set_defaults(run=command_envs_prune)
    add_bisect_parser(commands)
    add_comment_parser(commands)
    add_bot_parser(commands)
    add_verify_parser(commands)
    add_reduce_parser(commands)
    return top


def main(argv: list[str] | None = None) -> ExitCode:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return ExitCode.OK if exc.code == 0 else ExitCode.USAGE
    try:
        return args.run(args)
    except SchemaError as exc:
        print(f"INVALID {exc}", file=sys.stderr)
        return ExitCode.INVALID_FILE
    except ToolchainError as exc:
        print(f"kregress: {exc}", file=sys.stderr)
        return ExitCode.INFRASTRUCTURE
    except HistoryError as exc:
        print(f"kregress: {exc}", file=sys.stderr)
        return ExitCode.INVALID_FILE
    except xpu_native.NativeXpuError as exc:
        print(f"kregress: {exc}", file=sys.stderr)
        return ExitCode.INFRASTRUCTURE


if __name__ == "__main__":
    sys.exit(main())
