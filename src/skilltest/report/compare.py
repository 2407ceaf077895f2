"""What changed between two results files of one layer (a model upgrade, a CLI upgrade, last
week's run). Pure.

Scenarios are matched by layer and name (``skill/id``; trigger queries by ``skill/id`` and
description). Per matched scenario: the verdict before and after, the change of the with-skill
figure (pass rate, mean score or firing rate) NEW - OLD with Newcombe's interval, and the change
of the delta against the baseline (the lift) with the same square-and-add interval
(:func:`skilltest.stats.difference`). Scenarios only in NEW are *new*, only in OLD *vanished*.

Each file's provenance (backend, model, versions, date) is shown beside the comparison, and a
file from the scripted stand-in says so: a comparison with one says nothing about a real model.

The two runs are independent samples, so the intervals combine each file's own intervals: each
at the level its file records (95%, or with ``-k auto`` the level of the look that decided).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skilltest.errors import InputError
from skilltest.report.provenance import Provenance, notice, provenance_of, summary
from skilltest.report.rows import Row, figure, layer_of, merge, rows_of
from skilltest.stats import Interval, difference, newcombe

COMPARE_SCHEMA_VERSION = 1
"""Version of ``skilltest compare --json``."""


@dataclass(frozen=True)
class Change:
    """One scenario present in both files."""

    name: str
    """``skill/id``."""
    old: Row
    """The scenario in OLD."""
    new: Row
    """The scenario in NEW."""
    with_skill: Interval
    """NEW - OLD of the with-skill figure, with Newcombe's interval."""
    lift: Interval
    """NEW - OLD of the delta against the baseline; empty when either file has none."""

    @property
    def verdict_changed(self) -> bool:
        """Whether the verdict differs."""
        return self.old.verdict != self.new.verdict


@dataclass(frozen=True)
class Comparison:
    """Two results files of one layer, scenario by scenario."""

    layer: str
    """The layer both files belong to."""
    old: str
    """Where OLD came from."""
    new: str
    """Where NEW came from."""
    changes: tuple[Change, ...]
    """Scenarios in both, in NEW's order."""
    added: tuple[Row, ...]
    """Scenarios only in NEW."""
    vanished: tuple[Row, ...]
    """Scenarios only in OLD."""
    old_provenance: Provenance | None = None
    """What produced OLD."""
    new_provenance: Provenance | None = None
    """What produced NEW."""

    def provenance_lines(self) -> list[str]:
        """Each offline file's notice (one that says nothing about a real model), then what
        produced each file, OLD then NEW."""
        sides = [
            ("OLD", self.old, self.old_provenance),
            ("NEW", self.new, self.new_provenance),
        ]
        said = {name: notice(p) for name, _, p in sides if p is not None}
        if said.get("OLD") and said.get("OLD") == said.get("NEW"):
            lines = [f"OLD and NEW: {said['OLD']}"]
        else:
            lines = [f"{name} {where}: {said[name]}" for name, where, _ in sides if said.get(name)]
        lines += [f"{name} {where}: {summary(p)}" for name, where, p in sides if p is not None]
        return lines


def compare(
    old: Mapping[str, Any], new: Mapping[str, Any], *, old_name: str = "OLD", new_name: str = "NEW"
) -> Comparison:
    """Compares two results documents.

    Raises:
        InputError: either is not a results file, or they are of different layers.
    """
    layer = layer_of(old, old_name)
    if layer_of(new, new_name) != layer:
        raise InputError(
            f"{old_name} holds {layer} results and {new_name} {new.get('layer')} results",
            location=new_name,
            fix="compare two results files of the same layer",
        )
    before = {row.name: row for row in merge(rows_of(old, old_name))}
    after = merge(rows_of(new, new_name))
    changes = []
    for row in after:
        if row.name in before:
            was = before[row.name]
            changes.append(
                Change(
                    name=row.name,
                    old=was,
                    new=row,
                    with_skill=newcombe(row.with_skill, was.with_skill),
                    lift=difference(row.delta, was.delta),
                )
            )
    names = {row.name for row in after}
    return Comparison(
        layer=layer,
        old=old_name,
        new=new_name,
        changes=tuple(changes),
        added=tuple(row for row in after if row.name not in before),
        vanished=tuple(row for name, row in before.items() if name not in names),
        old_provenance=provenance_of(old),
        new_provenance=provenance_of(new),
    )


def _interval_dict(interval: Interval) -> dict[str, float | None] | None:
    if interval.empty:
        return None
    return {"value": interval.value, "ci_low": interval.low, "ci_high": interval.high}


def _state(row: Row) -> dict[str, Any]:
    return {
        "verdict": row.verdict,
        "failed": row.failed,
        "with_skill": _interval_dict(row.with_skill),
        "delta": _interval_dict(row.delta),
        "k": row.k,
    }


