"""A self-contained HTML report of one or more results files, for people to read in a browser.

Pure apart from reading the kept transcripts the results name: it takes results documents (what
``--results`` writes) and returns one HTML page with everything inline (styles, plots; no
script, no font, no request to any network), so the file can be mailed, attached to a CI run or
opened from disk. An offline run's report says first that its numbers come from a scripted
stand-in; what produced each results file (backend, model, versions, date, suites, command line)
heads its layer. Per layer: a table of the scenarios (verdict, figures with intervals, pass@k
and pass^k, and with ``--against REF`` the verdict and delta against that revision), a forest
plot of the deltas; per scenario: pass rates or mean scores per arm,
component and split-score bars, and every run, in a ``<details>`` element: the answer (pressure)
or the transcript as a timeline (user turns, assistant text, tool calls with their inputs and
results, errors) with the HTTP calls the controlled world saw.

The plots are SVG written here by hand rather than drawn by a plotting library: a forest plot
and bar charts are a few lines and rectangles, the page stays small and identical run to run,
every label goes through the same escaping as the rest of the page, and the toolkit gains no
heavy dependency (matplotlib would pull numpy and a font cache) for what two functions do.

Transcripts and answers are untrusted (a model wrote them, a tool returned them): every text is
escaped, and the page's Content-Security-Policy forbids scripts and remote loads besides.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.report.markdown import LEGEND, NOUNS, TITLES, Document, cost_line
from skilltest.report.provenance import fields, notice, provenance_of
from skilltest.report.rows import LAYERS, Row, figure, layer_of, rows_of, versus_cell
from skilltest.revision import summary_line

TEXT_LIMIT = 4000
"""Most characters of one text shown in a timeline (a tool result can be megabytes)."""
TRANSCRIPT_LIMIT = 2_000_000
"""Most bytes of one transcript file read."""

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#1b1f24}
h1{font-size:1.5em}h2{font-size:1.25em;margin-top:2em}h3{font-size:1.05em;margin:1.2em 0 .4em}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #d0d7de;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f6f8fa}
tr.failed td.verdict{color:#b42318;font-weight:600}tr.passed td.verdict{color:#1a7f37}
.scenario{border-top:1px solid #d0d7de;margin-top:1em;padding-top:.5em}
details{margin:.3em 0;border:1px solid #d0d7de;border-radius:4px;padding:.2em .6em}
summary{cursor:pointer;font-weight:600}
.timeline{list-style:none;padding:0;margin:.4em 0}.timeline li{margin:.3em 0;padding:.3em .5em;
border-left:4px solid #8c959f;background:#f6f8fa}
.timeline .user{border-color:#0969da}.timeline .assistant{border-color:#1a7f37}
.timeline .tool{border-color:#8250df}.timeline .result{border-color:#bf8700}
.timeline .http{border-color:#57606a}.timeline .error{border-color:#b42318;background:#ffebe9}
.kind{font-weight:600;margin-right:.5em}
pre{white-space:pre-wrap;word-break:break-word;margin:.2em 0;font-size:12px}
.note{color:#57606a}
.offline{font-size:1.1em;font-weight:600;background:#fff8c5;border:2px solid #bf8700;
border-radius:4px;padding:.6em .9em;margin:.8em 0}
table.provenance th{width:9em}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
"""No script, no remote style, font or image: the page works offline and runs nothing."""


def _e(text: Any) -> str:
    return escape(str(text), quote=True)


def _clip(text: str) -> str:
    if len(text) <= TEXT_LIMIT:
        return text
    return f"{text[:TEXT_LIMIT]}… ({len(text) - TEXT_LIMIT:,} more characters)"


def _pre(text: Any) -> str:
    return f"<pre>{_e(_clip(text if isinstance(text, str) else json.dumps(text, indent=1)))}</pre>"


def _items(layer: str, data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The raw scenarios (or trigger queries) of a document, in the order of its rows."""
    if layer == "triggers":
        return [query for suite in data.get("suites") or [] for query in suite.get("queries") or []]
    return list(data.get("scenarios") or [])


