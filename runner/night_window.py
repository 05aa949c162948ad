"""A perf item judged against its earlier nights on the same GPU model, not only against its floor.

One night's interval describes that night's noise, not the spread between nights (perf-triton-8k
measured 0.623, 0.592 and 0.622 on one H200, each night's interval about 0.001 wide): a floor
between those values FAILs one night in three "with confidence". So, as Intel's benchmark monitor
does, tonight's ratio is also compared with a window of earlier nights: a robust score (the
modified Z-score of Iglewicz and Hoaglin, from the median and the median absolute deviation) and a
minimum relative change, at least the window's own spread. A floor inside that spread cannot tell
nights apart, and the verdict says so instead of trusting it.
"""

from __future__ import annotations

import sqlite3
import statistics
from dataclasses import dataclass, replace
from pathlib import Path

from kregress.judge import Outcome, Verdict

NIGHTS_NEEDED = 3  # fewer earlier nights than this cannot give a spread worth judging against
WINDOW = 10  # the newest nights kept in the window
Z_LIMIT = 3.5  # a modified Z-score beyond this is an outlier (Iglewicz and Hoaglin)
MIN_CHANGE = 0.05  # a slowdown smaller than this is never a regression, however quiet the nights


@dataclass(frozen=True)
class NightWindow:
    """The ratios of earlier nights (oldest first) of one perf item on one GPU model."""

    ratios: tuple[float, ...]
    model: str

    @property
    def enough(self) -> bool:
        return len(self.ratios) >= NIGHTS_NEEDED

    @property
    def median(self) -> float:
        return statistics.median(self.ratios)

    @property
    def spread(self) -> float:
        """The nights' relative spread: (highest - lowest) / median."""
        return (max(self.ratios) - min(self.ratios)) / self.median

    def score(self, ratio: float) -> float:
        """The modified Z-score of `ratio` against the window (infinite where every night agreed)."""
        deviation = statistics.median(abs(r - self.median) for r in self.ratios)
        if deviation == 0:
            return 0.0 if ratio == self.median else float("inf") if ratio > self.median else float("-inf")
        return 0.6745 * (ratio - self.median) / deviation

    def change(self, ratio: float) -> float:
        return ratio / self.median - 1

    def departs(self, ratio: float, min_change: float = MIN_CHANGE) -> bool:
        """Slower than the nights beyond both their robust spread and a minimum change (the larger
        of `min_change` and the nights' own spread): a regression, not another night."""
        return self.score(ratio) < -Z_LIMIT and self.change(ratio) < -max(min_change, self.spread)

    def holds_floor(self, floor: float) -> bool:
        """The floor lies within the range the nights were measured in."""
        return min(self.ratios) <= floor <= max(self.ratios)

    def described(self) -> str:
        return (
            f"{len(self.ratios)} earlier nights on {self.model}: median {self.median:.3f}, "
            f"range [{min(self.ratios):.3f}, {max(self.ratios):.3f}] ({self.spread:.1%})"
        )


def judged_against(verdict: Verdict, window: NightWindow, floor: float) -> Verdict:
    """The floor's verdict (PASS, FAIL TOO_SLOW) seen beside the earlier nights: a departure from
    them FAILs even above the floor; a FAIL by a floor that sits inside their spread, where tonight
    does not depart from them, PASSes saying why, and so does an interval that straddles such a
    floor. Other outcomes (a night too noisy to judge, SKIP, known bad) stand.
    """
    if (
        not (verdict.outcome in (Outcome.PASS, Outcome.FAIL) or straddles(verdict))
        or "ratio" not in verdict.measured
    ):
        return verdict
    if not window.enough:
        return replace(
            verdict,
            message=f"{verdict.message}; no history to judge against on {window.model}: "
            f"{len(window.ratios)} earlier nights, {NIGHTS_NEEDED} needed",
        )
    ratio = verdict.measured["ratio"]
    measured = {
        **verdict.measured,
        "window_nights": len(window.ratios),
        "window_median": window.median,
        "window_spread": window.spread,
        "window_score": window.score(ratio),
        "floor_in_window": window.holds_floor(floor),
    }
    change, score = window.change(ratio), window.score(ratio)
    said = f"{window.described()}; tonight {ratio:.3f} ({change:+.1%}, robust z {score:.1f})"
    if window.departs(ratio):
        return replace(
            verdict, outcome=Outcome.FAIL, failure_kind="SLOWER_THAN_NIGHTS", measured=measured,
            message=f"SLOWER_THAN_NIGHTS: {said}, beyond the nights' spread — {verdict.message}",
        )  # fmt: skip
    if window.holds_floor(floor):
        note = (
            f"the floor {floor} sits inside the night-to-night spread, so it cannot tell nights apart "
            "(kregress check --history lists such floors)"
        )
        if verdict.outcome is not Outcome.PASS:
            return replace(
                verdict, outcome=Outcome.PASS, failure_kind=None, measured=measured,
                message=f"{said}, within them: PASS against the nights; {note} — {verdict.message}",
            )  # fmt: skip
        return replace(verdict, measured=measured, message=f"{verdict.message}; {said}; {note}")
    return replace(verdict, measured=measured, message=f"{verdict.message}; {said}")


def straddles(verdict: Verdict) -> bool:
    """UNSTABLE only because the interval straddles the floor, not because tonight was too noisy."""
    limit = verdict.limit if isinstance(verdict.limit, dict) else {}
    spread = verdict.measured.get("spread")
    return (
        verdict.outcome is Outcome.UNSTABLE
        and spread is not None
        and spread <= limit.get("max_spread", float("inf"))
    )


def earlier_nights(
    history: Path, case: str, expectation: str, target: str, model: str, size: int = WINDOW
) -> NightWindow:
    """The newest `size` ratios this history holds for the item on a GPU of `model`, measured by a
    PASS or FAIL (an UNSTABLE night measured noise, not the kernel)."""
    if not history.exists():
        return NightWindow((), model)
    with sqlite3.connect(history) as connection:
        rows = connection.execute(
            "SELECT json_extract(items.measured, '$.ratio') FROM items JOIN runs ON runs.id = items.run_id"
            " WHERE case_id = ? AND expectation = ? AND target = ? AND outcome IN ('PASS', 'FAIL')"
            " AND json_extract(items.device, '$.name') = ? AND json_extract(items.measured, '$.ratio')"
            " IS NOT NULL ORDER BY runs.started DESC, runs.id DESC LIMIT ?",
            (case, expectation, target, model, size),
        ).fetchall()
    return NightWindow(tuple(float(r[0]) for r in reversed(rows)), model)


def windows_of(history: Path, case: str, expectation: str) -> dict[tuple[str, str], NightWindow]:
    """The window of every (target, GPU model) this history measured the item on."""
    if not history.exists():
        return {}
    with sqlite3.connect(history) as connection:
        pairs = connection.execute(
            "SELECT DISTINCT target, json_extract(device, '$.name') FROM items WHERE case_id = ?"
            " AND expectation = ? AND json_extract(device, '$.name') IS NOT NULL ORDER BY 1, 2",
            (case, expectation),
        ).fetchall()
    return {(t, m): earlier_nights(history, case, expectation, t, m) for t, m in pairs}
