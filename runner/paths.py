"""Where kregress keeps what it builds and remembers: one cache folder, chosen in one place."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
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


def file_identity(path: str) -> list[str | int]:
    """A program as part of a cache key: where it really is, its size and when it last changed."""
    real = os.path.realpath(path)
    stat = os.stat(real)
    return [real, stat.st_size, stat.st_mtime_ns]


def kept_text(
    kind: str, decided_by: list[object], content: str, make: Callable[[], str], suffix: str = ".txt"
) -> str:
    """What `make` returns for `content`, kept under `kind` in the cache by the content and by what
    else decides the answer (tools, versions, targets): made once, read back after."""
    key = hashlib.sha256(json.dumps(decided_by).encode() + hashlib.sha256(content.encode()).digest())
    record = cache_root() / kind / f"{key.hexdigest()[:32]}{suffix}"
    if record.exists():
        return record.read_text()
    text = make()
    record.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(record, text)
    return text
