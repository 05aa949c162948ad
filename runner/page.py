"""The corpus at a glance: cases down, targets and toolchain versions across, colour by outcome,
the trend over the last runs, and what is new since the last run. One self-contained HTML file
(inline CSS and SVG, a few lines of script to filter) that any browser opens without a server;
the same matrix in markdown for a PR comment or a step summary.
"""

from __future__ import annotations

import datetime as dt
import html
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from kregress.judge import Outcome
from kregress.kinds import figure
from kregress.kinds.resource import resource_figure
from kregress.record import ItemRecord, RunResults
from kregress.results import SYMBOL, Changes, compare, first_line, render_changes, version_key, worst_outcome

SERIES_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")


@dataclass(frozen=True)
class Column:
    target: str
    toolchain: str  # "triton 3.6.0", or "" when the item did not say


@dataclass
class RunMatrix:
    """What the page shows, computed once for both renderings."""

    runs: list[RunResults]
    columns: list[Column] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)
    cells: dict[tuple[str, Column], dict[str, ItemRecord]] = field(default_factory=dict)
    upstream: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    levels: dict[str, str] = field(default_factory=dict)  # how each case is shown to catch its bug
    devices: dict[str, set[str]] = field(default_factory=dict)  # device target -> the GPU models seen
    changes: Changes | None = None


def toolchain_of(item: ItemRecord) -> str:
    framework = item.framework or ""
    version = (item.toolchain or {}).get(framework)
    return f"{framework} {version}" if version else ""


def column_order(column: Column) -> tuple:
    name, _, version = column.toolchain.partition(" ")
    return column.target, name, version_key(version)


def build(runs: list[RunResults]) -> RunMatrix:
    """`runs` oldest first. A cell holds the newest record of each expectation of a case judged
    on that target with that toolchain; the newest run is compared with the earlier runs of the
    same runner for "new since the last run"."""
    matrix = RunMatrix(runs)
    cells: dict[tuple[str, Column], dict[str, ItemRecord]] = defaultdict(dict)
    for run in runs:
        # An item skipped before any job ran reports no versions: it joins the column of its
        # framework on that target, or the target's only column, rather than opening one.
        known = {(i.target, i.framework): toolchain_of(i) for i in run.items if toolchain_of(i)}
        only: dict[str, set[str]] = defaultdict(set)
        for (target, _), label in known.items():
            only[target].add(label)
        for item in run.items:
            target = item.target
            label = toolchain_of(item) or known.get((target, item.framework), "")
            if not label and len(only[target]) == 1:
                label = next(iter(only[target]))
            column = Column(target, label)
            cells[(item.case, column)][item.expectation] = item
            matrix.upstream[item.case] = (item.upstream, item.fix)
            if item.reproduce:
                matrix.levels[item.case] = item.reproduce
            if item.device and item.device.get("name"):
                matrix.devices.setdefault(target, set()).add(item.device["name"])
    matrix.cells = dict(cells)
    matrix.columns = sorted({column for _, column in cells}, key=column_order)
    matrix.cases = sorted({case for case, _ in cells})
    if runs:
        newest = runs[-1]
        earlier = [r for r in runs[:-1] if r.runner == newest.runner] or runs[:-1]
        matrix.changes = compare(newest, earlier)
    return matrix


def worst(items: list[ItemRecord]) -> str:
    return worst_outcome(i.outcome for i in items) or Outcome.SKIP.value


def trend_series(matrix: RunMatrix, case: str) -> dict[str, list[float | None]]:
    """Each resource figure of the case over the runs, as a fraction of its limit."""
    series: dict[str, list[float | None]] = {}
    for index, run in enumerate(matrix.runs):
        for item in run.items:
            if item.case != case or item.kind != "resource" or not item.limit:
                continue
            found = resource_figure(item.measured or {})
            if not found:
                continue
            values = found[1]
            name = f"{item.expectation} on {item.target}"
            series.setdefault(name, [None] * len(matrix.runs))[index] = max(values.values()) / item.limit
    return series


