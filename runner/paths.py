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