def to_dict(comparison: Comparison) -> dict[str, Any]:
    """``skilltest compare --json``."""
    return {
        "schema_version": COMPARE_SCHEMA_VERSION,
        "layer": comparison.layer,
        "old": comparison.old,
        "new": comparison.new,
        "provenance": {
            "old": None
            if comparison.old_provenance is None
            else comparison.old_provenance.to_dict(),
            "new": None
            if comparison.new_provenance is None
            else comparison.new_provenance.to_dict(),
        },
        "summary": summary_counts(comparison),
        "scenarios": [
            {
                "name": change.name,
                "verdict_changed": change.verdict_changed,
                "old": _state(change.old),
                "new": _state(change.new),
                "with_skill_change": _interval_dict(change.with_skill),
                "lift_change": _interval_dict(change.lift),
            }
            for change in comparison.changes
        ],
        "added": [{"name": row.name, **_state(row)} for row in comparison.added],
        "vanished": [{"name": row.name, **_state(row)} for row in comparison.vanished],
    }


def summary_counts(comparison: Comparison) -> dict[str, int]:
    """How many scenarios were compared, changed verdict, newly fail or pass, came and went."""
    changes = comparison.changes
    return {
        "compared": len(changes),
        "verdict_changed": sum(1 for c in changes if c.verdict_changed),
        "newly_failing": sum(1 for c in changes if c.new.failed and not c.old.failed),
        "newly_passing": sum(1 for c in changes if c.old.failed and not c.new.failed),
        "added": len(comparison.added),
        "vanished": len(comparison.vanished),
    }


def summary_line(comparison: Comparison) -> str:
    """``10 compared: 2 verdicts changed (1 now failing, 0 now passing); 1 new, 0 vanished``."""
    counts = summary_counts(comparison)
    return (
        f"{counts['compared']} compared: {counts['verdict_changed']} verdict(s) changed "
        f"({counts['newly_failing']} now failing, {counts['newly_passing']} now passing); "
        f"{counts['added']} new, {counts['vanished']} vanished"
    )


def _verdict(row: Row) -> str:
    return row.verdict + (" (FAIL)" if row.failed else "")


def table_rows(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    """Headers and one row per matched scenario, for text and Markdown alike."""
    percent = comparison.layer != "scenarios"
    with_label = "fired" if comparison.layer == "triggers" else "with skill"
    headers = ["scenario", "old verdict", "new verdict", f"{with_label}: old → new", "change"]
    lifts = comparison.layer != "triggers"
    if lifts:
        headers.append("delta change")
    rows = []
    for change in comparison.changes:
        old, new = change.old.with_skill.value, change.new.with_skill.value
        shown = (
            "-"
            if old is None or new is None
            else (f"{100 * old:.0f}% → {100 * new:.0f}%" if percent else f"{old:.2f} → {new:.2f}")
        )
        row = [
            change.name,
            _verdict(change.old),
            _verdict(change.new),
            shown,
            figure(change.with_skill, percent=percent, signed=True),
        ]
        if lifts:
            row.append(figure(change.lift, percent=percent, signed=True))
        rows.append(row)
    return headers, rows


LEGEND = (
    "change: NEW minus OLD [Newcombe interval]; delta change: the change of with-skill minus "
    "without-skill [the same square-and-add interval]; each file's own interval levels"
)


def render_text(comparison: Comparison) -> str:
    """The comparison as the terminal shows it."""
    from tabulate import tabulate

    headers, rows = table_rows(comparison)
    lines = [f"{comparison.layer}: {comparison.old} → {comparison.new}"]
    lines += [*comparison.provenance_lines(), ""]
    if rows:
        lines += [
            tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True),
            LEGEND,
            "",
        ]
    lines += [f"new: {row.name} ({_verdict(row)})" for row in comparison.added]
    lines += [f"vanished: {row.name} ({_verdict(row)})" for row in comparison.vanished]
    if comparison.added or comparison.vanished:
        lines.append("")
    lines.append(summary_line(comparison))
    return "\n".join(lines)


def render_markdown(comparison: Comparison) -> str:
    """The comparison for a pull request or a CI step summary, every name and figure escaped
    as ``skilltest report --markdown`` escapes them: an id or a file name from a results file
    stays text (no link, image, HTML or new cell), and no control character reaches the file."""
    from skilltest.report.markdown import markdown_code, markdown_text
    from skilltest.report.text import escape_controls

    headers, rows = table_rows(comparison)
    lines = [
        f"## skilltest compare: {markdown_text(comparison.layer)}",
        "",
        f"{markdown_code(comparison.old)} → {markdown_code(comparison.new)}",
        "",
        *(f"- {markdown_text(line)}" for line in comparison.provenance_lines()),
        "",
        f"**{markdown_text(summary_line(comparison))}**",
        "",
    ]
    if rows:
        lines += ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
        for row in rows:
            cells = [markdown_code(row[0]), *(markdown_text(cell) for cell in row[1:])]
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", LEGEND, ""]
    for title, listed in (("New", comparison.added), ("Vanished", comparison.vanished)):
        if listed:
            lines += [f"### {title}", ""]
            lines += [
                f"- {markdown_code(row.name)} ({markdown_text(_verdict(row))})" for row in listed
            ] + [""]
    return escape_controls("\n".join(lines).rstrip("\n")) + "\n"
