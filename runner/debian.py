"""Debian packages for kregress's cache, fetched by name with apt's own state kept private.

The native tools kregress provisions itself come from Debian packages unpacked into a folder of
its cache, never installed system-wide: apt's options point at a private sources list, lists,
cache and status, so neither root nor the machine's apt state is needed or touched.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from kregress.errors import KregressError
from kregress.jobs import tail

MIRROR_VARIABLE = "KREGRESS_XPU_NATIVE_MIRROR"
COMMAND_TIMEOUT = 900


class ProvisionError(KregressError):
    """A tool kregress provisions could not be; the message says what to install or set."""


def run(command: list[str], what: str, cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=COMMAND_TIMEOUT,
                              check=False)  # fmt: skip
    except FileNotFoundError:
        raise ProvisionError(f"{what}: {command[0]} is not on this machine") from None
    except subprocess.TimeoutExpired:
        raise ProvisionError(f"{what}: took over {COMMAND_TIMEOUT} s") from None
    if done.returncode != 0:
        raise ProvisionError(
            f"{what} failed (exit {done.returncode}):\n{tail(done.stdout + done.stderr, 15)}"
        )
    return done.stdout


def deb_fields(deb: Path) -> dict[str, str]:
    text = run(["dpkg-deb", "-f", str(deb), "Package", "Version"], f"reading {deb.name}")
    return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)


def mirror(packages: Sequence[str], debs_variable: str) -> str:
    """The Debian mirror this machine's apt already uses (so a runner's own mirror is honoured)."""
    if os.environ.get(MIRROR_VARIABLE):
        return os.environ[MIRROR_VARIABLE]
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for source in sources:
        text = source.read_text(errors="replace") if source.is_file() else ""
        for uri in re.findall(r"^URIs:\s*(\S+)", text, re.MULTILINE) + re.findall(
            r"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+\S+\s+main", text, re.MULTILINE
        ):
            if uri.rstrip("/").endswith("/debian"):
                return uri
    raise ProvisionError(
        f"no Debian mirror in this machine's apt sources to fetch {', '.join(packages)} from; set "
        f"{debs_variable} to a folder of those .deb files, or {MIRROR_VARIABLE} to a Debian mirror"
    )


def download(into: Path, suite: str, packages: Sequence[str], debs_variable: str) -> Path:
    """Fetch `packages` (names, or name=version) from Debian `suite` with apt into `into/debs`,
    touching none of the machine's own apt state; `debs_variable` is what to set instead."""
    state = into / "apt"
    for part in ("lists/partial", "cache/archives/partial", "etc"):
        (state / part).mkdir(parents=True, exist_ok=True)
    (state / "status").touch()
    (state / "etc" / "sources.list").write_text(f"deb {mirror(packages, debs_variable)} {suite} main\n")
    options = [
        f"-oDir::Etc::SourceList={state / 'etc' / 'sources.list'}", "-oDir::Etc::SourceParts=/dev/null",
        f"-oDir::State::Lists={state / 'lists'}", f"-oDir::Cache={state / 'cache'}",
        f"-oDir::State::status={state / 'status'}", "-oAPT::Architecture=amd64",
        "-oAPT::Architectures=amd64", "-oAPT::Sandbox::User=root", "-qq",
    ]  # fmt: skip
    # An index that cannot be fetched (no network, a wrong mirror) fails here with apt's reason,
    # rather than as "Unable to locate package" in the download after it.
    update = ["apt-get", *options, "-oAPT::Update::Error-Mode=any", "update"]
    run(update, f"apt-get update for Debian {suite}")
    debs = into / "debs"
    debs.mkdir()
    run(["apt-get", *options, "download", *packages], f"apt-get download from Debian {suite}", cwd=debs)
    return debs


def packages_in(folder: Path, packages: Sequence[str], debs_variable: str) -> dict[str, tuple[Path, str]]:
    """The .deb file and version of each of `packages` in `folder`, by package name; every one
    must be there (the message names the missing ones and the variable that pointed here)."""
    found = {}
    for deb in sorted(folder.glob("*.deb")):
        fields = deb_fields(deb)
        found[fields.get("Package", "")] = (deb, fields.get("Version", "unknown"))
    missing = [p for p in packages if p not in found]
    if missing:
        raise ProvisionError(
            f"{debs_variable}={folder} lacks {', '.join(missing)} (it needs the .deb files of "
            f"{', '.join(packages)})"
        )
    return {p: found[p] for p in packages}


LOADER = "ld-linux-x86-64.so.2"
LIBRARY_FOLDERS = ("usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu")  # merged /usr or not

WRAPPER = """#!/bin/sh
# {program} from {source}, run through the loader of the C library it was built against.
here=$(dirname "$(readlink -f "$0")")/..
exec "$here/root/{loader}" --library-path "{library_path}" "$here/root/{program}" "$@"
"""


def unpack_with_loader(debs: dict[str, tuple[Path, str]], folder: Path, program: str, name: str,
                       source: str) -> Path:  # fmt: skip
    """Unpack `debs` into `folder/root` and write `folder/bin/name`, which runs `program` (a path
    inside the packages) through the unpacked C library's own loader: a tool of another Debian
    release runs on this machine's kernel whatever its own libraries are."""
    for deb, _ in debs.values():
        run(["dpkg-deb", "-x", str(deb), str(folder / "root")], f"unpacking {deb.name}")
    root = folder / "root"
    libraries = [lib for lib in LIBRARY_FOLDERS if (root / lib).is_dir()]
    loader = next((f"{lib}/{LOADER}" for lib in libraries if (root / lib / LOADER).exists()), None)
    if loader is None or not (root / program).exists():
        raise ProvisionError(f"{source}: no {program} or no {LOADER} among the unpacked files")
    (folder / "bin").mkdir(exist_ok=True)
    wrapper = folder / "bin" / name
    library_path = ":".join(f"$here/root/{lib}" for lib in libraries)
    text = WRAPPER.format(program=program, source=source, loader=loader, library_path=library_path)
    wrapper.write_text(text)
    wrapper.chmod(0o755)
    return wrapper
