"""`kregress report`: the matrix page from a history, read as HTML and markdown, then loaded in a
real headless Chromium (no console messages, the expected cells, the filter) and screenshotted."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from kregress.cli import main
from kregress.history import store
from kregress.record import ItemRecord, RunResults

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium here (Debian: apt-get install chromium)"
)
FAIL_BACKGROUND, PASS_BACKGROUND = (0xFF, 0xD8, 0xD3), (0xDA, 0xFB, 0xE1)


def item(case: str, target: str, outcome: str, shared: int, triton: str = "3.6.0") -> dict:
    return {"case": case, "expectation": "shared", "kind": "resource", "target": target,
            "framework": "triton", "outcome": outcome, "message": f"shared_bytes {shared}",
            "measured": {"shared_bytes": {"cfg": shared}}, "limit": 232448, "toolchain": {"triton": triton},
            "upstream": f"https://github.com/example/compiler/issues/{len(case)}"}  # fmt: skip


@pytest.fixture
def page(tmp_path: Path) -> tuple[Path, Path]:
    """Five nights: `spills` creeps up to its limit and breaks on the fifth; `steady` holds."""
    history = tmp_path / "history.sqlite"
    for night in range(5):
        shared = 150000 + night * 25000
        outcome = "FAIL" if shared > 232448 else "PASS"
        spills = item("spills", "cuda:sm_90", outcome, shared)
        if outcome == "FAIL":  # as a FAIL from configs the compiler refused records it: a list first
            spills["measured"] = {"failed_configs": ["cfg"], **spills["measured"]}
        items = [spills, item("steady", "cuda:sm_90", "PASS", 4096),
                 item("steady", "hip:gfx942", "PASS", 16),
                 item("old_only", "cuda:sm_90", "PASS", 8, "3.5.0"),
                 # skipped before any job ran, so without versions: it must join triton 3.6.0's column
                 {**item("steady", "hip:gfx942", "SKIP", 0), "expectation": "perf", "kind": "perf",
                  "toolchain": None, "measured": None, "limit": None}]  # fmt: skip
        run = {"kregress": 1, "started": 1.8e9 + night * 86400, "runner": "cpu", "items": items}
        store(history, RunResults.model_validate(run))
    out, markdown = tmp_path / "site", tmp_path / "m.md"
    assert main(["report", "--history", str(history), "--html", f"{out}/", "--markdown", str(markdown)]) == 0
    return out / "index.html", markdown


class Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[tuple[str, str, str], str] = {}
        self.hidden: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        found = dict(attrs)
        if tag == "td" and "data-case" in found:
            self.cells[(found["data-case"], found["data-target"], found["data-toolchain"])] = found[
                "data-outcome"
            ]
        if tag == "tr" and "hidden" in (found.get("class") or "").split():
            self.hidden.add(found["data-case"])


def parse(text: str) -> Cells:
    parser = Cells()
    parser.feed(text)
    return parser


EXPECTED = {
    ("spills", "cuda:sm_90", "triton 3.6.0"): "FAIL",
    ("steady", "cuda:sm_90", "triton 3.6.0"): "PASS",
    ("steady", "hip:gfx942", "triton 3.6.0"): "PASS",
    ("old_only", "cuda:sm_90", "triton 3.5.0"): "PASS",
}


def test_the_page_has_the_matrix_the_changes_and_the_trend(page) -> None:
    html_file, markdown = page
    text = html_file.read_text()
    assert parse(text).cells == EXPECTED
    assert "<h3>New FAIL: 1</h3>" in text and "<b>spills</b> / shared on cuda:sm_90 (was PASS)" in text
    assert "shared_bytes 250000 &gt; 232448" in text  # the measured value next to its limit
    assert '<a href="https://github.com/example/compiler/issues/6" rel="noopener">issue</a>' in text
    trend = re.search(r'<tr data-case="spills">.*?<svg class="trend".*?</svg>', text, re.S)
    assert trend and "108% of the limit in the newest run" in trend.group(0)
    assert trend.group(0).count(
        'class="run outcome-PASS"'
    ) == 4 and 'class="run outcome-FAIL"' in trend.group(0)
    assert "http" not in re.sub(r'href="https://github.com/[^"]*"', "", text)  # nothing loaded from outside
    md = markdown.read_text()
    # columns: cuda:sm_90 with triton 3.5.0, with 3.6.0, then hip:gfx942
    assert "| [`spills`](https://github.com/example/compiler/issues/6) (not shown) |  | ❌ 1 FAIL |  |" in md
    assert "#### ❌ New FAIL: 1" in md


def load(url: str, *extra: str) -> subprocess.CompletedProcess:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
               "--virtual-time-budget=2000", *extra, url]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def console_messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@needs_chromium
def test_the_page_loads_in_chromium_without_console_messages(page) -> None:
    html_file, _ = page
    done = load(html_file.as_uri(), "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert console_messages(done.stderr) == []
    loaded = parse(done.stdout)
    assert loaded.cells == EXPECTED and loaded.hidden == set()
    filtered = load(html_file.as_uri() + "#only=FAIL", "--dump-dom")
    assert console_messages(filtered.stderr) == []
    assert parse(filtered.stdout).hidden == {"steady", "old_only"}  # the script ran: only spills is shown


@needs_chromium
def test_the_console_check_catches_a_broken_script(tmp_path: Path) -> None:
    broken = tmp_path / "broken.html"
    broken.write_text("<!doctype html><html><body><script>notAFunction();</script></body></html>")
    messages = console_messages(load(broken.as_uri(), "--dump-dom").stderr)
    assert len(messages) == 1 and "notAFunction is not defined" in messages[0]


@needs_chromium
def test_screenshot_shows_red_and_green_cells(page, tmp_path: Path) -> None:
    from PIL import Image

    html_file, _ = page
    shot = tmp_path / "matrix.png"
    done = load(html_file.as_uri(), f"--screenshot={shot}", "--window-size=1280,900", "--hide-scrollbars")
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    with Image.open(shot) as image:
        assert image.size == (1280, 900)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    counted = {rgb: n for n, rgb in colours}
    assert counted.get(FAIL_BACKGROUND, 0) > 2000  # the FAIL cell and the new-FAIL line
    assert counted.get(PASS_BACKGROUND, 0) > 4000  # three PASS cells
    assert len(counted) > 50  # text and lines drawn, not a blank page


def test_a_perf_figure_shows_the_interval_and_reads_older_records_too() -> None:
    from kregress.kinds import figure as figure_of

    def figure(fields: dict) -> str:
        return figure_of(ItemRecord(case="c", expectation="perf", target="cuda:device", **fields))

    now = {"kind": "perf", "outcome": "UNSTABLE", "limit": {"min_ratio": 0.8, "max_spread": 0.25},
           "measured": {"ratio": 0.81, "ratio_low": 0.76, "ratio_high": 0.86}}  # fmt: skip
    assert figure(now) == "ratio 0.81 [0.76, 0.86] (≥ 0.8)"
    before_rounds = {"kind": "perf", "outcome": "PASS", "limit": 0.5, "measured": {"ratio": 0.93}}
    assert figure(before_rounds) == "ratio 0.93 (≥ 0.5)"
    nights = {"kind": "perf", "outcome": "PASS", "limit": {"min_ratio": 0.61, "max_spread": 0.25},
              "measured": {"ratio": 0.60, "ratio_low": 0.598, "ratio_high": 0.603, "window_nights": 3,
                           "window_median": 0.622, "floor_in_window": True}}  # fmt: skip
    shown = "ratio 0.60 [0.60, 0.60] (≥ 0.61); 3 nights, median 0.62: floor inside their spread"
    assert figure(nights) == shown
