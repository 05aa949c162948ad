"""Intel's offline compiler on a machine without an Intel GPU, provisioned by kregress itself.

Native XPU code (registers, spills, per-thread scratch) comes from `ocloc` and the IGC inside it.
A real XPU runner has one on PATH, and the child prefers it. Elsewhere kregress unpacks Debian's
`intel-ocloc` with IGC and runs it through the loader of the C library it was built against,
unpacked beside it (nothing is installed system-wide): from a folder of .deb files
(`KREGRESS_XPU_NATIVE_DEBS`, pinned), else fetched by name from Debian's development distribution
with apt's own options pointed at private lists and caches. The result is an environment of the
kregress cache, listed and pruned with the toolchain environments.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from kregress import debian, level_zero
from kregress.adapters.ocloc import CANDIDATES_VARIABLE, PROVISIONED_VARIABLE
from kregress.debian import ProvisionError, run
from kregress.debian import download as fetch
from kregress.debian import mirror as debian_mirror
from kregress.toolchains import ENV_FORMAT, META, EnvironmentCache

DEBS_VARIABLE = "KREGRESS_XPU_NATIVE_DEBS"
# Measured: ocloc 26.27 with IGC 2.40 needs these and nothing else from outside its own packages.
PACKAGES = ("intel-ocloc", "libigc2", "libigdfcl2", "libc6", "libstdc++6", "libgcc-s1", "zlib1g")
# The packages whose versions decide the native code (the C and C++ runtimes beside them do not).
COMPILER_PACKAGES = ("ocloc", "intel-ocloc", "libigc2", "libigdfcl2")
SUITE = "sid"  # the only Debian suite whose IGC enforces the hardware's scratch limit as IGC does


# The native XPU compiler could not be provisioned; the message says what to install or set.
NativeXpuError = ProvisionError


def packages_in(folder: Path) -> dict[str, tuple[Path, str]]:
    """The .deb file and version of each of PACKAGES in `folder`; every one must be there."""
    return debian.packages_in(folder, PACKAGES, DEBS_VARIABLE)


def mirror() -> str:
    """The Debian mirror the packages come from (this machine's apt's, or KREGRESS_XPU_NATIVE_MIRROR)."""
    return debian_mirror(PACKAGES, DEBS_VARIABLE)


def download(into: Path) -> dict[str, tuple[Path, str]]:
    """Fetch PACKAGES by name from Debian's development suite, with apt's state kept private."""
    return packages_in(fetch(into, SUITE, PACKAGES, DEBS_VARIABLE))


def make(folder: Path, log: Any) -> dict[str, Any]:
    """Unpack the packages into `folder/root`, put an `ocloc` that runs them at `folder/bin`."""
    folder.mkdir(parents=True)
    given = os.environ.get(DEBS_VARIABLE)
    if given:
        source = f"the .deb files in {given}"
        debs = packages_in(Path(given))
    else:
        source = f"Debian {SUITE} ({mirror()})"
        log(f"fetching {', '.join(PACKAGES)} from {source}")
        debs = download(folder)
    versions = {package: version for package, (_, version) in debs.items()}
    log(f"unpacking Intel's native XPU compiler ({len(debs)} packages) from {source}")
    for deb, _ in debs.values():  # ocloc's file name carries its version: look for it first
        run(["dpkg-deb", "-x", str(deb), str(folder / "root")], f"unpacking {deb.name}")
    programs = sorted(p for p in (folder / "root" / "usr" / "bin").glob("ocloc*") if not p.is_symlink())
    if not programs:
        raise NativeXpuError(f"{source}: no usr/bin/ocloc* among the unpacked files")
    ocloc = str(programs[0].relative_to(folder / "root"))
    wrapper = debian.unpack_with_loader({}, folder, ocloc, "ocloc", source)
    shutil.rmtree(folder / "apt", ignore_errors=True)
    shutil.rmtree(folder / "debs", ignore_errors=True)
    answer = run([str(wrapper), "--version"], f"running {ocloc} from {source}").strip()
    return {
        "format": ENV_FORMAT,
        "toolchain": ["xpu-native", *(f"{p}=={v}" for p, v in versions.items())],
        "versions": {"ocloc": answer.splitlines()[-1] if answer else "unknown", **versions},
        "source": source,
        "ocloc": str(Path("bin") / "ocloc"),
        "created": time.time(),
    }


def key() -> str:
    """Pinned files: by their names and sizes. Fetched by name: one environment, until pruned."""
    given = os.environ.get(DEBS_VARIABLE)
    if not given:
        return f"xpu-native-{SUITE}"
    listed = sorted((p.name, p.stat().st_size) for p in Path(given).glob("*.deb"))
    return "xpu-native-" + hashlib.sha256(json.dumps(listed).encode()).hexdigest()[:12]


def provision(cache: EnvironmentCache | None = None, log: Any = lambda message: None) -> dict[str, Any]:
    """The provisioned native XPU compiler's metadata, with `path` to its ocloc; built on first use."""
    cache = cache or EnvironmentCache()
    folder = cache.built_once(key(), lambda building: make(building, log))
    meta = json.loads((folder / META).read_text())
    return {**meta, "path": str(folder / meta["ocloc"])}


def child_variables(log: Any = lambda message: None) -> dict[str, str]:
    """What a child compiling for XPU needs: the Level Zero headers and loader that triton-xpu
    builds its helper module against (kregress.level_zero), and for native code the provisioned
    ocloc, or why there is none (an ocloc on PATH is still tried first)."""
    needed = level_zero.child_variables(log=log)
    try:
        native = provision(log=log)
    except NativeXpuError as exc:
        why = (f"kregress could not provision Intel's ocloc ({exc}); install intel-ocloc, or set "
               f"{DEBS_VARIABLE} to a folder of the .deb files of {', '.join(PACKAGES)}")  # fmt: skip
        return {**needed, PROVISIONED_VARIABLE: json.dumps({"why_not": why})}
    described = {"source": native["source"], "versions": native["versions"]}
    return {**needed, CANDIDATES_VARIABLE: native["path"], PROVISIONED_VARIABLE: json.dumps(described)}


@functools.cache
def identity() -> str:
    """The native compiler a judgement of an XPU compile target used, by package versions (IGC's
    among them) and any ocloc on PATH, which the child tries first: part of a remembered
    judgement's key, so that a new IGC is judged again, never read back as the old verdict."""
    on_path = shutil.which("ocloc")
    try:
        provided = provision()["versions"]
        versions: dict[str, str] = {k: v for k, v in provided.items() if k in COMPILER_PACKAGES}
    except NativeXpuError as exc:
        versions = {"not provisioned": str(exc).splitlines()[0]}
    if on_path:
        try:
            versions = {**versions, "on PATH": run([on_path, "--version"], "ocloc --version").strip()}
        except NativeXpuError as exc:
            versions = {**versions, "on PATH": str(exc).splitlines()[0]}
    return json.dumps(versions, sort_keys=True)
