"""One adapter per framework: compile a repro kernel for a target and report what was measured.

Adapters run inside the child process, in whatever environment holds the compiler under test.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import tempfile
import traceback
from pathlib import Path
from typing import Any

from kregress.case import Unsupported as Unsupported  # raised by adapters and by repro checks
from kregress.child_results import ConfigResult as ConfigResult
from kregress.child_results import ConfigStatus as ConfigStatus
from kregress.errors import KregressError
from kregress.paths import file_identity, kept_text

# Why the Level Zero headers are missing, as the parent process found out when it tried to provision
# them (kregress.level_zero); the XPU compile's SKIP says it.
LEVEL_ZERO_WHY_NOT = "KREGRESS_LEVEL_ZERO_WHY_NOT"


def level_zero_headers() -> bool:
    """Whether the compiler that builds triton-xpu's helper module finds ze_api.h: system-wide, on
    CPATH (where kregress puts the ones it provisions), or under triton-xpu's own ZE_PATH."""
    places = [
        "/usr/include",
        "/usr/local/include",
        *os.environ.get("CPATH", "").split(os.pathsep),
        os.path.join(os.environ.get("ZE_PATH", "/usr/local"), "include"),
    ]
    return any(Path(place, "level_zero", "ze_api.h").exists() for place in places if place)


class HarnessError(KregressError):
    """kregress's own code failed, not the compiler under test: an ERROR naming kregress, never a
    FAIL blamed on the compiler nor a SKIP blamed on the machine."""


class MeasurementError(HarnessError):
    """The kernel compiled but kregress could not read its figures."""


class AdapterError(HarnessError):
    """An adapter spoke an API the release under test does not take (a target it cannot parse, an
    argument it lacks): the adapter must learn that release's API."""


def raised_within(exc: BaseException, roots: list[Path]) -> bool:
    """Whether the innermost frame of the exception's traceback that is a file lies under one of
    `roots` (a C++ error surfaces through frames that are not: `<unknown>`, Cython's `.pxi`)."""
    files = [Path(f.filename) for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).is_file()]
    return bool(files) and any(files[-1].resolve().is_relative_to(root) for root in roots)


def raised_in_kregress(exc: BaseException) -> bool:
    """Whether kregress's own code raised it (resolved: an editable install links each file)."""
    return raised_within(exc, [Path(__file__).resolve().parents[1]])


class CompilerBroken(KregressError):
    """The compiler under test is installed but does not work here (it fails to import): an ERROR,
    never a SKIP, or a nightly whose compiler broke would read as a quiet night."""


def config_label(config: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in config.items()) or "default"


def binary_kind(blob: bytes) -> str:
    """Name what a compiled binary is from its magic number, never from its file name."""
    if blob[:4] in (b"\x03\x02\x23\x07", b"\x07\x23\x02\x03"):
        return "spirv"
    if blob[:4] == b"\x7fELF":
        return "elf"
    return "unknown"


PTXAS_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
PTXAS_REGS = re.compile(r"Used (\d+) registers")


def ptxas_gpu_name(arch: str) -> str:
    """sm_90 and later compile as the arch-specific `a` variant, as Triton and nvcc do for sm_90a."""
    number = int(arch.removeprefix("sm_"))
    return f"sm_{number}a" if number >= 90 else f"sm_{number}"


def ptxas_figures(ptxas: str, ptx: str, arch: str, options: tuple[str, ...] = ()) -> dict[str, int]:
    """Registers, stack and spills per thread as `ptxas -v` reports them for this PTX, assembled with
    the `options` the compiler itself passes (else the figures come from another register
    allocation than the binary's), kept by content (the ptxas binary, its options, the GPU name, the
    PTX): Triton's cache keeps the cubin but not these, and a warm run would otherwise assemble every
    kernel again."""

    def make() -> str:
        return json.dumps(ptxas_figures_now(ptxas, ptx, arch, options))

    decided_by = [*file_identity(ptxas), *options, ptxas_gpu_name(arch)]
    return json.loads(kept_text("ptxas-figures", decided_by, ptx, make, suffix=".json"))


