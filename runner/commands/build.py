"""`kregress build PACKAGE@REF`: a compiler's head, built through the build cache, as a toolchain."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kregress.errors import ExitCode

if TYPE_CHECKING:
    from kregress.builds import BuildRecipe


def progress(message: str) -> None:
    print(f"kregress build: {message}", file=sys.stderr, flush=True)


def source_of(args: argparse.Namespace) -> tuple[Path, str, str | None, BuildRecipe] | str:
    """(clone, ref, package, recipe) of what to build, or why the command line names nothing."""
    from kregress.builds import BuildRecipe, HeadError, head_source

    if args.repo is not None:
        if args.build_cmd is None:
            return "--repo needs --build-cmd (e.g. 'python -m pip wheel --no-deps -w {out} {src}')"
        return args.repo, args.head, None, BuildRecipe(args.build_cmd)
    try:
        return head_source(args.head, args.matrix, args.build_cmd)
    except HeadError as exc:
        hint = "; a ref of a local clone needs --repo" if "not PACKAGE@REF" in str(exc) else ""
        return f"{exc}{hint}"


def command_build(args: argparse.Namespace) -> ExitCode:
    """Fetch the package's repository (or take --repo), pin REF to a commit, build it (or take the
    kept build) and print the toolchain spec that `pytest --toolchain` takes."""
    # Imported here: the light jobs that plan and post load every command and need no compiler.
    from kregress.builds import BuildCache, BuildFailed, made_of, resolve

    try:
        source = source_of(args)
        if isinstance(source, str):
            progress(source)
            return ExitCode.USAGE
        clone, ref, package, recipe = source
        commit = resolve(clone, ref)
        progress(f"{args.head} is {commit}")
        cache = BuildCache(clone, recipe, name=package, log=progress)
        spec = cache.build(commit)
    except BuildFailed as exc:
        progress(f"{args.head} does not build:\n{exc}")
        return ExitCode.INFRASTRUCTURE
    record = cache.record(commit) or {}
    made = made_of(record)
    outputs = {"toolchain": spec, "commit": commit, "made": made}
    if args.json:
        print(json.dumps({"package": package, "ref": ref, **outputs, "record": record}))
    else:
        print(spec)
    if args.github_output:
        with open(os.environ.get("GITHUB_OUTPUT") or os.devnull, "a") as handle:
            handle.writelines(f"{key}={value}\n" for key, value in outputs.items())
    return ExitCode.OK


def register(commands: argparse._SubParsersAction) -> None:
    build = commands.add_parser(
        "build",
        help="build the head of a compiler's branch (triton@main) through the build cache",
        description="Fetch the repository the matrix names for PACKAGE ([repositories.PACKAGE]) into the "
        "cache, pin REF to the commit it names now, and build that commit with the repository's "
        "build_cmd — once: a commit built before is taken from the build cache, and one whose compiled "
        "inputs equal a kept build's is made from it by copying its changed uncompiled files. Prints "
        "the toolchain spec for `pytest --toolchain`. With --repo and --build-cmd, REF of a local clone "
        "is built the same way (a compiler PR's base and head). Exit 64: not PACKAGE@REF or no such "
        "repository; 3: the fetch or the build failed (its log is shown).",
    )
    build.add_argument(
        "head",
        metavar="PACKAGE@REF",
        help="e.g. triton@main, a tag or commit (triton@v3.6.0); with --repo a ref",
    )
    build.add_argument("--repo", type=Path, help="a local clone to build REF of instead (a PR's checkout)")
    build.add_argument("--build-cmd", help="the build command ({src}, {out}); needed with --repo")
    build.add_argument("--json", action="store_true", help="print the commit, the spec and how it was made")
    build.add_argument("--github-output", action="store_true", help="also write toolchain, commit, made")
    build.set_defaults(run=command_build)
