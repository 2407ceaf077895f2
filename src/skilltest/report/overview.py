"""The figures a report opens with: what produced the results, and one card per layer. Pure.

Read from results documents (what ``--results`` writes), whatever version wrote them: a field a
file lacks (the wall time, costs, pass^k in files of older versions) is shown as not recorded,
never guessed.

**Header.** The suites, backend, models, ``claude`` CLI and toolkit versions, date, wall time,
total cost and number of runs of every document together; a value the documents disagree on is
listed once per distinct value.

**Cards.** Per layer: the verdict counts; per arm its pooled pass rate (with the skill: the
suite's score; without: the baseline's, a pressure baseline's as its RED share), a scenario
arm's mean score and the with-skill runs that scored 1.00; the lift over every run of the layer
(pooled: the with-skill runs' pass rate minus the without-skill runs', with Newcombe's interval
over the two pooled Wilson intervals, a figure shown and never decided on); the mean with-skill
pass^k; the cost per passing run; for triggers, the pooled precision and recall instead.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skilltest.report.markdown import NOUNS, TITLES, Document
from skilltest.report.provenance import (
    Provenance,
    agent_text,
    backend_text,
    duration_text,
    provenance_of,
)
from skilltest.report.rows import Row, figure
from skilltest.report.text import cost_per_pass
from skilltest.stats import DIGITS, EMPTY, Interval, newcombe, wilson
from skilltest.stats.family import suite_wide_lines

ARMS = (("with_skill", "with skill"), ("without_skill", "without skill"))


def runs_of(layer: str, data: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every run a results document lists (trigger runs of every description included)."""
    if layer == "triggers":
        items = [q for s in data.get("suites") or [] for q in s.get("queries") or []]
    else:
        items = list(data.get("scenarios") or [])
    for item in items:
        for run in item.get("runs") or []:
            if isinstance(run, Mapping):
                yield run


def run_cost(run: Mapping[str, Any]) -> float | None:
    """What a run cost as the CLI reported it (its judge calls included); ``None`` when
    nothing reported a cost."""
    costs = [run.get("cost_usd")] + [
        check.get("cost_usd") for check in run.get("checks") or [] if isinstance(check, Mapping)
    ]
    known = [float(cost) for cost in costs if isinstance(cost, int | float)]
    return sum(known) if known else None


def failed_run(layer: str, run: Mapping[str, Any]) -> bool:
    """Whether the run could not be judged (an API error, a crashed CLI, an unreadable
    answer): left out of the rates."""
    if layer == "triggers":
        return run.get("ended") == "error"
    return bool(run.get("error"))


def _distinct(values: Sequence[str | None]) -> list[str]:
    return list(dict.fromkeys(value for value in values if value))


def date_text(iso: str | None) -> str:
    """``2026-12-01 09:00 UTC`` for ``2026-12-01T09:00:00Z``; anything else as written."""
    if not iso:
        return "not recorded"
    try:
        when = dt.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return iso
    return when.strftime("%Y-%m-%d %H:%M UTC")


def money(value: float) -> str:
    """``$0.1052``, ``$12.40``."""
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


@dataclass(frozen=True)
class Header:
    """What produced every document of a report, as its header shows it."""

    suites: tuple[str, ...]
    """The suite files, each once."""
    facts: tuple[tuple[str, str, str], ...]
    """``(name, value, note)`` in the order shown: backend, models, versions, date, duration,
    cost, runs; the note (often empty) qualifies the value."""
    offline: bool
    """Some numbers come from the scripted stand-in."""
    unknown: bool
    """Some document does not say what answered."""


def _label(document: Document, layer: str, several: bool) -> str:
    """The layer; with several files of it, the file too."""
    return f"{layer} {document.source}" if several and document.source != "-" else layer


def header(documents: Sequence[tuple[str, Document]]) -> Header:
    """The header of a report of ``documents``, each with its layer."""
    provenances = [(layer, d, provenance_of(d.data)) for layer, d in documents]
    every = [p for _, _, p in provenances]
    files = Counter(layer for layer, _ in documents)
    runs = [(layer, run) for layer, d in documents for run in runs_of(layer, d.data)]
    offline = any(p.offline for p in every)
    models = _distinct([m for p in every for m in p.models])
    claude = _distinct([p.claude_version for p in every])
    agents = _distinct([agent_text(p) for p in every])
    facts = (
        ("backend", "; ".join(_distinct([backend_text(p) for p in every])), ""),
        (
            "model" if len(models) < 2 else "models",
            ", ".join(models) or "none reported",
            "as the stand-in named itself" if offline and models else "",
        ),
        # Another agent's runs name it and its version; "claude CLI -" would say nothing.
        *([("claude CLI", ", ".join(claude) or "-", "")] if claude or not agents else []),
        *([("agent", ", ".join(agents), "")] if agents else []),
        ("skilltest", ", ".join(_distinct([p.skilltest_version for p in every])) or "-", ""),
        ("date", *_dates(every)),
        (
            "duration",
            *_durations([(_label(d, layer, files[layer] > 1), p) for layer, d, p in provenances]),
        ),
        ("cost", *_cost([run for _, run in runs], offline=offline)),
        ("runs", *_runs(runs)),
    )
    return Header(
        suites=tuple(_distinct([s.path for p in every for s in p.suites])),
        facts=facts,
        offline=offline,
        unknown=any(p.origin == "unknown" for p in every),
    )


