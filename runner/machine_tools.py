"""The tools a backend's compiles take from the machine rather than from a Python package, which
kregress provisions where the machine lacks them: Intel's ocloc and IGC for XPU native code, an
ld.lld for AMD code objects of older Triton releases. One place says what each child is handed and
what a remembered judgement keys on, so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from kregress import amd_linker, xpu_native

# By backend, the module that provisions its tools: `child_variables(log)` and `identity()`.
# Imported by name, not looked up: the judging code's digest (kregress.judging_code) follows
# static imports, so a change to a provisioner re-judges what it provisions.
PROVISIONERS: dict[str, ModuleType] = {"xpu": xpu_native, "hip": amd_linker}


def provisioner(backend: str) -> ModuleType | None:
    return PROVISIONERS.get(backend)


def child_variables(backend: str, log: Callable[[str], None] = lambda message: None) -> dict[str, str]:
    """The environment variables a child compiling for `backend` needs for the machine's tools."""
    module = provisioner(backend)
    return module.child_variables(log=log) if module else {}


def identity(backend: str) -> str | None:
    """The tools a judgement on `backend` used, by their versions (None: the backend uses none)."""
    module = provisioner(backend)
    return module.identity() if module else None
