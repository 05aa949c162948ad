"""What a device check would run, known without the device: the check is run on the CPU with every
Triton launch compiled for the device's architecture instead of launched, and the code of each
launch is hashed (kregress.code_identity). Two compilers whose checks launch the same code give
the same verdict on the same device, so a bisect need not run the second one there.

The identity is only claimed when it is complete: the check must run to its end (its outputs are
not computed, so a check that reads them to decide what to launch next cannot be known this way),
and nothing may generate device code another way (torch.compile's kernels are built at run time on
the device). Otherwise `CodeUnknown` says why, and the point is judged on the device.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from kregress.errors import KregressError


class CodeUnknown(KregressError):
    """The launches' code cannot be known without the device; the reason is the message."""


@contextlib.contextmanager
def compiled_instead_of_launched(target: Any, launches: list[tuple[str, dict[str, str]]]) -> Iterator[None]:
    """Every JITFunction launch is compiled for `target` (the JIT's own warmup, under a driver that
    stands in for the device) and its code appended to `launches`; nothing runs."""
    import torch
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    from kregress.adapters.triton_aot import compiling_for, forget_compiled
    from kregress.code_identity import stage_digests

    original_run, original_autotune, original_compile = JITFunction.run, Autotuner.run, torch.compile

    def compile_only(self: Any, *args: Any, **kwargs: Any) -> None:
        # the JIT keeps kernels per device, not per target: one compiled for another target before
        # would be handed back (the on-disk cache is keyed by target, so this costs little)
        forget_compiled(self)
        kwargs["warmup"] = True
        compiled = original_run(self, *args, **kwargs)
        launches.append((getattr(self, "__name__", None) or self.fn.__name__, stage_digests(compiled.asm)))

    def refuse_autotune(self: Any, *args: Any, **kwargs: Any) -> None:
        raise CodeUnknown("an autotuned kernel picks its config by timing it on the device")

    def refuse_compile(*args: Any, **kwargs: Any) -> None:
        raise CodeUnknown("torch.compile builds its kernels on the device when they first run")

    JITFunction.run = compile_only  # type: ignore[method-assign]
    Autotuner.run = refuse_autotune  # type: ignore[method-assign]
    torch.compile = refuse_compile  # type: ignore[assignment]
    try:
        with compiling_for(target):
            yield
    finally:
        JITFunction.run = original_run  # type: ignore[method-assign]
        Autotuner.run = original_autotune  # type: ignore[method-assign]
        torch.compile = original_compile


def launch_code(check: Callable[[str], Any], target: Any) -> dict[str, dict[str, str]]:
    """The code of every launch the check makes, in order: `name#n` -> stage -> digest."""
    launches: list[tuple[str, dict[str, str]]] = []
    try:
        with compiled_instead_of_launched(target, launches):
            check("cpu")
    except CodeUnknown:
        raise
    except Exception as exc:
        raise CodeUnknown(
            f"the check stopped before its end without its outputs ({type(exc).__name__}: {exc}), after "
            f"{len(launches)} launches"
        ) from None
    if not launches:
        raise CodeUnknown("the check launched no Triton kernel")
    return {f"{name}#{n}": code for n, (name, code) in enumerate(launches)}
