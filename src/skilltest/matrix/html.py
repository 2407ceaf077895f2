"""A matrix's HTML report: a heatmap of lift by scenario and cell, the comparisons across
cells and each cell's measures, on one self-contained page; each cell's runs are one click
away, in that cell's own HTML report (the report a single run writes) beside it.

The page holds no script: its policy allows inline styles only, and every text from a results
file is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skilltest.matrix.measures import MEASURES_LEGEND, matrix_measures, measures_table
from skilltest.matrix.report import (
    VERSIONS_LEGEND,
    cell_rows,
    cell_text,
    comparison_legend,
    comparison_tables,
    legend_of,
    notices,
    origin_lines,
    unit_of,
    versions_table,
)
from skilltest.report.markup import e
from skilltest.report.rows import Row
from skilltest.report.style import STYLE

POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
"""Nothing fetched, nothing run: inline styles only."""

HEATMAP_STYLE = """
table.heatmap td.lift{text-align:center;font-variant-numeric:tabular-nums;padding:.4em .6em}
table.heatmap td.lift a{color:inherit;text-decoration:none;display:block}
table.plain{border-collapse:collapse;margin:.5em 0 1.5em}
table.plain th,table.plain td{border:1px solid #ccc;padding:.3em .6em;text-align:left}
.legend{color:#555;font-size:.9em}
"""


def lift_colour(row: Row | None) -> str:
    """The heatmap's colour of a scenario in a cell: green for a lift credibly above 0, red for
    one credibly below, pale by its size; grey without a lift."""
    if row is None or row.delta.empty or row.delta.value is None:
        return "#eeeeee"
    assert row.delta.low is not None and row.delta.high is not None
    strength = min(1.0, abs(row.delta.value))
    light = round(95 - 45 * strength)
    if row.delta.low > 0:
        return f"hsl(130, 55%, {light}%)"
    if row.delta.high < 0:
        return f"hsl(0, 70%, {light}%)"
    return f"hsl(50, 30%, {max(light, 85)}%)"


def _table(headers: list[str], rows: list[list[str]], css: str = "plain") -> str:
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def render_matrix_html(document: Mapping[str, Any], cell_pages: Mapping[str, str]) -> str:
    """The page of a matrix's results ``document``; ``cell_pages`` maps each cell's id to the
    address of its own report, relative to the page."""
    cells = cell_rows(document)
    names: dict[str, None] = {}
    for _, rows in cells:
        names.update(dict.fromkeys(rows))
    head = "".join(
        f'<th><a href="{e(cell_pages[cell_id])}">{e(cell_id)}</a></th>'
        if cell_id in cell_pages
        else f"<th>{e(cell_id)}</th>"
        for cell_id, _ in cells
    )
    body = []
    for name in names:
        tds = []
        for cell_id, rows in cells:
            row = rows.get(name)
            inner = e(cell_text(row))
            if cell_id in cell_pages:
                inner = f'<a href="{e(cell_pages[cell_id])}">{inner}</a>'
            tds.append(
                f'<td class="lift" style="background:{lift_colour(row)}" '
                f'title="{e(cell_id)}: {e(name)}">{inner}</td>'
            )
        body.append(f"<tr><th>{e(name)}</th>{''.join(tds)}</tr>")
    heatmap = (
        f'<table class="plain heatmap"><thead><tr><th>{unit_of(document)[0]}</th>'
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">',
        f"<title>skilltest {e(document.get('layer'))} matrix</title>",
        f'<style>{STYLE}{HEATMAP_STYLE}</style></head><body><main class="page">',
        f"<h1>skilltest {e(document.get('layer'))} matrix</h1>",
        *(f'<p class="notice"><strong>{e(line)}</strong></p>' for line in notices(document)),
        "<ul>" + "".join(f"<li>{e(line)}</li>" for line in origin_lines(document)) + "</ul>",
        "<h2>Firing by query and cell</h2>"
        if document.get("layer") == "triggers"
        else "<h2>Lift by scenario and cell</h2>",
        heatmap,
        f'<p class="legend">{e(legend_of(document))}; each column and cell opens that '
        "cell's runs.</p>",
    ]
    for title, (headers, found), legend in (
        *(
            (f"Across {axis}s", (heads, rows), comparison_legend(document))
            for axis, heads, rows in comparison_tables(document)
        ),
        ("Across Claude Code versions", versions_table(document), VERSIONS_LEGEND),
        ("Each cell's measures", measures_table(matrix_measures(document)), MEASURES_LEGEND),
    ):
        if found:
            parts += [
                f"<h2>{e(title)}</h2>",
                _table(headers, found),
                f'<p class="legend">{e(legend)}</p>',
            ]
    parts.append("</main></body></html>\n")
    return "".join(parts)


def write_matrix_html(document: Mapping[str, Any], page: Path, *, cwd: Path) -> list[Path]:
    """Writes the matrix's page to ``page`` and each cell's own report beside it, in
    ``<page stem>.cells/<cell folder>.html``; returns the files written.

    Raises:
        InputError: a file cannot be written, naming it.
    """
    from skilltest.report.files import write_report
    from skilltest.report.html import render_html
    from skilltest.report.markdown import Document

    folder = page.with_name(f"{page.stem}.cells")
    written = []
    addresses = {}
    for cell in document.get("cells") or []:
        name = ".".join(f"{axis}-{value}" for axis, value in cell["values"].items())
        target = folder / f"{name}.html"
        html = render_html(
            [Document(str(cell["id"]), cell["results"])], cwd=cwd, link_from=(cwd / target).parent
        )
        write_report(target, html)
        written.append(target)
        addresses[str(cell["id"])] = f"{folder.name}/{target.name}"
    write_report(page, render_matrix_html(document, addresses))
    return [page, *written]
