"""The tools a backend's compiles take from the machine rather than from a Python package, which
kregress provisions where the machine lacks them: Intel's ocloc and IGC for XPU native code, an
ld.lld for AMD code objects of older Triton releases. One place says what each child is handed and
what a remembered judgement keys on, so the two cannot drift apart.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

# By backend, the module that provisions its tools: `child_variables(log)` and `identity()`.
PROVISIONERS = {"xpu": "kregress.xpu_native", "hip": "kregress.amd_linker"}


def provisioner(backend: str) -> Any | None:
    name = PROVISIONERS.get(backend)
    return importlib.import_module(name) if name else None


def child_variables(backend: str, log: Callable[[str], None] = lambda message: None) -> dict[str, str]:
    """The environment variables a child compiling for `backend` needs for the machine's tools."""
    module = provisioner(backend)
    return module.child_variables(log=log) if module else {}


def identity(backend: str) -> str | None:
    """The tools a judgement on `backend` used, by their versions (None: the backend uses none)."""
    module = provisioner(backend)
    return module.identity() if module else None
