"""Gluon kernels compile through Triton itself: a `@gluon.jit` function is a JITFunction whose
source enters the pipeline at TTGIR, with the layouts the kernel states. So the adapter is Triton's
(compile session, stand-in driver, figures, native XPU step); only the version is reported under
Gluon's name too, since a Gluon case's ranges are over the triton release that ships it."""

from __future__ import annotations

from kregress.adapters.triton_aot import compile_kernel, compile_session
from kregress.adapters.triton_aot import toolchain_versions as triton_versions


def toolchain_versions() -> dict[str, str]:
    versions = triton_versions()
    return {**versions, "gluon": versions["triton"]}


__all__ = ["compile_kernel", "compile_session", "toolchain_versions"]
