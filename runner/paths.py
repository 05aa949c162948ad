"""Where kregress keeps what it builds and remembers: one cache folder, chosen in one place."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """`$KREGRESS_CACHE_DIR`, else `$XDG_CACHE_HOME/kregress`, else `~/.cache/kregress`."""
    base = os.environ.get("KREGRESS_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kregress"
    )
    return Path(base)


def write_atomically(path: Path, data: bytes | str) -> None:
    """Written beside, then renamed into place: a concurrent reader never sees half a file."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if isinstance(data, bytes):
        temporary.write_bytes(data)
    else:
        temporary.write_text(data)
    os.replace(temporary, path)


def write_output(path: Path, text: str) -> None:
    """A file a command was asked to write, its folder made first: a workflow names its artifact
    folder before anything is in it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