def forest_plot(rows: Sequence[Row], *, title: str) -> str:
    """A forest plot as inline SVG: per row its delta (or, without one, its with-skill figure)
    as a dot with its interval as a line, against a zero line."""
    use_delta = any(not row.delta.empty for row in rows)
    shown = [(row.name, row.delta if use_delta else row.with_skill) for row in rows]
    shown = [(name, interval) for name, interval in shown if not interval.empty]
    if not shown:
        return ""
    low = -1.0 if use_delta else 0.0
    label_w, plot_w, row_h, top = 300, 360, 22, 28
    height = top + row_h * len(shown) + 24

    def x(value: float) -> float:
        return label_w + (max(low, min(1.0, value)) - low) / (1.0 - low) * plot_w

    parts = [
        f'<svg class="forest" xmlns="http://www.w3.org/2000/svg" width="{label_w + plot_w + 20}" '
        f'height="{height}" role="img" aria-label="{_e(title)}">',
        f'<text x="{label_w}" y="16" font-size="12" font-weight="600">{_e(title)}</text>',
    ]
    for tick in [-1.0, -0.5, 0.0, 0.5, 1.0] if use_delta else [0.0, 0.25, 0.5, 0.75, 1.0]:
        stroke = "#57606a" if tick == 0 else "#d0d7de"
        label = f"{tick:+.1f}" if use_delta else f"{tick:.2f}"
        parts.append(
            f'<line x1="{x(tick):.1f}" y1="{top - 4}" x2="{x(tick):.1f}" '
            f'y2="{height - 20}" stroke="{stroke}"/>'
            f'<text x="{x(tick):.1f}" y="{height - 6}" font-size="10" text-anchor="middle">'
            f"{label}</text>"
        )
    for index, (name, interval) in enumerate(shown):
        y = top + row_h * index + row_h / 2
        assert interval.low is not None and interval.high is not None
        color = "#1a7f37" if interval.low > 0 else "#b42318" if interval.high < 0 else "#57606a"
        parts.append(
            f'<text x="{label_w - 8}" y="{y + 4:.1f}" font-size="11" text-anchor="end">'
            f"{_e(name[-48:])}</text>"
            f'<line x1="{x(interval.low):.1f}" y1="{y:.1f}" x2="{x(interval.high):.1f}" '
            f'y2="{y:.1f}" stroke="{color}" stroke-width="2"/>'
            f'<circle cx="{x(interval.value or 0.0):.1f}" cy="{y:.1f}" r="4" fill="{color}"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


def bar_chart(values: Mapping[str, float | None], *, title: str) -> str:
    """Horizontal bars on a 0..1 scale as inline SVG (component scores, split scores, rates);
    a value of ``None`` is drawn as ``n/a``."""
    if not values:
        return ""
    label_w, bar_w, row_h = 180, 240, 18
    height = 20 + row_h * len(values)
    parts = [
        f'<svg class="bars" xmlns="http://www.w3.org/2000/svg" width="{label_w + bar_w + 60}" '
        f'height="{height}" role="img" aria-label="{_e(title)}">',
        f'<text x="0" y="13" font-size="12" font-weight="600">{_e(title)}</text>',
    ]
    for index, (name, value) in enumerate(values.items()):
        y = 20 + row_h * index
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 12}" font-size="11" text-anchor="end">'
            f"{_e(name)}</text>"
            f'<rect x="{label_w}" y="{y + 2}" width="{bar_w}" height="{row_h - 5}" fill="#eaeef2"/>'
        )
        if value is None:
            parts.append(f'<text x="{label_w + 4}" y="{y + 12}" font-size="11">n/a</text>')
            continue
        width = max(0.0, min(1.0, float(value))) * bar_w
        parts.append(
            f'<rect x="{label_w}" y="{y + 2}" width="{width:.1f}" height="{row_h - 5}" '
            f'fill="#0969da"/><text x="{label_w + bar_w + 6}" y="{y + 12}" font-size="11">'
            f"{float(value):.2f}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, Mapping)]


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        str(block.get("text", "")) for block in _blocks(content) if block.get("type") == "text"
    )


def _entry(kind: str, css: str, body: str) -> str:
    return f'<li class="{css}"><span class="kind">{_e(kind)}</span>{body}</li>'


