"""The subcommands kregress.bisect adds to `kregress`, in the order `kregress --help` shows them.

Found through the `kregress.commands` entry point (pyproject.toml), after the runner's own: the
runner names no module of kregress.bisect. history_fetch adds `fetch` to the runner's `history`.
"""

MODULES = (
    "kregress.bisect.command",
    "kregress.bisect.github.comment",
    "kregress.bisect.github.bot",
    "kregress.bisect.triage.verify",
    "kregress.bisect.triage.reduce",
    "kregress.bisect.triage.importer",
    "kregress.bisect.github.history_fetch",
)
