"""The Level Zero headers and loader that triton-xpu builds against, provisioned by kregress itself.

Before it compiles any kernel, even ahead of time, triton-xpu builds a small C++ helper module
with `#include <level_zero/ze_api.h>` and `-lze_loader`. A machine with Debian's `libze-dev`
installed system-wide uses that. Elsewhere kregress unpacks Debian's `libze-dev` and `libze1`,
pinned by version and sha256, into an environment of its cache (no root, nothing system-wide):
from a folder of those two .deb files (`KREGRESS_LEVEL_ZERO_DEBS`), else fetched by name from
Debian with apt's state kept private. The child that compiles finds them through CPATH (the
headers) and LIBRARY_PATH (`-lze_loader`), and LD_LIBRARY_PATH for triton-xpu's modules that call
Level Zero when loaded (the arch helper that an ahead-of-time compile builds calls none of it, so
it needs the loader only to link).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kregress.adapters import LEVEL_ZERO_WHY_NOT, level_zero_headers
from kregress.debian import ProvisionError, download, mirror, run
from kregress.toolchains import ENV_FORMAT, META, EnvironmentCache

DEBS_VARIABLE = "KREGRESS_LEVEL_ZERO_DEBS"
# Debian 12 keeps 1.8.12-1 for its whole life, so the pins stay fetchable by name; measured:
# triton-xpu 3.3.0b1 compiles for xpu:pvc with them.
SUITE = "bookworm"
INCLUDE = "usr/include"
LIBRARIES = "usr/lib/x86_64-linux-gnu"
HEADER = "level_zero/ze_api.h"
LOADER = "libze_loader.so"


@dataclass(frozen=True)
class Pin:
    """One package as measured: its version, the sha256 and size of its amd64 .deb."""

    version: str
    sha256: str
    size: int

    def file_name(self, package: str) -> str:
        return f"{package}_{self.version}_amd64.deb"


# Measured with dpkg -c: libze-dev holds the headers (ze_api.h, ze_ddi.h, zes_*, zet_*, loader/,
# layers/) and the libze_loader.so link; libze1 the loader itself (libze_loader.so.1.8.0) and its
# tracing and validation layers.
PINNED = {
    "libze-dev": Pin("1.8.12-1", "04982092f99d0815fad8352c785ae5e0a91501aab358745b4cd9a7ce78b54606", 93780),
    "libze1": Pin("1.8.12-1", "403b3e3821a3e2dfdc8e6392300350943de2f66d1ada1dc551f8d5ac175ef944", 108288),
}


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pinned_in(folder: Path, source: str) -> dict[str, Path]:
    """The .deb file of each pinned package in `folder`, found by its size and sha256: a file that
    differs from the pin (another build, a corrupt download) is never unpacked."""
    debs = sorted(folder.glob("*.deb"))
    sizes = {pin.size for pin in PINNED.values()}
    by_digest = {sha256_of(deb): deb for deb in debs if deb.stat().st_size in sizes}
    found, problems = {}, []
    for package, pin in PINNED.items():
        if pin.sha256 in by_digest:
            found[package] = by_digest[pin.sha256]
            continue
        others = [deb for deb in debs if deb.name.startswith(f"{package}_")]
        problems.append(
            f"{package} {pin.version} (sha256 {pin.sha256}): "
            + (", ".join(f"{deb.name} has sha256 {sha256_of(deb)}" for deb in others) or "missing")
        )
    if problems:
        raise ProvisionError(f"{source} lacks the pinned {'; '.join(problems)}")
    return found


def expected_files() -> str:
    return " and ".join(pin.file_name(package) for package, pin in PINNED.items())


def make(folder: Path, log: Any) -> dict[str, Any]:
    """Unpack the pinned packages into `folder/root` and check that the header and the loader are
    there."""
    folder.mkdir(parents=True)
    given = os.environ.get(DEBS_VARIABLE)
    if given:
        source = f"the .deb files in {given}"
        debs = pinned_in(Path(given), f"{DEBS_VARIABLE}={given}")
    else:
        source = f"Debian {SUITE} ({mirror(list(PINNED), DEBS_VARIABLE)})"
        log(f"fetching {', '.join(PINNED)} from {source}")
        names = [f"{package}={pin.version}" for package, pin in PINNED.items()]
        debs = pinned_in(download(folder, SUITE, names, DEBS_VARIABLE), f"what {source} served")
    log(f"unpacking the Level Zero headers and loader from {source}")
    for deb in debs.values():
        run(["dpkg-deb", "-x", str(deb), str(folder / "root")], f"unpacking {deb.name}")
    shutil.rmtree(folder / "apt", ignore_errors=True)
    shutil.rmtree(folder / "debs", ignore_errors=True)
    for inside in (Path(INCLUDE) / HEADER, Path(LIBRARIES) / LOADER):
        if not (folder / "root" / inside).exists():  # a link counts only if what it names is there
            raise ProvisionError(f"{source}: no {inside} among the unpacked files")
    return {
        "format": ENV_FORMAT,
        "toolchain": ["level-zero", *(f"{p}=={pin.version}" for p, pin in PINNED.items())],
        "versions": {package: pin.version for package, pin in PINNED.items()},
        "source": source,
        "include": str(Path("root") / INCLUDE),
        "libraries": str(Path("root") / LIBRARIES),
        "created": time.time(),
    }


def key() -> str:
    """Pinned content: one environment per pinned version, whichever way the files came."""
    return "level-zero-" + "-".join(sorted({pin.version for pin in PINNED.values()}))


def provision(cache: EnvironmentCache | None = None, log: Any = lambda message: None) -> dict[str, Any]:
    """The provisioned Level Zero's metadata, with its folder (`path`) and the `include` and
    `libraries` folders in it; built on first use."""
    cache = cache or EnvironmentCache()
    folder = cache.built_once(key(), lambda building: make(building, log))
    meta = json.loads((folder / META).read_text())
    inside = {name: str(folder / meta[name]) for name in ("include", "libraries")}
    return {**meta, **inside, "path": str(folder)}


def child_variables(log: Any = lambda message: None) -> dict[str, str]:
    """What a child compiling with triton-xpu needs to build its helper module: nothing where its
    compiler already finds the headers (a system-wide libze-dev first), else the provisioned ones
    on its search paths (after any the caller set), else why there are none and what to do."""
    if level_zero_headers():
        return {}
    try:
        found = provision(log=log)
    except ProvisionError as exc:
        return {
            LEVEL_ZERO_WHY_NOT: f"kregress could not provision them ({exc}); install them with "
            f"`apt-get install libze-dev`, or set {DEBS_VARIABLE} to a folder holding {expected_files()} "
            f"(`apt-get download libze-dev={PINNED['libze-dev'].version} "
            f"libze1={PINNED['libze1'].version}` on a machine that reaches Debian {SUITE})"
        }
    include, libraries = found["include"], found["libraries"]
    wanted = {"CPATH": include, "LIBRARY_PATH": libraries, "LD_LIBRARY_PATH": libraries}
    return {name: os.pathsep.join(filter(None, (os.environ.get(name), p))) for name, p in wanted.items()}
