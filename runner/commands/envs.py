"""`kregress envs`: the cached toolchain environments: build one, list them, prune them."""

from __future__ import annotations

import argparse
import json
import sys
import time

from kregress import amd_linker, level_zero, xpu_native
from kregress.errors import ExitCode
from kregress.toolchains import EnvironmentCache, Toolchain


def command_envs_build(args: argparse.Namespace) -> ExitCode:
    """Build (or find) the environment of a toolchain and print where it is."""
    started = time.perf_counter()
    provisioners = {
        "xpu-native": xpu_native.provision,
        "level-zero": level_zero.provision,
        "amd-linker": amd_linker.provision,
    }
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


def register(commands: argparse._SubParsersAction) -> None:
    envs = commands.add_parser("envs", help="toolchain environments: build, list, prune")
    env_commands = envs.add_subparsers(dest="envs_command", required=True)
    build = env_commands.add_parser("build", help="build (or find) a toolchain's environment, print its path")
    build.add_argument(
        "spec",
        help="requirements like 'triton==3.2.0', a wheel or checkout path, 'xpu-native' for Intel's "
        "offline compiler (ocloc + IGC) that builds native XPU code here, 'level-zero' for the Level "
        "Zero headers and loader that triton-xpu builds against, or 'amd-linker' for the ld.lld that AMD "
        "code of triton up to 3.4 links with",
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
