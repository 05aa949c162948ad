"""Markdown shared by every report kregress writes (bisect reports, GitHub comments, summaries):
compiler output fenced so that its own backticks cannot end the fence or open a new one."""

from __future__ import annotations

import re

FENCE = re.compile(r"^(`{3,})(.*)$")


def fenced(text: str) -> str:
    """Compiler output in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def open_fence(text: str) -> str | None:
    """The backtick fence left open at the end of `text` (CommonMark: a fence closes on a line of
    at least as many backticks and nothing else), or None."""
    opened: str | None = None
    for line in text.splitlines():
        found = FENCE.match(line.strip())
        if not found:
            continue
        if opened is None:
            opened = found.group(1)
        elif len(found.group(1)) >= len(opened) and not found.group(2).strip():
            opened = None
    return opened