def _dates(provenances: Sequence[Provenance]) -> tuple[str, str]:
    starts = sorted(p.started_at for p in provenances if p.started_at)
    if not starts:
        return "not recorded", ""
    first, last = date_text(starts[0]), date_text(starts[-1])
    return first, "" if first == last else f"the last run started {last}"


def _durations(labelled: Sequence[tuple[str, Provenance]]) -> tuple[str, str]:
    if len(labelled) == 1:
        return duration_text(labelled[0][1].duration_s), ""
    known = [p.duration_s for _, p in labelled if p.duration_s is not None]
    if not known:
        return "not recorded", ""
    each = ", ".join(f"{label} {duration_text(p.duration_s)}" for label, p in labelled)
    return duration_text(sum(known)), each


def _cost(runs: Sequence[Mapping[str, Any]], *, offline: bool) -> tuple[str, str]:
    costs = [cost for run in runs if (cost := run_cost(run)) is not None]
    if not costs:
        return "not reported", "no run reported a cost"
    notes = []
    if len(costs) < len(runs):
        notes.append(f"{len(costs)} of {len(runs)} runs reported one")
    if offline:
        notes.append("the CLI's list-price estimate for the stand-in's tokens: nothing was spent")
    return money(sum(costs)), "; ".join(notes)


