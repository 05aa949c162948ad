"""The native step of XPU code: Intel's offline compiler (`ocloc`, with IGC inside) turns SPIR-V into
the binary the GPU runs, and decides there how many registers a thread gets, what spills and how
much per-thread scratch space (PTSS) it needs. A real device does the same when it loads SPIR-V,
so these are the figures that make a kernel fit or fail on the hardware.

Runs inside the child process. Builds are cached by content (SPIR-V, device, options, the ocloc
that built it), so a warm run and every bisect step that compiles the same SPIR-V cost nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

from kregress.adapters import binary_kind, c_string, elf_sections
from kregress.paths import cache_root, write_atomically

# How kregress tells a child which ocloc programs to try, in order (os.pathsep-separated), and what
# the provisioned one is (JSON: versions and where it came from).
CANDIDATES_VARIABLE = "KREGRESS_OCLOC_CANDIDATES"
PROVISIONED_VARIABLE = "KREGRESS_OCLOC_PROVISIONED"

# IGC's own words when a kernel needs more per-thread scratch than the hardware has.
PTSS_ERROR = re.compile(
    r"total scratch space exceeds HW supported limit[^:]*:\s*(\d+) bytes \(max permitted PTSS (\d+) bytes\)"
)
# Product families in a zebin's `.note.intelgt.compat` (IGC's PRODUCT_FAMILY numbering).
PRODUCT_FAMILIES = {1270: "dg2", 1271: "pvc", 1272: "mtl", 1273: "arl", 1274: "bmg", 1275: "lnl"}
NOTE_PRODUCT_FAMILY = 1


@dataclass
class NativeBuild:
    """What one ocloc build gave: the binary, or the error with IGC's figure when it is a PTSS one."""

    returncode: int
    log: str
    binary: bytes | None = None
    command: list[str] = field(default_factory=list)
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.binary is not None and binary_kind(self.binary) == "elf"

    def scratch_overflow(self) -> tuple[int, int] | None:
        """(needed, limit) in bytes when IGC refused the kernel for its per-thread scratch space."""
        found = PTSS_ERROR.search(self.log)
        return (int(found.group(1)), int(found.group(2))) if found else None

    def diagnosis(self) -> str:
        """The lines of ocloc's log that say what happened, the one that names the cause last
        (IGC follows it with a generic "backend compiler failed build")."""
        lines = [line.strip() for line in self.log.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("error:")]
        errors.sort(key=lambda line: bool(PTSS_ERROR.search(line)))
        return "\n".join(errors or lines[-3:]) or f"ocloc exited {self.returncode} and printed nothing"


def identity(ocloc: str) -> tuple[str, str]:
    """Which ocloc this is, for the build cache (its path, its file and its version answer), and
    its version as results show it."""
    real = os.path.realpath(ocloc)
    stat = os.stat(real)
    done = subprocess.run([ocloc, "--version"], capture_output=True, text=True, check=False, timeout=60)
    answer = done.stdout.strip()
    shown = answer.splitlines()[-1] if done.returncode == 0 and answer else "unknown"
    return f"{real}:{stat.st_size}:{stat.st_mtime_ns}:{answer}", shown


def build_folder() -> Path:
    return cache_root() / "xpu-native" / "builds"


def build(ocloc: str, spirv: bytes, device: str, options: str, tool_identity: str) -> NativeBuild:
    """`ocloc compile` of a SPIR-V module for one device with the compiler's build flags, cached."""
    key = hashlib.sha256(
        json.dumps([tool_identity, device, options]).encode() + hashlib.sha256(spirv).digest()
    ).hexdigest()[:32]
    folder = build_folder()
    folder.mkdir(parents=True, exist_ok=True)
    # xdist workers judging expectations of the same kernel build it once: the others wait here.
    with FileLock(str(folder / f"{key}.lock")):
        return cached(folder, key) or build_now(ocloc, spirv, device, options, folder, key)


def cached(folder: Path, key: str) -> NativeBuild | None:
    record, binary_file = folder / f"{key}.json", folder / f"{key}.bin"
    if not record.exists():
        return None
    saved = json.loads(record.read_text())
    binary = binary_file.read_bytes() if binary_file.exists() else None
    return NativeBuild(saved["returncode"], saved["log"], binary, saved["command"], cached=True)


