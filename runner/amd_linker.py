"""The ld.lld that AMD code objects of Triton up to 3.4 link with, provisioned by kregress itself.

Those releases hand the code object to an external `ld.lld` (ROCm's; 3.5 on link in process). A
machine without ROCm or an LLVM of its own still judges them: kregress unpacks Debian's `lld-19`
with the libraries it needs into its cache and runs it through the unpacked C library's loader, as
it does Intel's ocloc (kregress.xpu_native): from a folder of .deb files
(`KREGRESS_AMD_LINKER_DEBS`), else fetched by name from Debian 12 with apt's state kept private. A
linker already on the machine (TRITON_HIP_LLD_PATH, ROCm's, an LLVM's) is used first.

Measured: Debian's lld-19 links gfx942 objects of triton 3.0.0 to 3.4.0; lld-14 only those of 3.0.0.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from kregress import debian
from kregress.debian import ProvisionError
from kregress.toolchains import ENV_FORMAT, META, EnvironmentCache

DEBS_VARIABLE = "KREGRESS_AMD_LINKER_DEBS"
SUITE = "bookworm"
# ld.lld-19's own package and every library `ldd` names for it on Debian 12, nothing else.
PACKAGES = (
    "lld-19", "libllvm19", "libc6", "libstdc++6", "libgcc-s1", "zlib1g", "libzstd1", "libffi8",
    "libedit2", "libz3-4", "libxml2", "libtinfo6", "libbsd0", "libicu72", "liblzma5", "libmd0",
)  # fmt: skip
PROGRAM = "usr/lib/llvm-19/bin/ld.lld"
LINKER_VARIABLE = "TRITON_HIP_LLD_PATH"  # what Triton's AMD backend links with


def make(folder: Path, log: Any) -> dict[str, Any]:
    """Unpack the packages into `folder/root` and put an `ld.lld` that runs them at `folder/bin`."""
    folder.mkdir(parents=True)
    given = os.environ.get(DEBS_VARIABLE)
    if given:
        source = f"the .deb files in {given}"
        debs = debian.packages_in(Path(given), PACKAGES, DEBS_VARIABLE)
    else:
        source = f"Debian {SUITE} ({debian.mirror(PACKAGES, DEBS_VARIABLE)})"
        log(f"fetching {', '.join(PACKAGES)} from {source}")
        fetched = debian.download(folder, SUITE, PACKAGES, DEBS_VARIABLE)
        debs = debian.packages_in(fetched, PACKAGES, DEBS_VARIABLE)
    log(f"unpacking the AMD linker ld.lld ({len(debs)} packages) from {source}")
    wrapper = debian.unpack_with_loader(debs, folder, PROGRAM, "ld.lld", source)
    shutil.rmtree(folder / "apt", ignore_errors=True)
    shutil.rmtree(folder / "debs", ignore_errors=True)
    versions = {package: version for package, (_, version) in debs.items()}
    answer = debian.run([str(wrapper), "--version"], f"running {PROGRAM} from {source}").strip()
    return {
        "format": ENV_FORMAT,
        "toolchain": ["amd-linker", *(f"{p}=={v}" for p, v in versions.items())],
        "versions": {"ld.lld": answer.splitlines()[0] if answer else "unknown", **versions},
        "source": source,
        "linker": str(Path("bin") / "ld.lld"),
        "created": time.time(),
    }


def key() -> str:
    """Pinned files: by their names and sizes. Fetched by name: one environment, until pruned."""
    given = os.environ.get(DEBS_VARIABLE)
    if not given:
        return f"amd-linker-{SUITE}"
    listed = sorted((p.name, p.stat().st_size) for p in Path(given).glob("*.deb"))
    return "amd-linker-" + hashlib.sha256(json.dumps(listed).encode()).hexdigest()[:12]


def provision(cache: EnvironmentCache | None = None, log: Any = lambda message: None) -> dict[str, Any]:
    """The provisioned linker's metadata, with `path` to its ld.lld; built on first use."""
    cache = cache or EnvironmentCache()
    folder = cache.built_once(key(), lambda building: make(building, log))
    meta = json.loads((folder / META).read_text())
    return {**meta, "path": str(folder / meta["linker"])}


def machine_linker() -> str | None:
    """A linker this machine already has (kregress.adapters.triton_aot.find_hip_linker's choice)."""
    from kregress.adapters.triton_aot import find_hip_linker

    return find_hip_linker()


def linker(log: Any = lambda message: None) -> tuple[str | None, str]:
    """The ld.lld the children link AMD code with, and where it comes from (or why there is none)."""
    found = machine_linker()
    if found:
        return found, "this machine's"
    try:
        provisioned = provision(log=log)
    except ProvisionError as exc:
        return None, (
            f"kregress could not provision an ld.lld ({exc}); install Debian's lld-19, set "
            f"{LINKER_VARIABLE} to an ld.lld, or {DEBS_VARIABLE} to a folder of the .deb files of "
            f"{', '.join(PACKAGES)}"
        )
    return provisioned["path"], provisioned["source"]


def child_variables(log: Any = lambda message: None) -> dict[str, str]:
    """What a child compiling for AMD needs: the linker, where none is on the machine (where none
    can be had, the releases that need one SKIP saying what to install)."""
    found, _ = linker(log)
    return {LINKER_VARIABLE: found} if found and found != machine_linker() else {}


@functools.cache
def identity() -> str:
    """The linker a judgement of an AMD target links with, by its own words: part of the key of a
    remembered judgement (a machine with none SKIPs what one with it judges)."""
    found, _ = linker()
    if not found:
        return "none"
    try:
        shown = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60, check=False)
    except OSError as exc:
        return f"{found}: {exc}"
    return shown.stdout.strip() or found