def timeline_of_events(events: Sequence[Any]) -> Iterator[str]:
    """The ``<li>`` entries of a stream-json transcript's timeline, in order."""
    for event in events:
        if not isinstance(event, Mapping):
            continue
        kind = event.get("type")
        raw = event.get("message")
        message: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        if kind == "user":
            for block in _blocks(message.get("content")):
                if block.get("type") == "tool_result":
                    css = "error" if block.get("is_error") else "result"
                    label = "tool error" if block.get("is_error") else "tool result"
                    yield _entry(label, css, _pre(_result_text(block.get("content"))))
                elif block.get("type") == "text":
                    yield _entry("user", "user", _pre(block.get("text", "")))
        elif kind == "assistant":
            for block in _blocks(message.get("content")):
                if block.get("type") == "text" and str(block.get("text", "")).strip():
                    yield _entry("assistant", "assistant", _pre(block.get("text", "")))
                elif block.get("type") == "tool_use":
                    yield _entry(
                        f"tool call {block.get('name')}", "tool", _pre(block.get("input", {}))
                    )
        elif kind == "system" and event.get("subtype") == "api_retry":
            yield _entry("API retry", "error", _pre(event.get("error") or event))
        elif kind == "result":
            css = "error" if event.get("is_error") else "assistant"
            label = f"result ({event.get('subtype')})"
            yield _entry(label, css, _pre(event.get("result") or ""))


def _read_events(path: Path) -> tuple[list[Any], str | None]:
    from skilltest.files import read_head

    try:
        # A regular file only: a results file naming a FIFO or a device cannot stall the report.
        raw = read_head(path, TRANSCRIPT_LIMIT, what="the transcript")
    except InputError as exc:
        return [], f"transcript not readable: {exc}"
    events = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except (ValueError, RecursionError):
            continue  # a plain-text transcript or a cut-off line: the rest still shows
    return events, None


def _world_calls(world: Mapping[str, Any] | None) -> Iterator[str]:
    for call in (world or {}).get("calls") or []:
        if not isinstance(call, Mapping):
            continue
        head = " ".join(
            str(call[key])
            for key in ("service", "method", "host", "path", "url", "status")
            if call.get(key)
        )
        yield _entry("HTTP", "http", _pre(head or call))
    for violation in (world or {}).get("violations") or []:
        yield _entry("authority violation", "error", _pre(violation))


def _run_details(layer: str, run: Mapping[str, Any], *, cwd: Path) -> str:
    entries: list[str] = []
    notes: list[str] = []
    arm = run.get("arm") or ""
    arm_label = {"with_skill": "with skill", "without_skill": "without skill"}.get(arm, arm)
    if layer == "pressure":
        status = "error" if run.get("error") else "passed" if run.get("passed") else "failed"
    elif layer == "scenarios":
        score = run.get("score")
        status = "unscored" if score is None else f"score {float(score):.2f}"
    else:
        status = str(run.get("ended") or "-")  # fired, not-fired, budget, timeout, error
        if run.get("reason"):
            notes.append(str(run["reason"]))
    summary = " ".join(
        part for part in (arm_label, f"run #{run.get('rep')}", f"({status})") if part
    )
    if layer == "pressure":
        entries.append(_entry("assistant", "assistant", _pre(run.get("output") or "")))
        for key in ("matched", "missing", "anti_matched"):
            if run.get(key):
                notes.append(f"{key.replace('_', '-')}: {', '.join(map(str, run[key]))}")
    if run.get("transcript"):
        target = Path(str(run["transcript"]))
        events, problem = _read_events(target if target.is_absolute() else cwd / target)
        if problem:
            notes.append(problem)
        entries.extend(timeline_of_events(events))
        notes.append(f"transcript: {run['transcript']}")
    entries.extend(_world_calls(run.get("world")))
    if run.get("error"):
        entries.append(_entry("error", "error", _pre(run["error"])))
    if run.get("ended") and layer == "scenarios":  # a trigger run's ending is its outcome
        entries.append(_entry("ended", "error", _pre(run["ended"])))
    splits = _split_scores(run)
    chart = bar_chart(splits, title="split scores") if len(splits) > 1 else ""
    components = run.get("components")
    if isinstance(components, Mapping) and components:
        chart += bar_chart(_numbers(components), title="components")
    note = "".join(f'<p class="note">{_e(text)}</p>' for text in notes)
    return (
        f'<details class="run"><summary>{_e(summary)}</summary>{note}{chart}'
        f'<ol class="timeline">{"".join(entries)}</ol></details>'
    )


