"""`kregress build PACKAGE@REF`: a compiler's head, built through the build cache, as a toolchain."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kregress.errors import ExitCode
from kregress.matrix import head_of, load_matrix

if TYPE_CHECKING:
    from kregress.builds import BuildRecipe


def progress(message: str) -> None:
    print(f"kregress build: {message}", file=sys.stderr, flush=True)


def source_of(args: argparse.Namespace) -> tuple[Path, str, str | None, BuildRecipe] | str:
    """(clone, ref, package, recipe) of what to build, or why the command line names nothing."""
    from kregress.builds import BuildRecipe, fetch_repository

    if args.repo is not None:
        if args.build_cmd is None:
            return "--repo needs --build-cmd (e.g. 'python -m pip wheel --no-deps -w {out} {src}')"
        return args.repo, args.head, None, BuildRecipe(args.build_cmd)
    head = head_of(args.head)
    if head is None:
        return f"{args.head!r} is not PACKAGE@REF (e.g. triton@main); a ref of a local clone needs --repo"
    package, ref = head
    matrix = load_matrix(args.matrix)
    entry = matrix.repositories.get(package)
    if entry is None:
        known = ", ".join(sorted(matrix.repositories)) or "none"
        return f"the matrix names no repository for {package} ([repositories.{package}]; it names: {known})"
    recipe = BuildRecipe.of(entry, args.build_cmd)
    if recipe.build_cmd is None:
        return f"[repositories.{package}] has no build_cmd: a head cannot be built without one"
    return fetch_repository(package, entry.url), ref, package, recipe


def command_build(args: argparse.Namespace) -> ExitCode:
    """Fetch the package's repository (or take --repo), pin REF to a commit, build it (or take the
    kept build) and print the toolchain spec that `pytest --toolchain` takes."""
    # Imported here: the light jobs that plan and post load every command and need no compiler.
    from kregress.builds import BuildCache, BuildFailed, resolve

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
    made = (
        f"built from {record['made_from'][:12]}'s build + {record['uncompiled_files']} uncompiled files"
        if record.get("made_from")
        else "built"
    )
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