def ptxas_figures_now(ptxas: str, ptx: str, arch: str, options: tuple[str, ...] = ()) -> dict[str, int]:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "kernel.ptx"
        src.write_text(ptx)
        gpu = f"--gpu-name={ptxas_gpu_name(arch)}"
        done = subprocess.run(
            [ptxas, "-v", *options, gpu, str(src), "-o", str(Path(tmp) / "k.cubin")],
            capture_output=True,
            text=True,
            check=False,
        )
    report = done.stdout + done.stderr
    frame, regs = PTXAS_FRAME.search(report), PTXAS_REGS.search(report)
    if done.returncode != 0 or not frame or not regs:
        raise RuntimeError(f"{ptxas} -v failed (exit {done.returncode}): {report[-2000:]}")
    return {
        "registers": int(regs.group(1)),
        "stack_bytes": int(frame.group(1)),
        "spill_bytes": int(frame.group(2)),
        "scratch_bytes": int(frame.group(1)),
    }


EIATTR_REGCOUNT = 0x2F
EIFMT_SVAL = 0x04


def elf_sections(blob: bytes) -> dict[str, tuple[int, int, int]]:
    """Section name -> (offset, size, sh_info) of a little-endian ELF64 file."""
    (shoff,) = struct.unpack_from("<Q", blob, 0x28)
    entsize, count, names_index = struct.unpack_from("<HHH", blob, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", blob, shoff + i * entsize) for i in range(count)]
    names_at = headers[names_index][4]
    return {c_string(blob, names_at + h[0]): (h[4], h[5], h[7]) for h in headers}


def c_string(blob: bytes, start: int) -> str:
    return blob[start : blob.index(b"\0", start)].decode()


# Where a cubin's ELF header keeps its arch, by (OS/ABI, ABI version): the first ABI (ptxas up to
# CUDA 12.x) in the low byte of e_flags, the second (CUDA 13's ptxas, which Triton 3.9 ships for
# sm_90) in the byte above it.
CUBIN_ARCH_SHIFT = {(0x33, 7): 0, (0x41, 8): 8}


def cubin_arch(cubin: bytes) -> str:
    """`sm_NN` from the cubin's ELF header; a MeasurementError naming the ABI when it is one kregress
    does not know (a figure that cannot be read is never the compiler's FAIL)."""
    osabi, abi_version = cubin[7], cubin[8]
    shift = CUBIN_ARCH_SHIFT.get((osabi, abi_version))
    if shift is None:
        known = ", ".join(f"({a:#x}, {v})" for a, v in CUBIN_ARCH_SHIFT)
        raise MeasurementError(
            f"binary_arch: the cubin's ELF OS/ABI {osabi:#x}, ABI version {abi_version} is not one "
            f"kregress reads (known: {known})"
        )
    (flags,) = struct.unpack_from("<I", cubin, 0x30)
    return f"sm_{(flags >> shift) & 0xFF}"


def cubin_figures(cubin: bytes, kernel: str) -> dict[str, Any]:
    """The arch and the register count the CUDA driver will report for `kernel`, read from the cubin
    itself: EIATTR_REGCOUNT in `.nv.info` (sm_90 builds), else the top byte of the `.text.<kernel>`
    section's sh_info (older builds leave REGCOUNT out)."""
    arch = cubin_arch(cubin)
    sections = elf_sections(cubin)
    registers = None
    if ".nv.info" in sections and ".symtab" in sections and ".strtab" in sections:
        symbols = symbol_names(cubin, sections)
        offset, size, _ = sections[".nv.info"]
        position = offset
        while position + 4 <= offset + size:
            fmt, attribute, length = cubin[position], cubin[position + 1], 0
            if fmt == EIFMT_SVAL:
                (length,) = struct.unpack_from("<H", cubin, position + 2)
                if attribute == EIATTR_REGCOUNT:
                    symbol, count = struct.unpack_from("<II", cubin, position + 4)
                    if symbols.get(symbol) == kernel:
                        registers = count
            position += 4 + length
    if registers is None and f".text.{kernel}" in sections:
        registers = sections[f".text.{kernel}"][2] >> 24 or None
    return {"arch": arch, "registers": registers}


def symbol_names(blob: bytes, sections: dict[str, tuple[int, int, int]]) -> dict[int, str]:
    table, table_size, _ = sections[".symtab"]
    strings, _, _ = sections[".strtab"]
    names = {}
    for index in range(table_size // 24):
        (name_offset,) = struct.unpack_from("<I", blob, table + 24 * index)
        names[index] = c_string(blob, strings + name_offset)
    return names
