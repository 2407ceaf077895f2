"""A matrix's results as people read them: a scenario x cell table of verdicts and lifts,
what produced each cell's numbers, and the counts per cell. Pure: reads the results document
(a run that just ended and a file written last week print the same)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from skilltest.cost.render import SuiteEstimate
from skilltest.matrix.measures import MEASURES_LEGEND, matrix_measures, measures_table
from skilltest.report.provenance import notice, provenance_of, summary
from skilltest.report.rows import Row, figure, rows_of
from skilltest.stats import Interval

LEGEND = (
    "each cell: the scenario's verdict in that cell, then the lift (with-skill minus "
    "without-skill) [95% interval], as a run of that cell alone decides them"
)


def cell_rows(document: Mapping[str, Any]) -> list[tuple[str, dict[str, Row]]]:
    """Each cell's id and its rows by scenario name (``skill/id``), in the plan's order."""
    return [
        (str(cell["id"]), {row.name: row for row in rows_of(cell["results"], cell["id"])})
        for cell in document.get("cells") or []
    ]


def _scenario_names(cells: Sequence[tuple[str, dict[str, Row]]]) -> list[str]:
    names: dict[str, None] = {}
    for _, rows in cells:
        names.update(dict.fromkeys(rows))
    return list(names)


TRIGGERS_LEGEND = (
    "each cell: the query's result in that cell, then how often the skill fired [95% interval], "
    "as a run of that cell alone decides them"
)


def legend_of(document: Mapping[str, Any]) -> str:
    """What the scenario x cell table's cells show, for the matrix's layer."""
    return TRIGGERS_LEGEND if document.get("layer") == "triggers" else LEGEND


def unit_of(document: Mapping[str, Any]) -> tuple[str, str]:
    """What a row is, one and many: ``scenario``, or a trigger ``query``."""
    return (
        ("query", "queries") if document.get("layer") == "triggers" else ("scenario", "scenarios")
    )


def cell_text(row: Row | None) -> str:
    """A scenario's verdict in a cell and its lift (a trigger query: its firing rate)."""
    if row is None:
        return "-"
    if row.layer == "triggers":
        return f"{row.verdict} {figure(row.with_skill, percent=True)}"
    if row.delta.empty:
        return row.verdict
    return f"{row.verdict} {figure(row.delta, percent=row.percent, signed=True)}"


