"""A self-contained HTML report of one or more results files, for people to read in a browser.

Pure apart from reading the kept transcripts the results name: it takes results documents (what
``--results`` writes) and returns one HTML page with everything inline (styles, plots, one small
script; no font, no request to any network), so the file can be mailed, attached to a CI run or
opened from disk. The page, top to bottom:

- **the header**: the suites, what produced the results (backend, models, ``claude`` CLI and
  toolkit versions), the date, the wall time, the total cost and the number of runs; an offline
  run's header says so in a badge and its notice, before anything else is read;
- **a card per layer** (:mod:`skilltest.report.overview`): the verdict counts, each arm's
  pooled pass rate (a pressure baseline's RED share) and mean score, the perfect runs, the lift
  over all runs with its interval, pass^k, the cost per passing run;
- **how to read this** (:mod:`skilltest.report.reading`): what each verdict means, intervals,
  RED baselines;
- **per layer**: a form that filters the scenarios by verdict and searches their ids
  (:mod:`skilltest.report.finder`, shown by the script), a table of the scenarios (verdict,
  figures with intervals, pass@k and pass^k, and with ``--against REF`` the verdict and delta
  against that revision), a forest plot of
  the deltas (:mod:`skilltest.report.plots`), what produced each results file; per scenario
  (:mod:`skilltest.report.expectations`): what the user says (the prompt and the follow-up
  turns), what is expected (patterns, tools, vetoes, when a run and the scenario pass, outcome
  checks with how often each arm passed them, the world's expectations), the pass rates and
  mean scores per arm, component bars, and every run (:mod:`skilltest.report.timeline`) in a
  ``<details>`` element with a link to its kept transcript, the with-skill runs beside the
  without-skill ones;
- **texts the runs share** (:mod:`skilltest.report.shared`): the skill text Claude Code added,
  once for every run that holds it.

Each scenario's heading is a ``<details>`` summary. A run's body is built only when it is opened
(:func:`~skilltest.report.markup.later`); in a layer of more than
:data:`~skilltest.report.finder.FOLD_ABOVE` scenarios, each scenario's body (its runs included)
and the forest plot are, and start folded. Without JavaScript all of it is there and open.

The styles are :mod:`skilltest.report.style`'s, inline; the script is
:mod:`skilltest.report.script`'s, the one the page's policy allows.

Transcripts and answers are untrusted (a model wrote them, a tool returned them): every text is
escaped, control characters and direction overrides shown as their codes, a link is only ever a
relative path or an ``http(s)`` address (:mod:`skilltest.report.markup`), and the page's
Content-Security-Policy forbids every script but its own (by its hash), inline handlers and
remote loads besides.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skilltest.report.expectations import about_of, ask, expectations, prompts_of
from skilltest.report.finder import FOLD_ABOVE, finder
from skilltest.report.markdown import LEGEND, NOUNS, TITLES, Document, cost_line
from skilltest.report.markup import chip, code_list, e, later
from skilltest.report.overview import Card, Header, card, header
from skilltest.report.plots import bar_chart, forest_plot
from skilltest.report.provenance import duration_text, fields, notice, provenance_of
from skilltest.report.reading import (
    CONSISTENCY,
    FIRING,
    GOOD,
    INTERVALS,
    LIFT,
    MEANINGS,
    RED,
    WARN,
    tone,
)
from skilltest.report.rows import LAYERS, Row, figure, layer_of, rows_of, versus_cell
from skilltest.report.script import CSP, SCRIPT
from skilltest.report.shared import SharedTexts
from skilltest.report.style import STYLE
from skilltest.report.timeline import ARM_LABELS, numbers, run_details
from skilltest.revision import is_revision_arm, summary_line

SCRIPT_NOTE = (
    '<p class="script-note" role="note">This page\'s script did not run (a server\'s '
    "Content-Security-Policy or an extension may block it): the filters are off, and the runs "
    "(and a large layer's scenarios) open empty. Open the file from disk, or with JavaScript "
    "turned off, to read them.</p>"
)
"""Shown only by a browser that runs scripts but not the page's (the script hides it)."""


