"""The frameworks kregress judges: one module each, found here by looking, never listed elsewhere.

A module of this package that binds `FRAMEWORK` to a `Framework` adds that framework: case.toml
accepts its name, the plugin plans its items from what it declares, the child finds its adapter and
tells a missing framework (SKIP) from a broken repro (ERROR), `kregress new` writes its starter,
toolchains add its companions, and reduce recognises its pasted repros and kernel wrappers.

Stdlib only: the child imports it inside toolchain environments that hold a compiler, not
kregress's own dependencies.
"""

from __future__ import annotations

import importlib
import pkgutil

from kregress.frameworks.base import PER_BLOCK, PTXAS_FIGURES, Companion, Framework, Starter

DEFAULT = "triton"  # what a pasted repro importing no known framework is taken for


def discover() -> dict[str, Framework]:
    found: dict[str, Framework] = {}
    # the default first: the order stages and names are listed in messages
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: (m.name != DEFAULT, m.name)):
        if module_info.name == "base":
            continue
        declared = getattr(importlib.import_module(f"{__name__}.{module_info.name}"), "FRAMEWORK", None)
        if isinstance(declared, Framework):
            found[declared.name] = declared
    return found


FRAMEWORKS = discover()


def framework_of_source(source: str) -> Framework:
    """The framework a pasted repro is written in, by what it imports."""
    written = [f for f in FRAMEWORKS.values() if f.name != DEFAULT and f.written_in(source)]
    return written[0] if written else FRAMEWORKS[DEFAULT]


def wrapper_named(name: str) -> type | None:
    """A kernel wrapper (TritonKernel, ...) by its class name, from whichever framework declares it."""
    return next((w for f in FRAMEWORKS.values() for w in f.wrappers if w.__name__ == name), None)


def all_companions() -> tuple[Companion, ...]:
    return tuple(c for f in FRAMEWORKS.values() for c in f.companions)


def all_ir_stages() -> tuple[str, ...]:
    return tuple(dict.fromkeys(s for f in FRAMEWORKS.values() for s in f.ir_stages))


__all__ = [
    "DEFAULT",
    "FRAMEWORKS",
    "PER_BLOCK",
    "PTXAS_FIGURES",
    "Companion",
    "Framework",
    "Starter",
    "all_companions",
    "all_ir_stages",
    "framework_of_source",
    "wrapper_named",
]