def matrix_table(document: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The scenario x cell table's headers and rows."""
    cells = cell_rows(document)
    headers = [unit_of(document)[0], *(cell_id for cell_id, _ in cells)]
    rows = [
        [name, *(cell_text(rows.get(name)) for _, rows in cells)] for name in _scenario_names(cells)
    ]
    return headers, rows


def notices(document: Mapping[str, Any]) -> list[str]:
    """The lines an offline matrix (or one of unknown origin) begins with, each said once."""
    said: dict[str, None] = {}
    for cell in document.get("cells") or []:
        line = notice(provenance_of(cell["results"]))
        if line:
            said[line] = None
    return list(said)


def origin_lines(document: Mapping[str, Any]) -> list[str]:
    """What produced each cell's numbers: backend, the model as the API named it, versions,
    date."""
    return [
        f"{cell['id']}: {summary(provenance_of(cell['results']))}"
        for cell in document.get("cells") or []
    ]


def count_lines(document: Mapping[str, Any]) -> list[str]:
    """Per cell, its scenarios' verdicts counted; then the shared baseline, when there is one."""
    lines = []
    for cell_id, rows in cell_rows(document):
        counts = Counter(row.verdict for row in rows.values())
        shown = ", ".join(f"{count} {verdict}" for verdict, count in counts.items())
        failing = sum(row.failed for row in rows.values())
        lines.append(
            f"{cell_id}: {len(rows)} {unit_of(document)[1]}: {shown or 'none ran'}"
            + (f"; {failing} failing" if failing else "")
        )
    plan = document.get("matrix") or {}
    if plan.get("shared_baseline"):
        refs = [str(r.get("ref")) for r in plan.get("revisions") or () if isinstance(r, dict)]
        named = f" (at {', '.join(refs)})" if refs else ""
        lines.append(
            "shared baseline: each cell ran its without-skill arm once; the skill and each "
            f"--against revision{named} were compared with the same baseline runs"
        )
    spending = document.get("spending")
    if spending:
        stopped = spending.get("stopped_cells") or []
        lines.append(
            f"spent ${spending['spent_usd']:.4f} of --max-cost-usd {spending['limit_usd']:g}, "
            "each cell drawing a share in proportion to its estimated cost"
            + (f"; stopped before every run: {', '.join(stopped)}" if stopped else "")
        )
    if not document.get("complete", True) and not (spending or {}).get("stopped_cells"):
        ran = len(document.get("cells") or [])
        lines.append(f"incomplete: {ran} of {len(plan.get('cells') or [])} cell(s) ran")
    return lines


def render_estimate(
    per_cell: Sequence[tuple[str, Sequence[SuiteEstimate]]],
    *,
    noun: str,
    notes: Sequence[str] = (),
) -> str:
    """A matrix's dry run: each cell's suites, each cell's total, and the matrix's total."""
    from tabulate import tabulate

    from skilltest.cost.render import (
        DRY_RUN_LINE,
        FIGURE_HEADERS,
        TOKENS_LINE,
        figures,
        total_of,
    )

    rows = []
    totals = []
    for cell_id, estimates in per_cell:
        rows += [[cell_id, each.suite, *figures(each)] for each in estimates]
        if estimates:
            totals.append(total_of(estimates))
            rows.append([cell_id, "cell total", *figures(totals[-1])])
    if totals:
        rows.append(["", "matrix total", *figures(total_of(totals))])
    unknown = sorted({m for _, estimates in per_cell for e in estimates for m in e.models})
    return "\n".join(
        [
            DRY_RUN_LINE,
            tabulate(
                rows,
                headers=["cell", "suite", noun, *FIGURE_HEADERS],
                tablefmt="simple",
                disable_numparse=True,
            ),
            TOKENS_LINE,
            *(
                [f"priced as opus (not in the price table): {', '.join(unknown)}"]
                if unknown
                else []
            ),
            *notes,
        ]
    )


COMPARISON_LEGEND = (
    "lift in the first cell minus lift in the second [interval at the level shown: two exact "
    "lift intervals combined by Bonferroni]; differs: the interval excludes 0"
)

FIRING_LEGEND = (
    "firing rate in the first cell minus in the second [exact unconditional interval at the "
    "level shown]; differs: the interval excludes 0"
)


def comparison_legend(document: Mapping[str, Any]) -> str:
    """What the comparisons across cells show, for the matrix's layer."""
    return FIRING_LEGEND if document.get("layer") == "triggers" else COMPARISON_LEGEND


def comparison_table(
    document: Mapping[str, Any], axis: str = "model"
) -> tuple[list[str], list[list[str]]]:
    """The comparisons across cells that differ on ``axis`` (the model, the agent): per
    scenario and pair of cells, the difference of lifts and what the two verdicts say
    together."""
    rows = []
    for found in document.get("comparisons") or []:
        if found.get("axis", "model") != axis:
            continue
        low, high = found["difference_ci"]
        difference = Interval(found["difference"], low, high)
        rows.append(
            [
                found["scenario"],
                _pair_label(found, f"{found['first']} - {found['second']}"),
                f"{figure(difference, percent=True, signed=True)} ({found['confidence']:.0%})",
                f"{found['verdict']}: {found['reading']}",
            ]
        )
    if document.get("layer") == "triggers":
        return ["query", f"by {axis}", "firing difference", "reading"], rows
    return ["scenario", f"by {axis}", "lift difference", "reading"], rows


def comparison_tables(document: Mapping[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """Each axis the lift is compared on that has comparisons (the model, then the agent),
    with its table."""
    from skilltest.matrix.axes import LIFT_AXES

    tables = []
    for axis in LIFT_AXES:
        headers, rows = comparison_table(document, axis)
        if rows:
            tables.append((axis, headers, rows))
    return tables


VERSIONS_LEGEND = (
    "pass rate under the second CLI version minus under the first [exact 95% interval]; same: "
    "within [-5%, +5%], improved or regressed: credibly above or below it"
)


def _pair_label(found: Mapping[str, Any], shown: str) -> str:
    """``haiku - opus``, with what the two cells share when the matrix has more axes:
    ``haiku - opus at claude=2.1.332``."""
    first = dict(part.split("=", 1) for part in str(found["cells"][0]).split(","))
    shared = [
        f"{axis}={value}" for axis, value in first.items() if axis != found.get("axis", "claude")
    ]
    return shown + (f" at {','.join(shared)}" if shared else "")


def versions_table(document: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Per scenario and pair of CLI versions, how the with-skill and the without-skill pass
    rates moved."""
    paired: dict[tuple[str, str], dict[str, str]] = {}
    for found in document.get("versions") or []:
        low, high = found["change_ci"]
        shown = figure(Interval(found["change"], low, high), percent=True, signed=True)
        key = (found["scenario"], _pair_label(found, f"{found['second']} vs {found['first']}"))
        paired.setdefault(key, {})[found["arm"]] = f"{found['verdict']} {shown}"
    rows = [
        [name, pair, arms.get("with_skill", "-"), arms.get("without_skill", "-")]
        for (name, pair), arms in paired.items()
    ]
    return ["scenario", "by claude version", "with skill", "without skill"], rows


def render_terminal(document: Mapping[str, Any]) -> str:
    """The table, its legend, what produced each cell, and the counts, as the terminal shows
    them."""
    from tabulate import tabulate

    headers, rows = matrix_table(document)
    compared: list[str] = []
    for _, heads, found in comparison_tables(document):
        table = tabulate(found, headers=heads, tablefmt="simple", disable_numparse=True)
        compared += ["", table, comparison_legend(document)]
    heads, found = versions_table(document)
    if found:
        table = tabulate(found, headers=heads, tablefmt="simple", disable_numparse=True)
        compared += ["", table, VERSIONS_LEGEND]
    heads, found = measures_table(matrix_measures(document))
    if found:
        table = tabulate(found, headers=heads, tablefmt="simple", disable_numparse=True)
        compared += ["", table, MEASURES_LEGEND]
    return "\n".join(
        [
            *notices(document),  # an offline matrix says so before any number
            tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True),
            legend_of(document),
            *compared,
            "",
            *origin_lines(document),
            "",
            *count_lines(document),
        ]
    )


def render_markdown(document: Mapping[str, Any]) -> str:
    """The Markdown summary of a matrix (``--markdown``, a CI job's summary)."""
    from tabulate import tabulate

    headers, rows = matrix_table(document)
    axes = "; ".join(
        f"{axis['name']}: {', '.join(axis['values'])}"
        for axis in (document.get("matrix") or {}).get("axes") or []
    )
    escaped = [[cell.replace("|", "\\|") for cell in row] for row in rows]
    return "\n".join(
        [
            f"## skilltest {document.get('layer')} matrix",
            "",
            f"Axes: {axes}.",
            "",
            *(f"> {line}" for line in notices(document)),
            "",
            *(f"- {line}" for line in origin_lines(document)),
            "",
            tabulate(escaped, headers=headers, tablefmt="github", disable_numparse=True),
            "",
            legend_of(document) + ".",
            "",
            *_markdown_comparisons(document),
            *(f"- {line}" for line in count_lines(document)),
            "",
        ]
    )


def _markdown_comparisons(document: Mapping[str, Any]) -> list[str]:
    from tabulate import tabulate

    lines: list[str] = []
    for table, legend in (
        *(
            ((heads, rows), comparison_legend(document))
            for _, heads, rows in comparison_tables(document)
        ),
        (versions_table(document), VERSIONS_LEGEND),
        (measures_table(matrix_measures(document)), MEASURES_LEGEND),
    ):
        headers, rows = table
        if not rows:
            continue
        escaped = [[cell.replace("|", "\\|") for cell in row] for row in rows]
        lines += [
            "### Across cells" if not lines else "",
            "",
            tabulate(escaped, headers=headers, tablefmt="github", disable_numparse=True),
            "",
            legend + ".",
            "",
        ]
    return lines
