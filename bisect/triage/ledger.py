"""The verify ledger: the judgements `kregress verify` rests on, committed with the corpus.

Each entry is one case judged under one toolchain on one target, stored under the digest of its
judgement key (kregress.judging_service.judgement_key: the case's files, the target's matrix entry,
what the environment holds, the kregress code that judges the case). A machine that has never
judged anything reads the proof of every unchanged case from here instead of building every
release's environment again; CI judges afresh whatever the ledger lacks (a missing entry fails it)
and a few unchanged cases picked at random (an entry a fresh judgement contradicts fails it), so the
ledger is checked, not trusted. Outcomes decide a proof, and a case's `fails_with` the failure's
message: the first lines of each message are kept (a compile failure names each config's error on
the lines after its first), so that a proof read from here is the proof judged fresh, and a NOT
PROVEN still says why.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kregress.errors import KregressError
from kregress.judge import Outcome
from kregress.paths import write_atomically

if TYPE_CHECKING:
    from kregress.judging_service import CaseRun, Observation

LEDGER_FORMAT = 1
LEDGER_NAME = "verify-ledger.json"  # beside the cases, in the corpus folder
MESSAGE_CHARS = 300  # of each line kept
MESSAGE_LINES = 6


def is_draft(name: str) -> bool:
    """A folder `kregress import` writes (NAME_draft, its reduction NAME_draft_reduced): git ignores
    it, so a fresh clone has none, and the ledger committed with the corpus never holds one."""
    return name.endswith(("_draft", "_draft_reduced"))


class LedgerError(KregressError):
    """The ledger file cannot be read: a usage problem naming the file."""


@dataclass
class LedgerEntry:
    case: str
    toolchain: str  # a spec, or "matrix" for the toolchains the matrix names
    target: str | None
    outcomes: dict[str, str]
    failure_kinds: dict[str, str | None] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)  # first lines, items that did not PASS
    diagnostics: dict[str, str] = field(default_factory=dict)  # a failure's (ItemRecord.diagnostics)
    versions: dict[str, str] = field(default_factory=dict)
    installed: dict[str, str] | None = None  # what the environment held (Observation.installed)

    @classmethod
    def of(cls, run: CaseRun, toolchain: str | None, observation: Observation) -> LedgerEntry:
        records = observation.records
        messages = {
            item: "\n".join(line[:MESSAGE_CHARS] for line in record.message.splitlines()[:MESSAGE_LINES])
            for item, record in records.items()
            if record.outcome != Outcome.PASS and record.message
        }
        diagnostics = {item: record.diagnostics for item, record in records.items() if record.diagnostics}
        return cls(run.case, toolchain or "matrix", run.target,
                   {item: record.outcome.value for item, record in records.items()},
                   {item: record.failure_kind for item, record in records.items()},
                   messages, diagnostics, observation.versions, observation.installed)  # fmt: skip

    def observation(self) -> Observation:
        from kregress.judging_service import Observation

        return Observation.from_parts(
            self.outcomes,
            self.failure_kinds,
            self.messages,
            diagnostics=self.diagnostics,
            versions=self.versions,
            case=self.case,
            installed=self.installed,
        )

    def shown(self) -> str:
        return ", ".join(f"{item} {outcome}" for item, outcome in sorted(self.outcomes.items())) or "no items"


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:24]


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, LedgerEntry] = {}
        if not path.exists():
            return
        try:
            document = json.loads(path.read_text())
            if document.get("format") != LEDGER_FORMAT:
                raise LedgerError(
                    f"{path}: format {document.get('format')!r}, this kregress reads {LEDGER_FORMAT}"
                )
            self.entries = {digest: LedgerEntry(**entry) for digest, entry in document["entries"].items()}
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise LedgerError(f"{path}: not a verify ledger ({type(exc).__name__}: {exc})") from None

    def get(self, key: str) -> LedgerEntry | None:
        return self.entries.get(key_digest(key))

    def cases(self) -> set[str]:
        return {entry.case for entry in self.entries.values()}

    def write(self, seen: dict[str, LedgerEntry], judged_cases: set[str]) -> tuple[int, int]:
        """The entries of `judged_cases` replaced by what this run saw (`seen`, by judgement key);
        other cases' entries kept. Returns (entries written, stale entries dropped)."""
        kept = {d: e for d, e in self.entries.items() if e.case not in judged_cases}
        new = {key_digest(key): entry for key, entry in seen.items()}
        dropped = sum(1 for d, e in self.entries.items() if e.case in judged_cases and d not in new)
        order = lambda item: (item[1].case, item[1].toolchain, item[1].target or "", item[0])  # noqa: E731
        self.entries = dict(sorted({**kept, **new}.items(), key=order))
        document = {"format": LEDGER_FORMAT, "entries": {d: asdict(e) for d, e in self.entries.items()}}
        write_atomically(self.path, json.dumps(document, indent=1, sort_keys=False) + "\n")
        return len(self.entries), dropped
