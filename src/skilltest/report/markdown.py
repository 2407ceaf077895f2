"""A Markdown summary of one or more results files, for pull requests and CI step summaries.

Pure: it takes results documents (what ``--results`` writes) and returns text, so a run that
just ended and ``skilltest report`` on files written earlier give the same summary. Per layer:
the verdict counts, the failing scenarios with their reasons, and one table row per scenario
(verdict, with and without the skill with their intervals, the delta, K, links to the kept
transcripts). Links are relative to the folder of the Markdown file, so they work where the
file is read (a repository browser, a CI artifact unpacked as a whole).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from skilltest.errors import InputError
from skilltest.report.files import check_output, write_report
from skilltest.report.provenance import fields, notice, provenance_of
from skilltest.report.rows import LAYERS, Row, figure, layer_of, merge, rows_of, versus_cell
from skilltest.report.text import cost_per_pass, escape_controls
from skilltest.revision import summary_line
from skilltest.stats.family import suite_wide_lines

NOUNS = {
    "pressure": ("scenario", "scenarios"),
    "scenarios": ("scenario", "scenarios"),
    "triggers": ("query", "queries"),
}
"""Per layer, what a row is: one, several."""
TITLES = {
    "pressure": "skill pressure",
    "scenarios": "scenarios",
    "triggers": "triggers",
}
LEGEND = {
    "pressure": "with skill: pass rate; without skill: baseline pass rate (not RED); "
    "delta: the lift",
    "scenarios": "with and without skill: pass rates, or mean rubric scores for a scenario "
    "that decides by them (decide_by: mean), the figures its verdict reads; delta: with minus "
    "without",
    "triggers": "fired: the share of the query's runs in which the skill fired, with the exact "
    "interval its verdict reads against the suite's threshold",
}
TRANSCRIPT_LINKS = 6
"""Most transcript links in one table cell; the rest are counted."""


@dataclass(frozen=True)
class Document:
    """One results file read back."""

    source: str
    """Where it came from, for the report (a path, or ``-`` for the run that just ended)."""
    data: dict[str, Any]
    """The results document, as ``--results`` writes it."""


_SPECIAL = re.compile(r"([\\`*_<>|])|(?<=[\]!])([(\[])")
"""Markdown's characters that make code, emphasis, HTML, autolinks or table cells, and the
bracket or parenthesis after ``]`` or ``!`` that makes a link or an image (a bracket alone, as
in an interval, makes nothing)."""


def _cell(text: object) -> str:
    """Text shown as written, on one line, wherever it goes (a table cell, a list item): what a
    model, an agent or a results file says cannot make a link, an image, HTML or a new cell."""
    return _SPECIAL.sub(lambda m: "\\" + m.group(), " ".join(str(text).split()))


def _code(text: object) -> str:
    """Text as inline code, on one line: a fence longer than any run of backticks inside it,
    and pipes escaped (a table splits cells on them even inside code)."""
    flat = " ".join(str(text).split()).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall("`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


markdown_text = _cell
"""Text shown as written in Markdown (a comparison's cells and lines, as the report's)."""
markdown_code = _code
"""Text as Markdown inline code (a comparison's scenario names and files, as the report's)."""


def _link(path: str, *, link_from: Path, cwd: Path) -> str:
    """A transcript's path relative to the Markdown file, percent-encoded: a path from a results
    file cannot become another kind of link (``javascript:``, ``https:``) or end the link."""
    target = Path(path) if Path(path).is_absolute() else cwd / path
    return quote(Path(os.path.relpath(target, link_from)).as_posix(), safe="/")


def _transcripts(row: Row, *, link_from: Path, cwd: Path) -> str:
    links = [
        f"[{_cell(t.label)}]({_link(t.path, link_from=link_from, cwd=cwd)})"
        for t in row.transcripts[:TRANSCRIPT_LINKS]
    ]
    more = len(row.transcripts) - TRANSCRIPT_LINKS
    return " ".join(links + ([f"+{more} more"] if more > 0 else [])) or "-"


def _counts(layer: str, rows: Sequence[Row]) -> str:
    verdicts = Counter(row.verdict for row in rows)
    shown = ", ".join(f"{count} {_cell(verdict)}" for verdict, count in verdicts.items())
    failed = sum(1 for row in rows if row.failed)
    noun = NOUNS[layer][0 if len(rows) == 1 else 1]
    return f"**{len(rows)} {noun}**: {shown}; {len(rows) - failed} passed, {failed} failed"


def cost_line(documents: Sequence[Document]) -> str:
    """Per arm, over every scenario of the documents: the cost per passing run; empty when no
    run reported a cost (results files of older versions, backends without one)."""
    parts, known = [], False
    for arm, label in (("with_skill", "with skill"), ("without_skill", "without skill")):
        arms = [
            scenario[arm]
            for d in documents
            for scenario in d.data.get("scenarios") or []
            if scenario.get(arm) and scenario[arm].get("runs")
        ]
        if arms:
            costs = [float(a["cost_usd"]) for a in arms if a.get("cost_usd") is not None]
            known = known or bool(costs)
            parts.append(cost_per_pass(label, costs, sum(int(a.get("passes") or 0) for a in arms)))
    return "cost per passing run: " + "; ".join(parts) if known else ""


def provenance_lines(documents: Sequence[Document]) -> list[str]:
    """Per document: the offline notice (an offline run's, or one of unknown origin) as a
    quote, then what produced it: backend, model, versions, date, suites, command line."""
    lines = []
    several = len(documents) > 1
    for document in documents:
        provenance = provenance_of(document.data)
        named = f" ({_code(document.source)})" if several and document.source != "-" else ""
        said = notice(provenance)
        if said:
            head, _, rest = said.partition(": ")
            lines += [f"> **{head}**{named}: {rest}", ""]
        shown = "; ".join(
            f"{name} {_code(value)}" if name in ("command", "suites") else f"{name} {_cell(value)}"
            for name, value in fields(provenance)
        )
        lines += [f"produced by{named}: {shown}", ""]
    return lines


def how_scored(documents: Sequence[Document]) -> list[str]:
    """What a scenario run did other than by default, each said once: its baseline
    (``--baseline bundled``) and its scorings (``scoring: honeycomb``)."""
    said: list[str] = []
    for document in documents:
        baseline, means = document.data.get("baseline"), document.data.get("baseline_means")
        if isinstance(baseline, str) and baseline != "clean":
            said.append(f"baseline: {baseline}" + (f" ({means})" if means else ""))
        for item in document.data.get("scenarios") or []:
            about = item.get("scenario") if isinstance(item, Mapping) else None
            scoring = about.get("scoring") if isinstance(about, Mapping) else None
            if isinstance(scoring, str) and scoring != "skilltest":
                means = about.get("scoring_means") if isinstance(about, Mapping) else None
                said.append(f"scoring: {scoring}" + (f" ({means})" if means else ""))
    return list(dict.fromkeys(said))


def _section(layer: str, documents: Sequence[Document], *, link_from: Path, cwd: Path) -> str:
    rows = merge([row for d in documents for row in rows_of(d.data, d.source)])
    lines = [f"## skilltest {TITLES[layer]}", ""]
    sources = [d.source for d in documents if d.source != "-"]
    if sources:
        lines += ["from " + ", ".join(_code(s) for s in sources), ""]
    lines += provenance_lines(documents)
    if any(not d.data.get("complete", True) for d in documents):
        lines += ["> **incomplete**: the run stopped before every scenario finished", ""]
    lines += [_counts(layer, rows), ""]
    # Shards or layers run against different revisions: one count per revision.
    refs = list(dict.fromkeys(row.against.ref for row in rows if row.against))
    for ref in refs:
        moves = [row.against.verdict for row in rows if row.against and row.against.ref == ref]
        lines += [_cell(summary_line(ref, moves)), ""]
    if layer == "scenarios":
        items = [item for d in documents for item in d.data.get("scenarios") or []]
        if len(items) > 1:
            lines += [line for held in suite_wide_lines(items) for line in (_cell(held), "")]
    if layer == "scenarios":
        lines += [line for said in how_scored(documents) for line in (_cell(said), "")]
    cost = cost_line(documents) if layer == "scenarios" else ""
    if cost:
        lines += [cost, ""]
    failing = [row for row in rows if row.failed]
    if failing:
        lines += ["### Failing", ""]
        for row in failing:
            why = "; ".join(row.reasons) or "no reason recorded"
            lines.append(f"- **{_cell(row.name)}** ({_cell(row.verdict)}): {_cell(why)}")
        lines.append("")
    for ref in refs:
        regressed = [
            row
            for row in rows
            if row.against and row.against.ref == ref and row.against.verdict == "regressed"
        ]
        if regressed:
            lines += [f"### Regressed against {_cell(ref)}", ""]
            for row in regressed:
                assert row.against is not None
                delta = figure(row.against.delta, percent=row.percent, signed=True)
                lines.append(
                    f"- **{_cell(row.name)}** ({_cell(row.verdict)}): {delta} against {_cell(ref)}"
                )
            lines.append("")
    compared = layer != "triggers"
    headers = ["", "scenario" if compared else "query", "verdict"]
    headers += ["with skill", "without skill", "delta"] if compared else ["fired"]
    if refs:
        headers.append(f"vs {_cell(refs[0])}" if len(refs) == 1 else "vs previous revision")
    headers += ["K", "transcripts"]
    lines += ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    for row in rows:
        cells = ["❌" if row.failed else "✅", _code(row.name), _cell(row.verdict)]
        cells.append(figure(row.with_skill, percent=row.percent))
        if compared:
            cells.append(figure(row.without_skill, percent=row.percent))
            cells.append(figure(row.delta, percent=row.percent, signed=True))
        if refs:
            cells.append(_cell(versus_cell(row, named=len(refs) > 1)))
        cells += [str(row.k), _transcripts(row, link_from=link_from, cwd=cwd)]
        lines.append("| " + " | ".join(cells) + " |")
    adaptive = " (with -k auto, the level of the look that decided)"
    lines += ["", f"{LEGEND[layer]}; brackets: 95% intervals{adaptive}"]
    if refs:
        lines.append(
            "vs REF: with skill minus the skill at REF [the interval the verdict reads: exact for "
            "pass rates, a betting sequence for mean scores], read against the band of the "
            "with-versus-without verdict"
        )
    return "\n".join(lines)


def render_markdown(documents: Sequence[Document], *, link_from: Path, cwd: Path) -> str:
    """The summary of ``documents`` (any layers, shards of one layer combined), one section per
    layer in the order pressure, scenarios, triggers.

    Args:
        documents: Results documents with where each came from.
        link_from: The folder of the Markdown file: transcript links are relative to it.
        cwd: The folder the runs were started from (results files record transcript paths
            relative to it).

    Raises:
        InputError: a document is not a results file of a known layer.
    """
    by_layer: dict[str, list[Document]] = {}
    for document in documents:
        by_layer.setdefault(layer_of(document.data, document.source), []).append(document)
    sections = [
        _section(layer, by_layer[layer], link_from=link_from, cwd=cwd)
        for layer in LAYERS
        if layer in by_layer
    ]
    # No control character reaches a file a CI log may print, or a reader's terminal.
    return escape_controls("\n\n".join(sections)) + "\n"


def write_summary(
    document: dict[str, Any],
    *,
    markdown: Path | None,
    step_summary: str | None,
    cwd: Path,
) -> Path | None:
    """Writes the summary of a run that just ended: to ``markdown`` (``--markdown FILE``,
    replaced), else appended to ``step_summary`` (``GITHUB_STEP_SUMMARY``, which GitHub Actions
    shows on the job's page; its folder is the runner's, so links there are relative to the
    folder the run started from, as the results file records them). Neither: nothing.

    Returns:
        The file written, or ``None``.

    Raises:
        InputError: the file cannot be written.
    """
    if markdown is not None:
        text = render_markdown(
            [Document("-", document)], link_from=(cwd / markdown).parent, cwd=cwd
        )
        write_report(markdown, text)
        return markdown
    if not step_summary:
        return None
    text = render_markdown([Document("-", document)], link_from=cwd, cwd=cwd)
    return append_to_step_summary(step_summary, text)


def append_to_step_summary(step_summary: str, text: str) -> Path:
    """Appends ``text`` to the job summary file ``step_summary`` (``GITHUB_STEP_SUMMARY``).

    Raises:
        InputError: the file cannot be written.
    """
    path = check_output(Path(step_summary), location=f"GITHUB_STEP_SUMMARY={step_summary}")
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    except OSError as exc:
        raise InputError(
            f"cannot append the summary: {exc.strerror or exc}",
            location=f"GITHUB_STEP_SUMMARY={step_summary}",
            fix="unset GITHUB_STEP_SUMMARY or point it at a writable file",
        ) from exc
    return path