def trend_svg(matrix: RunMatrix, case: str) -> str:
    width, height, pad = 180, 44, 3
    runs = len(matrix.runs)
    strip = []  # the case's worst outcome per run
    step = (width - 2 * pad) / max(runs, 1)
    for index, run in enumerate(matrix.runs):
        outcomes = [i for i in run.items if i.case == case]
        outcome = worst(outcomes) if outcomes else "NONE"
        strip.append(
            f'<rect class="run outcome-{outcome}" x="{pad + index * step:.1f}" y="{height - 8}" '
            f'width="{max(2.0, step - 1):.1f}" height="6"><title>run {index + 1}: {outcome}</title></rect>'
        )
    series = trend_series(matrix, case)
    top = max([1.2, *(v for values in series.values() for v in values if v is not None)])
    plot_height = height - 12

    def y(value: float) -> float:
        return pad + (plot_height - pad) * (1 - value / top)

    lines = [f'<line class="limit" x1="{pad}" x2="{width - pad}" y1="{y(1):.1f}" y2="{y(1):.1f}"/>']
    for number, (name, values) in enumerate(sorted(series.items())):
        points = [
            f"{pad + i * (width - 2 * pad) / max(runs - 1, 1):.1f},{y(v):.1f}"
            for i, v in enumerate(values)
            if v is not None
        ]
        colour = SERIES_COLOURS[number % len(SERIES_COLOURS)]
        latest = next((v for v in reversed(values) if v is not None), 0.0)
        lines.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{" ".join(points)}">'
            f"<title>{html.escape(name)}: {latest:.0%} of the limit in the newest run</title></polyline>"
        )
    label = "resource figures as a fraction of their limit (dashed: the limit); outcome per run below"
    return (
        f'<svg class="trend" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{label}"><title>{label}</title>{"".join(lines if series else [])}{"".join(strip)}</svg>'
    )


STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1b1f24; }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; } h2 { font-size: 1.1rem; margin-top: 1.5rem; }
.meta { color: #57606a; margin: 0 0 1rem; }
table { border-collapse: collapse; }
th, td { border: 1px solid #d0d7de; padding: 4px 6px; vertical-align: top; text-align: left; }
thead th { background: #f6f8fa; position: sticky; top: 0; }
th small { font-weight: normal; color: #57606a; display: block; }
.case a { color: #0969da; text-decoration: none; font-size: 12px; }
.exp { white-space: nowrap; font-size: 12px; }
.figure { color: #57606a; }
.badge { display: inline-block; min-width: 3.2em; font-weight: 600; font-size: 11px; }
.outcome-PASS { background: #dafbe1; } .outcome-FAIL { background: #ffd8d3; }
.outcome-XFAIL { background: #fff1c2; } .outcome-XPASS { background: #c8e1ff; }
.outcome-ERROR { background: #ffc0e0; } .outcome-SKIP { background: #eaeef2; color: #57606a; }
.outcome-UNSTABLE { background: #fff8c5; }
.outcome-NONE { background: transparent; }
td.cell.empty { background: #fff; }
rect.run.outcome-PASS { fill: #2da44e; } rect.run.outcome-FAIL { fill: #cf222e; }
rect.run.outcome-XFAIL { fill: #d4a72c; } rect.run.outcome-XPASS { fill: #0969da; }
rect.run.outcome-ERROR { fill: #bf3989; } rect.run.outcome-SKIP { fill: #afb8c1; }
rect.run.outcome-UNSTABLE { fill: #e3b341; }
rect.run.outcome-NONE { fill: #f6f8fa; }
line.limit { stroke: #cf222e; stroke-dasharray: 3 2; stroke-width: 1; }
.filters button { margin-right: .3rem; } .filters button[aria-pressed="true"] { font-weight: 700; }
tr.hidden { display: none; }
li.change.flaky { background: #fff8c5; }
details.pass-timeline { font-size: 11px; margin: 0 0 4px 1em; max-width: 28em; }
details.pass-timeline p { margin: 2px 0; } ol.passes { margin: 0; padding-left: 1.6em; }
ol.passes .pass { font-family: ui-monospace, monospace; } p.crossing { color: #cf222e; font-weight: 600; }
"""

# Filters rows by outcome; `#only=FAIL` in the address opens the page filtered (a link to share).
SCRIPT = """
function showOnly(only) {
  document.querySelectorAll(".filters button").forEach(function (b) {
    b.setAttribute("aria-pressed", String(b.dataset.only === only));
  });
  document.querySelectorAll("#matrix tbody tr").forEach(function (row) {
    var show = only === "all" || row.querySelector('td.cell[data-outcome="' + only + '"]') !== null;
    row.classList.toggle("hidden", !show);
  });
}
document.querySelectorAll(".filters button").forEach(function (button) {
  button.addEventListener("click", function () {
    history.replaceState(null, "", "#only=" + button.dataset.only);
    showOnly(button.dataset.only);
  });
});
var wanted = /^#only=(\\w+)$/.exec(location.hash);
if (wanted) { showOnly(wanted[1]); }
"""


def when(timestamp: float | None) -> str:
    if not timestamp:
        return "?"
    return dt.datetime.fromtimestamp(timestamp, dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def render_html(matrix: RunMatrix) -> str:
    e = html.escape
    if matrix.runs:
        newest = matrix.runs[-1]
        toolchain = newest.toolchain if isinstance(newest.toolchain, dict) else {}
        versions = ", ".join(f"{k} {v}" for k, v in sorted(toolchain.items())) or "?"
        meta = (
            f"{len(matrix.runs)} run(s), {when(matrix.runs[0].started)} to {when(newest.started)}. "
            f"Newest: runner {e(newest.runner or '?')}, corpus "
            f"{e((newest.corpus_sha or '?')[:12])}, {e(versions)}."
        )
    else:
        meta = "No runs yet."
    parts = [
        '<!doctype html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>kregress: corpus matrix</title><style>{STYLE}</style></head><body>",
        f'<header><h1>kregress: corpus matrix</h1><p class="meta">{meta}</p></header>',
        render_changes_html(matrix.changes),
        '<section id="matrix"><h2>Cases × targets</h2>',
        '<p class="filters">Show: <button data-only="all" aria-pressed="true">all</button>'
        + "".join(
            f'<button data-only="{o}" aria-pressed="false">{o}</button>'
            for o in (Outcome.FAIL, Outcome.XPASS, Outcome.UNSTABLE, Outcome.ERROR)
        )
        + "</p>",
        "<table><thead><tr><th>case</th><th>trend (last runs)</th>",
    ]
    for column in matrix.columns:
        target, toolchain = e(column.target), e(column.toolchain)
        gpu = e(", ".join(sorted(matrix.devices.get(column.target, ()))))
        shown = f"{toolchain}<br>{gpu}" if gpu else toolchain
        parts.append(f'<th data-target="{target}" title="{gpu}">{target}<small>{shown}</small></th>')
    parts.append("</tr></thead><tbody>")
    for case in matrix.cases:
        issue, fix = matrix.upstream.get(case, (None, None))
        links = "".join(
            f' <a href="{e(url)}" rel="noopener">{label}</a>'
            for label, url in (("issue", issue), ("fix", fix))
            if url
        )
        level = f'<br><small class="level">{e(matrix.levels.get(case, "not shown to catch its bug"))}</small>'
        parts.append(f'<tr data-case="{e(case)}"><th class="case">{e(case)}<br>{links}{level}</th>')
        parts.append(f"<td>{trend_svg(matrix, case)}</td>")
        for column in matrix.columns:
            items = matrix.cells.get((case, column))
            if not items:
                parts.append('<td class="cell empty" data-outcome="NONE"></td>')
                continue
            outcome = worst(list(items.values()))
            rows = []
            for name, item in sorted(items.items()):
                shown = figure(item)
                rows.append(
                    f'<div class="exp outcome-{item.outcome.value}" title="{e(item.message or "")}">'
                    f'<span class="badge">{item.outcome.value}</span> {e(name)}'
                    + (f' <span class="figure">{e(shown)}</span>' if shown else "")
                    + "</div>"
                    + pass_timeline_html(item)
                )
            parts.append(
                f'<td class="cell outcome-{outcome}" data-case="{e(case)}" data-target="{e(column.target)}" '
                f'data-toolchain="{e(column.toolchain)}" data-outcome="{outcome}">{"".join(rows)}</td>'
            )
        parts.append("</tr>")
    parts += [
        "</tbody></table></section>",
        '<footer><p class="meta">PASS holds · FAIL broke · XFAIL known bad · XPASS known bad but holds · '
        "UNSTABLE perf timings too noisy to judge · ERROR the harness or the case itself · "
        "SKIP cannot run there (hover for why).</p></footer>",
        f"<script>{SCRIPT}</script></body></html>",
    ]
    return "\n".join(parts)


def pass_timeline_html(item: ItemRecord) -> str:
    """Under an item traced pass by pass: its figure after each pass where it changed, per config,
    and the pass after which it crossed the bound. Open for a FAIL, folded otherwise."""
    traced = (item.measured or {}).get("passes") or {}
    if not isinstance(traced, dict) or not traced:
        return ""
    e = html.escape
    parts = []
    for config, timeline in traced.items():
        if not isinstance(timeline, dict):
            continue
        if "unavailable" in timeline:
            parts.append(f'<p class="config">[{e(config)}] {e(str(timeline["unavailable"]))}</p>')
            continue
        steps = "".join(
            f'<li><span class="pass">{e(str(name))}</span> <b>{e(str(count))}</b></li>'
            for name, count in timeline.get("steps") or []
        )
        where = f'<p class="crossing">{e(timeline["crossing"])}</p>' if timeline.get("crossing") else ""
        bytes_after = (timeline.get("allocated") or [])[1:]  # the first entry: 0, before the allocation
        allocated = " → ".join(f"{count} B after {name}" for name, count in bytes_after)
        parts.append(
            f'<p class="config">[{e(config)}] {e(str(timeline.get("of") or "count"))}, after each pass '
            f'where it changes ({timeline.get("passes", "?")} passes):</p><ol class="passes">{steps}</ol>'
            + where
            + (f'<p class="allocated">allocated: {e(allocated)}</p>' if allocated else "")
        )
    if not parts:
        return ""
    opened = " open" if item.outcome == Outcome.FAIL else ""
    return f'<details class="pass-timeline"{opened}><summary>pass by pass</summary>{"".join(parts)}</details>'


def render_changes_html(changes: Changes | None) -> str:
    if changes is None:
        return ""
    e = html.escape
    parts = [
        '<section id="changes"><h2>New since the last run</h2><p class="meta">Compared with '
        f"{changes.compared_with} earlier run(s) of the same runner; "
        f"still failing: {changes.still_failing}.</p>"
    ]
    shown = False
    for name, _, title, entries in changes.sections():
        if not entries:
            continue
        shown = True
        parts.append(f"<h3>{title}: {len(entries)}</h3><ul>")
        for change in entries:
            case, expectation, target = change.key
            text = change.reason or first_line(change.item.message or "")
            style = "flaky" if name == "flaky" else f"outcome-{change.now}"
            parts.append(
                f'<li class="change {style}"><b>{e(case)}</b> / {e(expectation)} on {e(target)} '
                f"(was {e(change.was or 'new')}): {e(text[:200])}</li>"
            )
        parts.append("</ul>")
    if not shown:
        parts.append("<p>Nothing changed.</p>")
    parts.append("</section>")
    return "".join(parts)


def matrix_markdown(matrix: RunMatrix) -> str:
    lines = ["## kregress: corpus matrix", ""]
    if matrix.changes is not None:
        lines += [render_changes(matrix.changes), ""]
    header = ["case", *(f"{c.target}<br>{c.toolchain}" if c.toolchain else c.target for c in matrix.columns)]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for case in matrix.cases:
        issue, _ = matrix.upstream.get(case, (None, None))
        row = [
            (f"[`{case}`]({issue})" if issue else f"`{case}`") + f" ({matrix.levels.get(case, 'not shown')})"
        ]
        for column in matrix.columns:
            items = matrix.cells.get((case, column))
            if not items:
                row.append("")
                continue
            outcome = worst(list(items.values()))
            counts = Counter(item.outcome.value for item in items.values())
            row.append(
                f"{SYMBOL.get(outcome, '')} " + " ".join(f"{n} {o}" for o, n in sorted(counts.items()))
            )
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"
