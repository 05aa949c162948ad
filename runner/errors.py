"""What kregress says when it stops: one root for its exceptions, one enum for its exit codes.

Stdlib only: the child process imports kregress's exceptions (kregress.case, kregress.adapters)
inside toolchain environments that hold a compiler, not kregress's dependencies.
"""

from __future__ import annotations

from enum import IntEnum


class KregressError(Exception):
    """Every exception kregress defines derives from this, so a caller can tell kregress's own
    refusals (a bad manifest, a toolchain that cannot be installed) from a bug in kregress."""


class ExitCode(IntEnum):
    """How `kregress` and each of its commands exit; README lists them per command.

    A value may mean different things in different commands; each meaning has its own name, so a
    `return` says which one it is (1 is what a command exists to find, not found).
    """

    OK = 0  # done: found, proven, reduced, posted, accepted, nothing newly failing
    NOT_FOUND = 1  # bisect: no single culprit; history fetch: no earlier run has the artifact
    REGRESSED = 1  # compare: something newly FAILs or lost its coverage
    NOT_PROVEN = 1  # verify: some case is not shown to catch its bug
    NOT_FAILING = 1  # reduce: the item does not fail that way as it is, nothing to keep
    REFUSED = 1  # bot accept: the comment holds no command kregress will run
    INVALID_FILE = 2  # a manifest, matrix, results file or history that cannot be used
    INFRASTRUCTURE = 3  # a toolchain, the runner or the package index failed: nothing was judged
    GITHUB = 3  # comment, bot, history fetch: GitHub refused or kept failing
    USAGE = 64  # the command line (or what it names) is wrong; sysexits.h's EX_USAGE
    NO_REPRO = 65  # import: the issue holds no code that shows its error here; sysexits.h's EX_DATAERR