def build_now(ocloc: str, spirv: bytes, device: str, options: str, folder: Path, key: str) -> NativeBuild:
    record, binary_file = folder / f"{key}.json", folder / f"{key}.bin"
    with tempfile.TemporaryDirectory(prefix="kregress-ocloc-") as tmp:
        (Path(tmp) / "kernel.spv").write_bytes(spirv)
        command = [ocloc, "compile", "-file", "kernel.spv", "-o", "kernel.bin", "-spirv_input",
                   "-device", device, *(["-options", options] if options else [])]  # fmt: skip
        done = subprocess.run(command, cwd=tmp, capture_output=True, text=True, check=False)
        out = Path(tmp) / "kernel.bin"
        binary = out.read_bytes() if out.exists() else None
    result = NativeBuild(done.returncode, done.stdout + done.stderr, binary, command)
    if binary is not None:
        write_atomically(binary_file, binary)
    write_atomically(
        record, json.dumps({"returncode": result.returncode, "log": result.log, "command": command})
    )
    return result


def ze_info(zebin: bytes, kernel: str) -> dict[str, Any]:
    """The kernel's entry of the zebin's `.ze_info` section (YAML written by IGC)."""
    import yaml

    sections = elf_sections(zebin)
    if ".ze_info" not in sections:
        raise ValueError(
            f"the native binary has no .ze_info section (sections: {', '.join(sorted(sections))})"
        )
    offset, size, _ = sections[".ze_info"]
    info = yaml.safe_load(zebin[offset : offset + size].decode())
    kernels = {entry["name"]: entry for entry in info.get("kernels", [])}
    if kernel not in kernels:
        raise ValueError(f".ze_info describes {', '.join(kernels) or 'no kernel'}, not {kernel!r}")
    return kernels[kernel]


def product_family(zebin: bytes) -> str | None:
    """The device a zebin was built for, from its `.note.intelgt.compat` section."""
    sections = elf_sections(zebin)
    if ".note.intelgt.compat" not in sections:
        return None
    offset, size, _ = sections[".note.intelgt.compat"]
    position = offset
    while position + 12 <= offset + size:
        name_size, desc_size, note_type = (int.from_bytes(zebin[position + i : position + i + 4], "little")
                                           for i in (0, 4, 8))  # fmt: skip
        name_end = position + 12 + ((name_size + 3) & ~3)
        if (
            note_type == NOTE_PRODUCT_FAMILY
            and desc_size == 4
            and c_string(zebin, position + 12) == "IntelGT"
        ):
            family = int.from_bytes(zebin[name_end : name_end + 4], "little")
            return PRODUCT_FAMILIES.get(family, f"product-family-{family}")
        position = name_end + ((desc_size + 3) & ~3)
    return None


def figures(zebin: bytes, kernel: str) -> dict[str, int]:
    """Registers (GRF count), SIMD width, spill and scratch bytes per hardware thread, as IGC set them."""
    entry = ze_info(zebin, kernel)
    env = entry.get("execution_env", {})
    if "grf_count" not in env or "simd_size" not in env:
        raise ValueError(
            f".ze_info of {kernel!r} gives no grf_count/simd_size (execution_env: {sorted(env)})"
        )
    scratch = sum(int(b.get("size", 0)) for b in entry.get("per_thread_memory_buffers", [])
                  if b.get("type") == "scratch")  # fmt: skip
    return {
        "registers": int(env["grf_count"]),
        "simd_size": int(env["simd_size"]),
        "spill_bytes": int(env.get("spill_size", 0)),
        "scratch_bytes": scratch,
    }


@dataclass
class Chosen:
    """The ocloc a child uses for native code, or why none here can build it."""

    path: str | None
    identity: str = ""
    version: str = ""
    why_not: str | None = None
    rejected: list[str] = field(default_factory=list)


def candidates() -> list[str]:
    """An ocloc on PATH first (a real XPU runner's), then the one kregress provisioned."""
    found = [shutil.which("ocloc") or ""]
    found += os.environ.get(CANDIDATES_VARIABLE, "").split(os.pathsep)
    return list(dict.fromkeys(c for c in found if c))


def choose(device: str, probe_spirv: bytes) -> Chosen:
    """The first candidate that turns the probe kernel's SPIR-V into a native binary for `device`."""
    rejected = []
    for candidate in candidates():
        try:
            tool, shown = identity(candidate)
            probe = build(candidate, probe_spirv, device, "", tool)
        except (OSError, subprocess.SubprocessError) as exc:
            rejected.append(f"{candidate}: {type(exc).__name__}: {exc}")
            continue
        if probe.ok:
            return Chosen(candidate, tool, shown, rejected=rejected)
        last = probe.diagnosis().splitlines()[-1][:200]
        rejected.append(
            f"{candidate} cannot build native code for {device} (exit {probe.returncode}: {last})"
        )
    provisioned = os.environ.get(PROVISIONED_VARIABLE, "")
    hint = json.loads(provisioned).get("why_not", "") if provisioned.startswith("{") else ""
    why = "; ".join(rejected) if rejected else "there is no ocloc on this machine"
    if hint:
        why += f"; {hint}"
    return Chosen(None, why_not=why, rejected=rejected)
