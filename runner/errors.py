"""What kregress says when it stops: one root for its exceptions.

Stdlib only: the child process imports kregress's exceptions (kregress.case, kregress.adapters)
inside toolchain environments that hold a compiler, not kregress's dependencies.
"""

from __future__ import annotations


class KregressError(Exception):
    """Every exception kregress defines derives from this, so a caller can tell kregress's own
    refusals (a bad manifest, a toolchain that cannot be installed) from a bug in kregress."""