def _runs(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[str, str]:
    failed = sum(failed_run(layer, run) for layer, run in runs)
    return f"{len(runs)}", f"{failed} could not be judged" if failed else ""


@dataclass(frozen=True)
class Card:
    """One layer's summary."""

    layer: str
    """``pressure``, ``scenarios`` or ``triggers``."""
    title: str
    """As the report names the layer."""
    items: str
    """``4 scenarios``, ``1 query``."""
    failing: int
    """Scenarios (queries) that fail the run."""
    counts: tuple[tuple[str, int], ...]
    """Each verdict with how many scenarios have it, most common first."""
    figures: tuple[tuple[str, str], ...]
    """``(name, text)``: the lift, pass^k, cost per passing run, runs."""


def _arm(item: Mapping[str, Any], arm: str) -> Mapping[str, Any]:
    data = item.get(arm)
    return data if isinstance(data, Mapping) else {}


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


@dataclass(frozen=True)
class Pooled:
    """One arm's judged runs of a layer, pooled over its scenarios."""

    runs: int
    """Runs judged (pressure) or scored (scenarios)."""
    passes: float
    """Of them, the runs that pass (a pressure baseline run: that is not RED)."""
    score_sum: float = 0.0
    """The sum of the scored runs' rubric scores (scenarios)."""
    perfect: int = 0
    """Scored runs with a score of 1 (scenarios)."""

    @property
    def rate(self) -> float:
        """The pooled pass rate (0 without runs)."""
        return self.passes / self.runs if self.runs else 0.0


def pooled(layer: str, items: Sequence[Mapping[str, Any]], arm: str) -> Pooled:
    """The judged runs of ``arm`` over every scenario of ``items``, pooled."""
    runs, passes, score_sum, perfect = 0, 0.0, 0.0, 0
    for item in items:
        data = _arm(item, arm)
        if layer == "pressure":
            judged = int(_number(data.get("runs")))
            runs += judged
            passes += (
                _number(data.get("passed"))
                if arm == "with_skill"
                else judged - _number(data.get("red"))
            )
            continue
        runs += int(_number(data.get("scored")))
        passes += _number(data.get("passes"))
        score_sum += _number(data.get("mean_score")) * _number(data.get("scored"))
        perfect += sum(
            1
            for run in item.get("runs") or []
            if isinstance(run, Mapping)
            and run.get("arm") == arm
            and isinstance(run.get("score"), int | float)
            and round(float(run["score"]), DIGITS) >= 1
        )
    return Pooled(runs=runs, passes=passes, score_sum=score_sum, perfect=perfect)


def pooled_lift(layer: str, items: Sequence[Mapping[str, Any]]) -> Interval:
    """With-skill minus without-skill pass rate over every judged run of ``items`` (a pressure
    baseline run passes when it is not RED; a scenario run when it reaches its ``min_score``
    with no veto), each pooled with its Wilson interval, their difference with Newcombe's: a
    figure shown, never decided on. Empty without both arms."""
    with_skill, base = pooled(layer, items, "with_skill"), pooled(layer, items, "without_skill")
    if not with_skill.runs or not base.runs:
        return EMPTY
    return newcombe(wilson(with_skill.passes, with_skill.runs), wilson(base.passes, base.runs))


def _share(count: float, runs: int) -> str:
    return f"{count:g}/{runs} runs ({100 * count / runs:.0f}%)"


def _arm_figures(layer: str, items: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Per arm, its pooled pass rate (the suite's score with the skill, the baseline's
    without), a pressure baseline's as its RED share; a scenario arm's mean score and, with
    the skill, its perfect runs."""
    figures = []
    for arm, label in ARMS:
        arm_runs = pooled(layer, items, arm)
        if not arm_runs.runs:
            continue
        if layer == "pressure" and arm == "without_skill":
            red = arm_runs.runs - arm_runs.passes
            figures.append((label, f"RED in {_share(red, arm_runs.runs)}, the outcome wanted"))
            continue
        text = f"passed {_share(arm_runs.passes, arm_runs.runs)}"
        if layer == "scenarios":
            text += f"; mean score {arm_runs.score_sum / arm_runs.runs:.2f}"
        figures.append((label, text))
    with_skill = pooled(layer, items, "with_skill")
    if layer == "scenarios" and with_skill.runs:
        perfect = f"{with_skill.perfect} of {with_skill.runs} with-skill runs scored 1.00"
        figures.append(("perfect runs", perfect))
    return figures


def _pass_hat_k(items: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    arms = [_arm(item, "with_skill") for item in items]
    shown = [arm for arm in arms if isinstance(arm.get("pass_hat_k"), int | float)]
    if not shown:
        return None
    ks = {arm.get("k") for arm in shown}
    k = f"{next(iter(ks))}" if len(ks) == 1 else "k"
    mean = sum(float(arm["pass_hat_k"]) for arm in shown) / len(shown)
    low = sum(1 for arm in shown if float(arm["pass_hat_k"]) < 0.5)
    noun = "scenario" if len(shown) == 1 else "scenarios"
    text = f"{100 * mean:.0f}% (mean of {len(shown)} {noun}, with skill)"
    if low:
        text += f"; below 50% in {low}"
    return f"pass^{k}", text


def _costs_per_pass(
    layer: str, items: Sequence[Mapping[str, Any]], *, offline: bool = False
) -> str | None:
    parts, known = [], False
    for arm, label in ARMS:
        if layer == "pressure":
            if arm != "with_skill":
                continue  # a baseline run "passes" by being not RED: not what is paid for
            runs = [r for item in items for r in item.get("runs") or [] if r.get("arm") == arm]
            if not runs:
                continue
            costs = [c for r in runs if (c := run_cost(r)) is not None]
            passes = sum(1 for r in runs if r.get("passed"))
        else:
            arms = [_arm(item, arm) for item in items if _arm(item, arm).get("runs")]
            if not arms:
                continue
            costs = [float(a["cost_usd"]) for a in arms if a.get("cost_usd") is not None]
            passes = sum(int(_number(a.get("passes"))) for a in arms)
        known = known or bool(costs)
        parts.append(cost_per_pass(label, costs, passes, offline=offline))
    if not parts:
        return None
    return "; ".join(parts) if known else "unknown (no run reported a cost)"


def _trigger_figures(data: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    totals = Counter[str]()
    for document in data:
        for suite in document.get("suites") or []:
            if suite.get("variant", "current") != "current":
                continue
            metrics = suite.get("metrics") or {}
            for key in ("tp", "fp", "fn", "tn"):
                totals[key] += int(_number(metrics.get(key)))
    tp, fp, fn = totals["tp"], totals["fp"], totals["fn"]
    figures = []
    if tp + fp:
        figures.append(("precision", figure(wilson(tp, tp + fp), percent=True)))
    if tp + fn:
        figures.append(("recall", figure(wilson(tp, tp + fn), percent=True)))
    return figures


def card(layer: str, documents: Sequence[Document], rows: Sequence[Row]) -> Card:
    """The card of one layer's ``documents``, whose rows are ``rows``."""
    items = [item for d in documents for item in d.data.get("scenarios") or []]
    figures: list[tuple[str, str]] = []
    if layer == "triggers":
        figures += _trigger_figures([d.data for d in documents])
    else:
        figures += _arm_figures(layer, items)
        lift = pooled_lift(layer, items)
        if not lift.empty:
            figures.append(("lift, all runs", figure(lift, percent=True, signed=True)))
        if (consistency := _pass_hat_k(items)) is not None:
            figures.append(consistency)
        offline = any(provenance_of(d.data).offline for d in documents)
        if (cost := _costs_per_pass(layer, items, offline=offline)) is not None:
            figures.append(("cost per passing run", cost))
        if layer == "scenarios" and len(items) > 1:
            figures += [("suite-wide", held) for held in suite_wide_lines(items)]
    shown, failed = _runs([(layer, run) for d in documents for run in runs_of(layer, d.data)])
    figures.append(("runs", f"{shown} ({failed})" if failed else shown))
    counts = Counter(row.verdict for row in rows)
    return Card(
        layer=layer,
        title=TITLES[layer],
        items=f"{len(rows)} {NOUNS[layer][len(rows) != 1]}",
        failing=sum(row.failed for row in rows),
        counts=tuple(counts.most_common()),
        figures=tuple(figures),
    )