def _items(layer: str, data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The raw scenarios (or trigger queries) of a document, in the order of its rows: the
    skill at each ``--against`` REF is no row of its own (each row reads it in its ``against``)."""
    if layer == "triggers":
        # A query's threshold is its suite's: the trigger table shows it beside the rate.
        return [
            {"threshold": suite.get("threshold"), **query}
            for suite in data.get("suites") or []
            if not is_revision_arm(str(suite.get("variant")))
            for query in suite.get("queries") or []
        ]
    return list(data.get("scenarios") or [])


def _arm_rates(layer: str, item: Mapping[str, Any]) -> str:
    cells = []
    for arm in ("with_skill", "without_skill", "previous"):
        data = item.get(arm)
        if not isinstance(data, Mapping):
            continue
        figures = []
        if layer == "pressure" and data.get("pass_rate") is not None:
            figures.append(e(f"pass {100 * data['pass_rate']:.0f}%"))
        if layer == "pressure" and data.get("red_rate") is not None:
            red = f"RED {100 * data['red_rate']:.0f}%"
            wanted = data["red_rate"] >= 0.5
            figures.append(chip(f"{red} (as wanted)" if wanted else red, GOOD if wanted else WARN))
        if layer == "scenarios" and isinstance(data.get("passes"), int):
            scored = data.get("scored", data.get("runs", 0))
            share = (
                f" ({100 * data['pass_rate']:.0f}%)" if data.get("pass_rate") is not None else ""
            )
            figures.append(e(f"passed {data['passes']}/{scored}{share}"))
        if data.get("mean_score") is not None:
            figures.append(e(f"mean score {data['mean_score']:.2f}"))
        if data.get("pass_at_k") is not None:
            figures.append(e(f"pass@{data.get('k')} {100 * data['pass_at_k']:.0f}%"))
        if data.get("pass_hat_k") is not None:
            figures.append(e(f"pass^{data.get('k')} {100 * data['pass_hat_k']:.0f}%"))
        count = data.get("runs", 0)
        runs = f"{count} run{'' if count == 1 else 's'}"
        cells.append(
            f"<tr><td>{e(ARM_LABELS.get(arm, arm))}</td><td>{e(runs)}</td>"
            f"<td>{', '.join(figures) or '-'}</td></tr>"
        )
    if not cells:
        return ""
    return (
        '<div class="scroll"><table class="arms"><tr><th>arm</th><th>runs</th><th>rates</th></tr>'
        + "".join(cells)
        + "</table></div>"
    )


def _outcome(layer: str, item: Mapping[str, Any]) -> str:
    rates = _arm_rates(layer, item)
    return f'<div class="outcome"><h4>What the runs did</h4>{rates}</div>' if rates else ""


def _pass_k(item: Mapping[str, Any]) -> str:
    arm = item.get("with_skill")
    if not isinstance(arm, Mapping) or arm.get("pass_at_k") is None:
        return "-"
    return f"{100 * arm['pass_at_k']:.0f}% / {100 * (arm.get('pass_hat_k') or 0):.0f}%"


def _verdict_chip(row: Row) -> str:
    return chip(row.verdict, tone(row.layer, row.verdict, failed=row.failed))


def _scenario_section(
    layer: str,
    index: int,
    row: Row,
    item: Mapping[str, Any],
    *,
    cwd: Path,
    link_from: Path,
    shared: SharedTexts,
    folded: bool,
) -> str:
    """A scenario: its heading (a ``<details>`` summary), then what it asks and expects, its
    figures and its runs. In a ``folded`` layer all of that is made when opened; otherwise
    each run's body is."""
    charts = ""
    arm_components = {
        arm: numbers(item[arm]["components"])
        for arm in ("with_skill", "without_skill")
        if isinstance(item.get(arm), Mapping) and isinstance(item[arm].get("components"), Mapping)
    }
    # A component the scenario leaves out has no value in any arm: it is not drawn.
    defined = {
        name for values in arm_components.values() for name, v in values.items() if v is not None
    }
    for arm, values in arm_components.items():
        shown = {name: value for name, value in values.items() if name in defined}
        charts += bar_chart(shown, title=f"components, {arm.replace('_', ' ')} (mean)")
    runs = [run for run in item.get("runs") or [] if isinstance(run, Mapping)]
    reasons = "".join(f"<li>{e(reason)}</li>" for reason in row.reasons)
    title = about_of(item).get("name") or item.get("name")
    prompts = prompts_of(layer, item)
    body = (
        f'<div class="scenario-grid"><div>{ask(layer, item)}{_outcome(layer, item)}</div>'
        + f"{expectations(layer, item)}</div>"
        + (f'<div class="charts">{charts}</div>' if charts else "")
        + _runs(
            layer,
            runs,
            cwd=cwd,
            link_from=link_from,
            item=item,
            prompts=prompts,
            shared=shared,
            made_when_opened=not folded,
        )
    )
    return (
        f'<section class="scenario" id="{e(layer)}-{index}"><details class="about" open>'
        f'<summary><h3><span class="name">{e(row.name)}</span> {_verdict_chip(row)}</h3>'
        "</summary>"
        + (f'<p class="title">{e(title)}</p>' if title else "")
        + (f'<ul class="reasons">{reasons}</ul>' if reasons else "")
        + (later(body) if folded else body)
        + "</details></section>"
    )


def _runs(
    layer: str,
    runs: Sequence[Mapping[str, Any]],
    *,
    cwd: Path,
    link_from: Path,
    item: Mapping[str, Any],
    prompts: Sequence[str],
    shared: SharedTexts,
    made_when_opened: bool,
) -> str:
    """Every run, one column per arm (with skill beside without), each opening on a click."""
    if not runs:
        return ""
    by_arm: dict[str, list[Mapping[str, Any]]] = {}
    for run in runs:
        by_arm.setdefault(str(run.get("arm") or ""), []).append(run)
    columns = []
    for arm, group in by_arm.items():
        label = ARM_LABELS.get(arm, arm) or "runs"
        columns.append(
            f'<div class="arm-runs"><h4>{e(label)}: {len(group)} '
            f"run{'s' if len(group) != 1 else ''}</h4>"
            + "".join(
                run_details(
                    layer,
                    run,
                    cwd=cwd,
                    item=item,
                    prompts=prompts,
                    link_from=link_from,
                    shared=shared,
                    made_when_opened=made_when_opened,
                )
                for run in group
            )
            + "</div>"
        )
    return f'<div class="runs">{"".join(columns)}</div>'


def offline_notices(documents: Sequence[Document]) -> str:
    """The page's first words for every offline document (or one of unknown origin): its
    numbers come from a scripted stand-in and say nothing about a real model. Documents with
    the same notice share it, naming each file."""
    sources: dict[str, list[str]] = {}
    for document in documents:
        said = notice(provenance_of(document.data))
        if said:
            named = sources.setdefault(said, [])
            if document.source != "-":
                named.append(document.source)
    notes = []
    for said, named in sources.items():
        head, _, rest = said.partition(": ")
        source = f" ({', '.join(dict.fromkeys(named))})" if named else ""
        notes.append(
            f'<p class="offline" role="note"><strong>{e(head)}</strong>{e(source)}: {e(rest)}</p>'
        )
    return "".join(notes)


def provenance_table(document: Document) -> str:
    """What produced a document: backend, model, versions, date, wall time, suites, command
    line, run id."""
    provenance = provenance_of(document.data)
    shown = fields(provenance)
    shown.insert(5, ("duration", duration_text(provenance.duration_s)))
    cells = "".join(f"<tr><th>{e(name)}</th><td>{e(value)}</td></tr>" for name, value in shown)
    caption = f"<caption>{e(document.source)}</caption>" if document.source != "-" else ""
    return f'<table class="provenance">{caption}{cells}</table>'


TRIGGER_LEGEND = (
    "expected: whether the query should make the skill fire; fired: the runs that loaded the "
    "skill, of those scored; firing rate: their share, with the exact interval its verdict "
    "reads against the suite's threshold"
)
"""What the trigger table's columns say (the Markdown report's trigger table has fewer)."""


def _verdict_table(
    layer: str,
    pairs: Sequence[tuple[Row, Mapping[str, Any]]],
    refs: Sequence[str],
    versus_head: str,
) -> str:
    """The pressure or scenario table: with and without the skill, the delta, pass^k."""
    table = [
        '<div class="scroll"><table class="verdicts"><tr><th>scenario</th><th>verdict</th>'
        f"<th>with skill</th><th>without skill</th><th>delta</th>{versus_head}<th>K</th>"
        "<th>pass@k / pass^k</th><th>reasons</th></tr>"
    ]
    for index, (row, item) in enumerate(pairs):
        css = "failed" if row.failed else "passed"
        table.append(
            f'<tr class="{css}" data-verdict="{e(row.verdict)}">'
            f'<td><a href="#{e(layer)}-{index}">{e(row.name)}</a></td>'
            f'<td class="verdict">{_verdict_chip(row)}</td>'
            f'<td class="fig">{e(figure(row.with_skill, percent=row.percent))}</td>'
            f'<td class="fig">{e(figure(row.without_skill, percent=row.percent))}</td>'
            f'<td class="fig">{e(figure(row.delta, percent=row.percent, signed=True))}</td>'
            + (f"<td>{e(versus_cell(row, named=len(refs) > 1))}</td>" if refs else "")
            + f'<td>{row.k}</td><td class="fig">{e(_pass_k(item))}</td>'
            f"<td>{e('; '.join(row.reasons))}</td></tr>"
        )
    table.append("</table></div>")
    return "".join(table)


def _trigger_table(
    pairs: Sequence[tuple[Row, Mapping[str, Any]]], refs: Sequence[str], versus_head: str
) -> str:
    """The trigger table: per query, whether it should fire, how often it fired with the skill
    installed (its interval, the threshold it is read against) and the verdict. A trigger run
    has no baseline arm, so there is no without-skill, delta or pass^k column."""
    table = [
        '<div class="scroll"><table class="verdicts"><tr><th>query</th>'
        "<th>verdict</th><th>expected</th><th>fired</th><th>firing rate [interval]</th>"
        f"<th>threshold</th>{versus_head}<th>K</th><th>reasons</th></tr>"
    ]
    for index, (row, item) in enumerate(pairs):
        css = "failed" if row.failed else "passed"
        should = item.get("should_trigger")
        expected = "-" if should is None else "fire" if should else "no fire"
        fired = (
            f"{item['fired']}/{item['scored']}"
            if isinstance(item.get("fired"), int) and isinstance(item.get("scored"), int)
            else "-"
        )
        threshold = item.get("threshold")
        shown_threshold = f"{100 * threshold:.0f}%" if isinstance(threshold, int | float) else "-"
        table.append(
            f'<tr class="{css}" data-verdict="{e(row.verdict)}">'
            f'<td><a href="#triggers-{index}">{e(row.name)}</a></td>'
            f'<td class="verdict">{_verdict_chip(row)}</td>'
            f"<td>{e(expected)}</td><td>{e(fired)}</td>"
            f'<td class="fig">{e(figure(row.with_skill, percent=True))}</td>'
            f"<td>{e(shown_threshold)}</td>"
            + (f"<td>{e(versus_cell(row, named=len(refs) > 1))}</td>" if refs else "")
            + f"<td>{row.k}</td><td>{e('; '.join(row.reasons))}</td></tr>"
        )
    table.append("</table></div>")
    return "".join(table)


def _layer_section(
    layer: str,
    documents: Sequence[Document],
    *,
    cwd: Path,
    link_from: Path,
    shared: SharedTexts,
) -> str:
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
    refs = list(dict.fromkeys(a.ref for row in rows for a in row.againsts))
    versus_head = ""
    if refs:
        versus_head = f"<th>{e(f'vs {refs[0]}' if len(refs) == 1 else 'vs previous revision')}</th>"
    table = (
        _trigger_table(pairs, refs, versus_head)
        if layer == "triggers"
        else _verdict_table(layer, pairs, refs, versus_head)
    )
    against_lines = [
        summary_line(ref, [a.verdict for r in rows for a in r.againsts if a.ref == ref])
        for ref in refs
    ]
    count_text = ", ".join(f"{number} {verdict}" for verdict, number in sorted(counts.items()))
    sources = ", ".join(document.source for document in documents if document.source != "-")
    plot_title = (
        "firing rate with its interval"
        if layer == "triggers"
        else "delta with its interval"
        if any(not row.delta.empty for row in rows)
        else "with-skill rate with its interval"
    )
    incomplete = any(not document.data.get("complete", True) for document in documents)
    folded = len(rows) > FOLD_ABOVE
    plot = forest_plot(rows, title=plot_title)
    return (
        f'<section class="layer" id="layer-{e(layer)}"{" data-fold" if folded else ""}>'
        '<div class="panel">'
        f"<h2>{e(TITLES[layer])}</h2>"
        + (
            '<p class="warning"><strong>incomplete</strong>: the run stopped before every '
            "scenario finished</p>"
            if incomplete
            else ""
        )
        + f'<p class="counts">{len(rows)} {e(NOUNS[layer][len(rows) != 1])}: {e(count_text)}; '
        f"{failing} failing</p>"
        + "".join(f'<p class="counts against">{e(line)}</p>' for line in against_lines)
        + (
            f'<p class="counts cost">{e(cost)}</p>'
            if layer == "scenarios" and (cost := cost_line(documents))
            else ""
        )
        + f'<p class="note">{e(TRIGGER_LEGEND if layer == "triggers" else LEGEND[layer])}.'
        + f"{e(f' From {sources}.' if sources else '')}</p>"
        + finder(layer, NOUNS[layer][1], sorted(counts.items()))
        + table
        + (_folded_plot(plot, plot_title) if folded and plot else plot)
        + '<details class="produced"><summary>what produced these results</summary>'
        + "".join(provenance_table(document) for document in documents)
        + "</details></div>"
        + "".join(
            _scenario_section(
                layer,
                index,
                row,
                item,
                cwd=cwd,
                link_from=link_from,
                shared=shared,
                folded=folded,
            )
            for index, (row, item) in enumerate(pairs)
        )
        + "</section>"
    )


def _folded_plot(plot: str, title: str) -> str:
    """A large layer's forest plot (a row per scenario), made when opened."""
    return (
        f'<details class="plot" open><summary>forest plot: {e(title)}</summary>'
        f"{later(plot)}</details>"
    )


def _header(facts: Header, documents: Sequence[Document]) -> str:
    if facts.offline:
        badge = '<span class="badge offline">offline: scripted stand-in</span>'
    elif facts.unknown:
        badge = '<span class="badge offline">origin unknown: maybe a scripted stand-in</span>'
    else:
        badge = '<span class="badge live">live</span>'
    suites = code_list(facts.suites) or "not recorded"
    cells = "".join(
        f'<div class="fact"><dt>{e(name)}</dt><dd>{e(value)}'
        + (f'<span class="sub">{e(note)}</span>' if note else "")
        + "</dd></div>"
        for name, value, note in facts.facts
    )
    return (
        '<header class="panel page-head">'
        f'<div class="title-row"><h1>skilltest report</h1>{badge}</div>'
        f'<p class="suites">{"suite" if len(facts.suites) == 1 else "suites"}: {suites}</p>'
        f'<dl class="facts">{cells}</dl>' + offline_notices(documents) + "</header>"
    )


def _card(summary: Card) -> str:
    counts = "".join(
        chip(f"{number} {verdict}", tone(summary.layer, verdict, failed=None))
        for verdict, number in summary.counts
    )
    figures = "".join(f"<dt>{e(name)}</dt><dd>{e(value)}</dd>" for name, value in summary.figures)
    failing = f'<span class="failing">{summary.failing} failing</span>' if summary.failing else ""
    return (
        f'<section class="card{" failing" if summary.failing else ""}" '
        f'aria-label="{e(summary.title)} summary">'
        f'<h3><a href="#layer-{e(summary.layer)}">{e(summary.title)}</a></h3>'
        f'<p class="big">{e(summary.items)}{failing}</p>'
        f'<div class="chips">{counts}</div><dl class="figures">{figures}</dl></section>'
    )


def _how_to_read(layers: Sequence[str]) -> str:
    compared = any(layer in layers for layer in ("pressure", "scenarios"))
    paragraphs = [
        *([INTERVALS, LIFT] if compared else []),
        *([RED] if "pressure" in layers else []),
        *([CONSISTENCY] if compared else []),
        *([FIRING] if "triggers" in layers else []),
    ]
    legends = "".join(
        f"<div><h4>{e(TITLES[layer])}</h4><dl>"
        + "".join(
            f"<dt>{chip(verdict, shade)}</dt><dd>{e(meaning)}</dd>"
            for verdict, shade, meaning in MEANINGS[layer]
        )
        + "</dl></div>"
        for layer in layers
    )
    example = chip("RED (as wanted)", GOOD) if "pressure" in layers else ""
    return (
        '<details class="panel howto" open><summary>How to read this</summary>'
        + '<div class="prose">'
        + "".join(f"<p>{e(text)}</p>" for text in paragraphs)
        + (f"<p>A pressure baseline run that fails shows as {example}.</p>" if example else "")
        + f'</div><div class="legend">{legends}</div></details>'
    )


def render_html(documents: Sequence[Document], *, cwd: Path, link_from: Path | None = None) -> str:
    """The HTML report of results ``documents`` (any layers; shards of one layer combined).

    Args:
        documents: The results documents with where each came from.
        cwd: The folder transcript paths in the results are relative to.
        link_from: The folder the page is written to: links to the kept transcripts are
            relative to it (``cwd`` when not given).

    Raises:
        InputError: a document is not a results file of a known layer.
    """
    by_layer: dict[str, list[Document]] = {}
    for document in documents:
        by_layer.setdefault(layer_of(document.data, document.source), []).append(document)
    layers = [layer for layer in LAYERS if layer in by_layer]
    labelled = [(layer, document) for layer in layers for document in by_layer[layer]]
    cards = []
    for layer in layers:
        rows = [row for d in by_layer[layer] for row in rows_of(d.data, d.source)]
        cards.append(_card(card(layer, by_layer[layer], rows)))
    shared = SharedTexts()
    sections = [
        _layer_section(layer, by_layer[layer], cwd=cwd, link_from=link_from or cwd, shared=shared)
        for layer in layers
    ]
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        "<title>skilltest report</title>"
        f'<style>{STYLE}</style><script>{SCRIPT}</script></head><body><main class="page">'
        + _header(header(labelled), documents)
        + SCRIPT_NOTE
        + f'<div class="cards">{"".join(cards)}</div>'
        + _how_to_read(layers)
        + "".join(sections)
        + shared.section()
        + "</main></body></html>\n"
    )
