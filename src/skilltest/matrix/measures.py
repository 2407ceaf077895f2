"""Each cell's measures over all its scenarios: how the agent did in that cell, side by side.
Pure: reads a matrix file's cells.

Per cell and arm: the pass rate over every judged run (with its exact Clopper-Pearson interval),
the median and the most tool calls in one run (runs through the CLI), the share of runs with an
authority violation and the mean recovery score (scenarios in a controlled world), and the cost
per passing run (every run's cost, failing ones included, over the passes: the backend's own
figure, else the run's tokens at list prices).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skilltest.cost.prices import run_cost
from skilltest.stats import EMPTY, Interval, clopper_pearson

ARMS = ("with_skill", "without_skill")
"""The arms measured, in the order the table shows them."""


@dataclass(frozen=True)
class Measures:
    """One arm of one cell, over every scenario it ran."""

    cell: str
    """The cell's id."""
    arm: str
    """``with_skill`` or ``without_skill``."""
    passes: int
    """Judged runs that passed."""
    runs: int
    """Judged runs."""
    pass_rate: Interval
    """``passes / runs`` with its exact 95% interval."""
    tool_calls_median: float | None
    """The median tool calls in one run; ``None`` for one-turn runs."""
    tool_calls_worst: int | None
    """The most tool calls in one run; ``None`` for one-turn runs."""
    authority_violation_rate: float | None
    """Runs with an authority violation over the runs in a world; ``None`` without a world."""
    recovery: float | None
    """The mean recovery score of the runs in a world; ``None`` without a world."""
    cost_per_pass: float | None
    """US dollars per passing run; ``None`` with no pass."""


def _arm_runs(scenario: Mapping[str, Any], arm: str) -> list[Mapping[str, Any]]:
    return [run for run in scenario.get("runs") or [] if run.get("arm") == arm]


def _passes(layer: str, scenario: Mapping[str, Any], arm: str) -> tuple[int, int]:
    summary = scenario.get(arm) or {}
    if layer == "pressure":
        if arm == "without_skill":
            runs = int(summary.get("runs") or 0)
            return runs - int(summary.get("red") or 0), runs
        return int(summary.get("passed") or 0), int(summary.get("runs") or 0)
    return int(summary.get("passes") or 0), int(summary.get("scored") or 0)


def _cost(run: Mapping[str, Any]) -> float:
    usage = run.get("usage") or {}
    return run_cost(
        run.get("cost_usd"),
        run.get("model"),
        input=int(usage.get("input_tokens") or 0),
        output=int(usage.get("output_tokens") or 0),
        cache_write=int(usage.get("cache_creation_input_tokens") or 0),
        cache_read=int(usage.get("cache_read_input_tokens") or 0),
    )


def cell_measures(layer: str, cell: Mapping[str, Any]) -> list[Measures]:
    """The measures of each arm of one cell (a matrix file's ``cells`` entry)."""
    scenarios = cell["results"].get("scenarios") or []
    found = []
    for arm in ARMS:
        passes = runs = violated = in_world = 0
        calls: list[int] = []
        recovery: list[float] = []
        cost = 0.0
        for scenario in scenarios:
            if not scenario.get(arm):
                continue
            passed, judged = _passes(layer, scenario, arm)
            passes, runs = passes + passed, runs + judged
            summary = scenario[arm]
            if "authority_violations" in summary:
                violated += int(summary["authority_violations"] or 0)
                in_world += int(summary.get("scored") or 0)
                split = (summary.get("split_scores") or {}).get("recovery") or {}
                if split.get("mean") is not None:
                    recovery.append(float(split["mean"]))
            for run in _arm_runs(scenario, arm):
                if isinstance(run.get("tool_call_count"), int):
                    calls.append(run["tool_call_count"])
                cost += _cost(run)
        if runs == 0:
            continue
        found.append(
            Measures(
                str(cell["id"]),
                arm,
                passes,
                runs,
                clopper_pearson(passes, runs) if runs else EMPTY,
                statistics.median(calls) if calls else None,
                max(calls) if calls else None,
                violated / in_world if in_world else None,
                statistics.fmean(recovery) if recovery else None,
                cost / passes if passes else None,
            )
        )
    return found


def matrix_measures(document: Mapping[str, Any]) -> list[Measures]:
    """Every cell's measures, in the plan's order."""
    layer = str(document.get("layer"))
    return [m for cell in document.get("cells") or [] for m in cell_measures(layer, cell)]


def measures_table(measures: Sequence[Measures]) -> tuple[list[str], list[list[str]]]:
    """The table's headers and rows: a row per cell and arm."""

    def shown(value: float | None, form: str) -> str:
        return "-" if value is None else format(value, form)

    rows = []
    for m in measures:
        rate = m.pass_rate
        assert rate.value is not None and rate.low is not None and rate.high is not None
        rows.append(
            [
                m.cell,
                "with skill" if m.arm == "with_skill" else "without",
                f"{m.passes}/{m.runs} {rate.value:.0%} [{rate.low:.0%}–{rate.high:.0%}]",
                "-"
                if m.tool_calls_median is None
                else f"{m.tool_calls_median:g} / {m.tool_calls_worst}",
                shown(m.authority_violation_rate, ".0%"),
                shown(m.recovery, ".2f"),
                "-" if m.cost_per_pass is None else f"${m.cost_per_pass:.4f}",
            ]
        )
    headers = [
        "cell",
        "arm",
        "pass rate",
        "tool calls: median / worst",
        "authority violations",
        "recovery",
        "cost per pass",
    ]
    return headers, rows


MEASURES_LEGEND = (
    "per cell and arm, over every scenario: judged runs that passed [exact 95% interval]; tool "
    "calls per run; authority violations and recovery in controlled worlds; every run's cost "
    "over the passes (list prices when the backend reported none)"
)