def _numbers(values: Mapping[str, Any]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name, value in values.items():
        if isinstance(value, Mapping):  # {"score": ..., ...} per component
            value = value.get("score", value.get("mean"))
        out[str(name)] = float(value) if isinstance(value, int | float) else None
    return out


def _split_scores(run: Mapping[str, Any]) -> dict[str, float | None]:
    world = run.get("world")
    if not isinstance(world, Mapping) or not isinstance(world.get("scores"), Mapping):
        return {}
    score = run.get("score")
    return {"tool": float(score) if score is not None else None, **_numbers(world["scores"])}


def _arm_rates(layer: str, item: Mapping[str, Any]) -> str:
    cells = []
    for arm in ("with_skill", "without_skill", "previous"):
        data = item.get(arm)
        if not isinstance(data, Mapping):
            continue
        figures = []
        if layer == "pressure" and data.get("pass_rate") is not None:
            figures.append(f"pass {100 * data['pass_rate']:.0f}%")
        if layer == "pressure" and data.get("red_rate") is not None:
            figures.append(f"RED {100 * data['red_rate']:.0f}%")
        if data.get("mean_score") is not None:
            figures.append(f"mean score {data['mean_score']:.2f}")
        if data.get("pass_at_k") is not None:
            figures.append(f"pass@{data.get('k')} {100 * data['pass_at_k']:.0f}%")
        if data.get("pass_hat_k") is not None:
            figures.append(f"pass^{data.get('k')} {100 * data['pass_hat_k']:.0f}%")
        runs = f"{data.get('runs', 0)} runs"
        cells.append(
            f"<tr><td>{_e(arm.replace('_', ' '))}</td><td>{_e(runs)}</td>"
            f"<td>{_e(', '.join(figures) or '-')}</td></tr>"
        )
    if not cells:
        return ""
    return (
        '<table class="arms"><tr><th>arm</th><th>runs</th><th>rates</th></tr>'
        + "".join(cells)
        + "</table>"
    )


def _pass_k(item: Mapping[str, Any]) -> str:
    arm = item.get("with_skill")
    if not isinstance(arm, Mapping) or arm.get("pass_at_k") is None:
        return "-"
    return f"{100 * arm['pass_at_k']:.0f}% / {100 * (arm.get('pass_hat_k') or 0):.0f}%"


def _scenario_section(
    layer: str, index: int, row: Row, item: Mapping[str, Any], *, cwd: Path
) -> str:
    charts = ""
    arm_components = {
        arm: _numbers(item[arm]["components"])
        for arm in ("with_skill", "without_skill")
        if isinstance(item.get(arm), Mapping) and isinstance(item[arm].get("components"), Mapping)
    }
    for arm, values in arm_components.items():
        charts += bar_chart(values, title=f"components, {arm.replace('_', ' ')} (mean)")
    runs = item.get("runs") or []
    reasons = "".join(f"<li>{_e(reason)}</li>" for reason in row.reasons)
    return (
        f'<section class="scenario" id="{_e(layer)}-{index}"><h3>{_e(row.name)}: '
        f'<span class="verdict">{_e(row.verdict)}</span></h3>'
        + (f"<ul>{reasons}</ul>" if reasons else "")
        + _arm_rates(layer, item)
        + charts
        + "".join(_run_details(layer, run, cwd=cwd) for run in runs if isinstance(run, Mapping))
        + "</section>"
    )


def offline_notices(documents: Sequence[Document]) -> str:
    """The page's first words for every offline document (or one of unknown origin): its
    numbers come from a scripted stand-in and say nothing about a real model."""
    notes = []
    for document in documents:
        said = notice(provenance_of(document.data))
        if said:
            source = f" ({document.source})" if document.source != "-" else ""
            head, _, rest = said.partition(": ")
            notes.append(
                f'<p class="offline" role="note"><strong>{_e(head)}</strong>{_e(source)}: '
                f"{_e(rest)}</p>"
            )
    return "".join(dict.fromkeys(notes))


def provenance_table(document: Document) -> str:
    """What produced a document: backend, model, versions, date, suites, command line."""
    cells = "".join(
        f"<tr><th>{_e(name)}</th><td>{_e(value)}</td></tr>"
        for name, value in fields(provenance_of(document.data))
    )
    caption = f"<caption>{_e(document.source)}</caption>" if document.source != "-" else ""
    return f'<table class="provenance">{caption}{cells}</table>'


def _layer_section(layer: str, documents: Sequence[Document], *, cwd: Path) -> str:
    pairs: list[tuple[Row, Mapping[str, Any]]] = []
    for document in documents:
        pairs.extend(
            zip(rows_of(document.data, document.source), _items(layer, document.data), strict=True)
        )
    rows = [row for row, _ in pairs]
    counts = Counter(row.verdict for row in rows)
    failing = sum(row.failed for row in rows)
    # Shards or layers run against different revisions: one count line per revision, and the
    # column names the revision in each cell.
    refs = list(dict.fromkeys(row.against.ref for row in rows if row.against))
    versus_head = ""
    if refs:
        versus_head = (
            f"<th>{_e(f'vs {refs[0]}' if len(refs) == 1 else 'vs previous revision')}</th>"
        )
    table = [
        '<table class="verdicts"><tr><th>scenario</th><th>verdict</th><th>with skill</th>'
        f"<th>without skill</th><th>delta</th>{versus_head}<th>K</th><th>pass@k / pass^k</th>"
        "<th>reasons</th></tr>"
    ]
    for index, (row, item) in enumerate(pairs):
        css = "failed" if row.failed else "passed"
        table.append(
            f'<tr class="{css}"><td><a href="#{_e(layer)}-{index}">{_e(row.name)}</a></td>'
            f'<td class="verdict">{_e(row.verdict)}</td>'
            f"<td>{_e(figure(row.with_skill, percent=row.percent))}</td>"
            f"<td>{_e(figure(row.without_skill, percent=row.percent))}</td>"
            f"<td>{_e(figure(row.delta, percent=row.percent, signed=True))}</td>"
            + (f"<td>{_e(versus_cell(row, named=len(refs) > 1))}</td>" if refs else "")
            + f"<td>{row.k}</td><td>{_e(_pass_k(item))}</td>"
            f"<td>{_e('; '.join(row.reasons))}</td></tr>"
        )
    table.append("</table>")
    against_lines = [
        summary_line(ref, [r.against.verdict for r in rows if r.against and r.against.ref == ref])
        for ref in refs
    ]
    count_text = ", ".join(f"{number} {verdict}" for verdict, number in sorted(counts.items()))
    sources = ", ".join(document.source for document in documents if document.source != "-")
    plot_title = (
        "delta with its interval"
        if any(not row.delta.empty for row in rows)
        else "with-skill rate with its interval"
    )
    return (
        f'<section class="layer" id="layer-{_e(layer)}"><h2>{_e(TITLES[layer])}</h2>'
        f'<p class="counts">{len(rows)} {_e(NOUNS[layer][len(rows) != 1])}: {_e(count_text)}; '
        f"{failing} failing</p>"
        + "".join(f'<p class="counts against">{_e(line)}</p>' for line in against_lines)
        + (
            f'<p class="counts cost">{_e(cost)}</p>'
            if layer == "scenarios" and (cost := cost_line(documents))
            else ""
        )
        + f'<p class="note">{_e(LEGEND[layer])}.{_e(f" From {sources}." if sources else "")}</p>'
        + "".join(provenance_table(document) for document in documents)
        + "".join(table)
        + forest_plot(rows, title=plot_title)
        + "".join(
            _scenario_section(layer, index, row, item, cwd=cwd)
            for index, (row, item) in enumerate(pairs)
        )
        + "</section>"
    )


def render_html(documents: Sequence[Document], *, cwd: Path) -> str:
    """The HTML report of results ``documents`` (any layers; shards of one layer combined).

    Args:
        documents: The results documents with where each came from.
        cwd: The folder transcript paths in the results are relative to.

    Raises:
        InputError: a document is not a results file of a known layer.
    """
    by_layer: dict[str, list[Document]] = {}
    for document in documents:
        by_layer.setdefault(layer_of(document.data, document.source), []).append(document)
    sections = [
        _layer_section(layer, by_layer[layer], cwd=cwd) for layer in LAYERS if layer in by_layer
    ]
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        "<title>skilltest report</title>"
        f"<style>{STYLE}</style></head><body><h1>skilltest report</h1>"
        + offline_notices(documents)
        + "".join(sections)
        + "</body></html>\n"
    )
