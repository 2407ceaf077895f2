"""What ``skilltest triggers`` prints and writes: rows per query, suite metrics, misses and
false triggers, differences between two descriptions or against a previous revision, the results
file and JUnit cases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from skilltest.report.files import RESULTS_SCHEMA_VERSION
from skilltest.report.junit import JUnitCase
from skilltest.report.provenance import Provenance, with_ids
from skilltest.report.text import inconclusive_line, k_cell, shorten
from skilltest.revision import BAND, PREVIOUS, is_revision_arm, summary_line
from skilltest.stats import Interval
from skilltest.transcript.origin import attribution
from skilltest.triggers.verdict import QueryResult, SuiteResult, compare
from skilltest.triggers.watch import ENDINGS

LAYER = "triggers"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.0f}%"


def rate_cell(count: int, runs: int, interval: Interval) -> str:
    """``2/3 67% [9%–99%]``: a count, its rate and its interval."""
    if runs == 0:
        return "-"
    return (
        f"{count}/{runs} {_percent(interval.value)} "
        f"[{_percent(interval.low)}–{_percent(interval.high)}]"
    )


def difference_cell(interval: Interval) -> str:
    """``-67% [-91%, -4%]``: a difference and its exact interval."""
    if interval.empty:
        return "-"
    return f"{_signed(interval.value)} [{_signed(interval.low)}, {_signed(interval.high)}]"


def _columns(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in (header, ["-" * width for width in widths], *rows)
    ]
    return "\n".join(lines)


def endings_cell(query: QueryResult) -> str:
    """How the runs ended, when not every run ended on its own or by firing."""
    counts = query.endings
    if not (counts.keys() - {"fired", "not-fired"}):
        return ""
    return ", ".join(f"{counts[e]} {e}" for e in ENDINGS if counts.get(e))


TABLE_LEGEND = (
    "fired: runs that invoked the skill / scored runs, rate [the exact interval the verdict "
    "reads: 95%, under -k auto the level its look spends]\n"
    "verdict: pass, miss or false-trigger when that interval lies wholly on one side of the "
    "threshold, inconclusive while it straddles it; budget and timeout runs count as not fired, "
    "error runs are not scored"
)


def render_table(results: Sequence[SuiteResult]) -> str:
    """One row per query: expected, runs taken, fired k/n [interval], how runs ended when
    unusual, and the verdict."""
    rows = []
    for suite in results:
        label = f" ({suite.variant})" if suite.variant != "current" else ""
        for query in suite.queries:
            rows.append(
                [
                    f"{suite.skill}/{query.query.id}{label}",
                    "fire" if query.query.should_trigger else "no fire",
                    k_cell(query.k, query.repetitions),
                    rate_cell(query.fired, query.scored, query.rate),
                    endings_cell(query),
                    query.result,
                ]
            )
    header = ["query", "expected", "K", "fired", "ended", "verdict"]
    return _columns(header, rows) + "\n" + TABLE_LEGEND


def render_suite_line(suite: SuiteResult) -> str:
    """Precision, recall and accuracy with their counts and intervals, and the tally."""
    c = suite.confusion
    tally = {
        name: sum(query.result == name for query in suite.queries)
        for name in ("pass", "miss", "false-trigger", "inconclusive", "error")
    }
    shown = ", ".join(f"{count} {name}" for name, count in tally.items() if count)
    stops = {
        ending: sum(q.endings.get(ending, 0) for q in suite.queries)
        for ending in ("budget", "timeout", "error")
    }
    stopped = ", ".join(f"{count} {name}" for name, count in stops.items() if count)
    label = f" ({suite.variant} description)" if suite.variant != "current" else ""
    if suite.variant == PREVIOUS:
        label = " (previous revision)"
    elif is_revision_arm(suite.variant):
        label = f" (revision {suite.variant})"
    return (
        f"{suite.skill}{label}: precision {rate_cell(c.tp, c.tp + c.fp, c.precision)}, "
        f"recall {rate_cell(c.tp, c.tp + c.fn, c.recall)}, "
        f"accuracy {rate_cell(c.tp + c.tn, c.tp + c.tn + c.fp + c.fn, c.accuracy)}\n"
        f"  {len(suite.queries)} queries: {shown or 'none finished'}; per run TP {c.tp}, "
        f"FP {c.fp}, FN {c.fn}, TN {c.tn}" + (f"; runs stopped: {stopped}" if stopped else "")
    )


def _example_run(query: QueryResult) -> str:
    """One run that went the wrong way, with its first tool calls."""
    wanted = ("not-fired", "budget", "timeout") if query.query.should_trigger else ("fired",)
    run = next((r for r in query.runs if r.ended in wanted), None) or next(iter(query.runs), None)
    if run is None:
        return "  no run"
    calls = ", ".join(call.short() for call in run.first_calls) or "no tool calls"
    line = f"  run {run.rep + 1} ({run.ended}): {calls}"
    if run.ended == "error" and run.reason:
        line += f"\n    {shorten(run.reason, 160)}"
    offline = attribution(run.emulator_rules)
    if offline:
        line += f"\n    {offline}"
    return line


def render_failures(results: Sequence[SuiteResult], *, allow_inconclusive: bool = False) -> str:
    """The false triggers and the misses (each with one run's first tool calls), the queries in
    error, and the inconclusive ones with the runs that would likely decide them."""
    blocks = []
    for title, kind in (
        ("false triggers (fired too often, should not have)", "false-trigger"),
        ("misses (did not fire often enough, should have)", "miss"),
        ("errors (fewer than half of the runs could be scored)", "error"),
        ("inconclusive (the interval straddles the threshold: more runs would decide)", None),
    ):
        lines = []
        for suite in results:
            label = f" ({suite.variant})" if suite.variant != "current" else ""
            for query in suite.queries:
                if query.result != (kind or "inconclusive"):
                    continue
                lines.append(f"{suite.skill}/{query.query.id}{label}: {query.reason}")
                lines.append(f"  {shorten(query.query.query, 80)!r}")
                if kind is not None:
                    lines.append(_example_run(query))
        if lines:
            blocks.append(f"{title}:\n" + "\n".join(lines))
    undecided = sum(query.inconclusive for suite in results for query in suite.queries)
    if undecided:
        blocks.append(inconclusive_line(undecided, allowed=allow_inconclusive))
    return "\n\n".join(blocks)


def render_misses(results: Sequence[SuiteResult]) -> str:
    """Per query whose runs the cassettes could not answer, the first miss in full (what
    differs from the nearest recorded request) and how many runs missed; empty when none did."""
    from skilltest.replay.match import MISS_PREFIX

    blocks = []
    for suite in results:
        label = f" ({suite.variant})" if suite.variant != "current" else ""
        for query in suite.queries:
            missed = [
                run
                for run in query.runs
                if run.ended == "error" and (run.reason or "").startswith(MISS_PREFIX)
            ]
            if missed:
                runs = f"{len(missed)} of {len(query.runs)} runs"
                blocks.append(f"{suite.skill}/{query.query.id}{label} ({runs}): {missed[0].reason}")
    return ("replay misses:\n" + "\n".join(blocks)) if blocks else ""


def render_comparison(current: SuiteResult, other: SuiteResult) -> str:
    """Per query and per suite: the rate under each description and the difference."""
    rows = []
    by_id = {query.query.id: query for query in current.queries}
    others = {query.query.id: query for query in other.queries}
    for diff in compare(current, other):
        if diff.name in by_id and diff.name in others:
            a, b = by_id[diff.name], others[diff.name]
            rows.append(
                [
                    f"{current.skill}/{diff.name}",
                    "fire" if a.query.should_trigger else "no fire",
                    # Each query's rate as its verdict reads it, as in the table above.
                    rate_cell(a.fired, a.scored, a.rate),
                    rate_cell(b.fired, b.scored, b.rate),
                    difference_cell(diff.difference),
                ]
            )
        else:
            rows.append(
                [
                    f"{current.skill} {diff.name}",
                    "",
                    _metric_cell(current, diff.name, diff.current),
                    _metric_cell(other, diff.name, diff.other),
                    difference_cell(diff.difference),
                ]
            )
    header = ["query", "expected", "current", "candidate", "candidate - current"]
    return (
        _columns(header, rows)
        + "\ndifferences: candidate minus current description [95% exact unconditional interval]"
    )


def render_against(
    revisions: Sequence[tuple[str, str]], groups: Sequence[Sequence[SuiteResult]]
) -> str:
    """``--against REF`` (given once or more; ``revisions``: each REF's arm and the REF): per
    query the rate now, then per REF the rate there and the delta with its verdict, then one
    summary line ``against REF: N improved, ...`` per REF. ``groups``: per suite, the current
    result then the result at each REF."""
    rows: list[list[str]] = []
    verdicts: dict[str, list[str]] = {ref: [] for _, ref in revisions}
    for current, *previous in groups:
        before = [{query.query.id: query for query in each.queries} for each in previous]
        for query in current.queries:
            compared = {r.against.ref: r.against for r in query.revisions}
            if not compared and query.against is not None:
                compared[query.against.ref] = query.against
            if not compared:
                continue
            row = [
                f"{current.skill}/{query.query.id}",
                "fire" if query.query.should_trigger else "no fire",
                rate_cell(query.fired, query.scored, query.rate),
            ]
            for (_, ref), by_id in zip(revisions, before, strict=False):
                old, against = by_id.get(query.query.id), compared.get(ref)
                if old is None or against is None:
                    row += ["-", "-"]
                    continue
                verdicts[ref].append(against.verdict)
                moved = against.verdict
                if not against.delta.empty:
                    moved += " " + difference_cell(against.delta)
                row += [rate_cell(old.fired, old.scored, old.rate), moved]
            rows.append(row)
    header = ["query", "expected", "current"]
    for _, ref in revisions:
        header += [ref, f"vs {ref}"]
    ref, at = (revisions[0][1],) * 2 if len(revisions) == 1 else ("REF", "that REF")
    legend = (
        f"vs {ref}: firing rate minus the rate of the skill at {at} [exact "
        "unconditional interval: 95%, under -k auto each bound at the level its look spends], "
        f"read against the band {BAND}; a should-not query improves when it fires less"
    )
    counts = [summary_line(ref, verdicts[ref]) for _, ref in revisions]
    return _columns(header, rows) + "\n" + legend + "\n" + "\n".join(counts)


def _metric_cell(suite: SuiteResult, name: str, interval: Interval) -> str:
    c = suite.confusion
    count, runs = {
        "precision": (c.tp, c.tp + c.fp),
        "recall": (c.tp, c.tp + c.fn),
        "accuracy": (c.tp + c.tn, c.tp + c.tn + c.fp + c.fn),
    }[name]
    return rate_cell(count, runs, interval)


def render_costs(results: Sequence[SuiteResult]) -> str:
    """Mean wall time, requests and tokens per run."""
    runs = [run for suite in results for query in suite.queries for run in query.runs]
    if not runs:
        return "no runs"
    seconds = sum(run.duration_s for run in runs) / len(runs)
    line = f"{len(runs)} runs, mean {seconds:.1f}s per run"
    counted = [run.requests for run in runs if run.requests is not None]
    if counted:
        line += f", {sum(counted) / len(counted):.1f} model requests per run"
    tokens = [run.tokens for run in runs if run.tokens is not None]
    if tokens:
        # Claude Code caches its long system prompt: what it sends is mostly cache writes and
        # reads, so "in" counts all three.
        mean_in = sum(
            t.get("input_tokens", 0)
            + t.get("cache_creation_input_tokens", 0)
            + t.get("cache_read_input_tokens", 0)
            for t in tokens
        ) / len(tokens)
        mean_out = sum(t.get("output_tokens", 0) for t in tokens) / len(tokens)
        line += f", tokens per run: {mean_in:,.0f} in (cached included), {mean_out:,.0f} out"
    return line


def warnings_of(results: Sequence[SuiteResult]) -> list[str]:
    """Isolation warnings seen in any run, each once."""
    seen = {
        warning: None
        for suite in results
        for query in suite.queries
        for run in query.runs
        for warning in run.warnings
    }
    return list(seen)


def results_document(
    results: Sequence[Sequence[SuiteResult]],
    context: Mapping[str, Any],
    *,
    complete: bool,
    interrupted: bool = False,
    provenance: Provenance | None = None,
) -> dict[str, Any]:
    """The ``--results`` JSON: per suite and description, the queries with their runs and the
    suite metrics; with two descriptions, their differences. With ``provenance``, each run
    carries its ``id``."""
    comparisons = []
    for variants in results:
        if len(variants) == 2 and not is_revision_arm(variants[1].variant):
            current, other = variants
            comparisons.append(
                {
                    "suite": current.suite,
                    "skill": current.skill,
                    "differences": [diff.to_dict() for diff in compare(current, other)],
                }
            )
    return {
        "schema_version": RESULTS_SCHEMA_VERSION,
        "layer": LAYER,
        "complete": complete,
        "interrupted": interrupted,
        **context,
        "provenance": None if provenance is None else provenance.to_dict(),
        "suites": [_with_run_ids(suite, provenance) for variants in results for suite in variants],
        "comparison": comparisons or None,
    }


def _with_run_ids(suite: SuiteResult, provenance: Provenance | None) -> dict[str, Any]:
    """A suite as the results file lists it, each run of each query with its ``id``."""
    data = suite.to_dict()
    if provenance is not None:
        for query in data["queries"]:
            query["runs"] = with_ids(
                query["runs"], provenance.run_id, LAYER, suite.skill, suite.variant, query["id"]
            )
    return data


def junit_cases(
    results: Sequence[SuiteResult], *, allow_inconclusive: bool = False
) -> list[JUnitCase]:
    """One JUnit case per query (and per description): a miss or false trigger fails, and an
    inconclusive query unless ``allow_inconclusive``; a query without enough scored runs is an
    error."""
    cases = []
    for suite in results:
        label = f".{suite.variant}" if suite.variant != "current" else ""
        for query in suite.queries:
            figures = (
                f"{query.result}: expected {'fire' if query.query.should_trigger else 'no fire'}"
                f", threshold {_percent(query.threshold)}, K {k_cell(query.k, query.repetitions)}"
                + (
                    f"; {query.reason}"
                    if query.reason
                    else f", fired {rate_cell(query.fired, query.scored, query.rate)}"
                )
            )
            endings = endings_cell(query)
            if endings:
                figures += f" ({endings})"
            againsts = [r.against for r in query.revisions] or (
                [] if query.against is None else [query.against]
            )
            versus = tuple(
                (
                    f"against {against.ref}",
                    against.verdict
                    + ("" if against.delta.empty else " " + difference_cell(against.delta)),
                )
                for against in againsts
            )
            failing = query.result in ("miss", "false-trigger") or (
                query.inconclusive and not allow_inconclusive
            )
            wrong = "not-fired" if query.query.should_trigger else "fired"
            offline = attribution(
                rule for run in query.runs if run.ended == wrong for rule in run.emulator_rules
            )
            if failing and offline:
                figures += f"\n{offline}"
            cases.append(
                JUnitCase(
                    name=query.query.id,
                    classname=f"{LAYER}.{suite.skill}{label}",
                    time_s=sum(run.duration_s for run in query.runs),
                    failure=figures if failing else None,
                    error=figures if query.result == "error" else None,
                    output="\n".join([figures, *(f"{name}: {value}" for name, value in versus)]),
                    properties=versus,
                )
            )
    return cases
