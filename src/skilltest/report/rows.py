"""One row per scenario (or trigger query) read from any layer's results file. Pure.

The Markdown summary, ``skilltest report`` and ``skilltest compare`` read results files, not the
objects of a run, so the same views come from a run that just ended and from files written last
week, from shards and from several layers. This module is the one place that knows how each
layer lays its results out; what it returns is the same for all three:

``pressure``   a row per scenario; the with-skill figure is the pass rate, the baseline figure
               the baseline *pass* rate (1 - RED rate), the delta the lift
``scenarios``  a row per scenario; the figures are what the verdict read (``decide_by``): pass
               rates and their delta (the default), or mean rubric scores and theirs
``triggers``   a row per query (and per description); the with-skill figure is the firing rate
               with the exact interval its verdict reads, there is no baseline and no delta
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skilltest.errors import InputError
from skilltest.repetitions import run_number
from skilltest.report.files import RESULTS_LAYERS
from skilltest.revision import Against, against_views, is_revision_arm
from skilltest.stats import EMPTY, Interval
from skilltest.transcript.origin import attribution, rules_of

LAYERS = RESULTS_LAYERS
"""Layers in the order reports show them."""

PRESSURE_FAILING = frozenset({"no-steer", "error", "inconclusive"})
"""Pressure verdicts that fail a run (``inconclusive`` unless --allow-inconclusive, which a
results file does not record: a report counts it as failing, as a plain run does)."""


@dataclass(frozen=True)
class Transcript:
    """A kept transcript of one run."""

    label: str
    """How a link names it: ``with #1``, ``without #2``."""
    path: str
    """The path as the results file records it (relative to where the run was started)."""


@dataclass(frozen=True)
class Row:
    """One scenario or trigger query of a results file."""

    layer: str
    """``pressure``, ``scenarios`` or ``triggers``."""
    name: str
    """``skill/id`` (trigger queries of another description: ``skill/id (other)``)."""
    verdict: str
    """The layer's verdict (``steers``, ``improved``, ``pass``, ...)."""
    failed: bool
    """Whether the scenario fails the run."""
    with_skill: Interval
    """Pass rate (pressure), mean score (scenarios) or firing rate (triggers), with its
    interval."""
    without_skill: Interval
    """The baseline's pass rate or mean score; empty for triggers and skill-only runs."""
    delta: Interval
    """With-skill minus without-skill (the lift in the pressure layer); empty without one."""
    reasons: tuple[str, ...]
    """Why it fails, errors or is inconclusive; for a passing scenario, any note."""
    transcripts: tuple[Transcript, ...] = ()
    """Kept transcripts (the scenario and trigger layers keep them)."""
    k: int = 0
    """Runs per arm taken."""
    percent: bool = True
    """Whether the figures are rates (shown in percent) rather than mean scores."""
    pass_hat_k: float | None = None
    """The with-skill arm's pass^k, when the results file has it."""
    against: Against | None = None
    """How the skill compares with a previous revision (``--against REF``); ``None`` without."""
    revisions: tuple[Against, ...] = ()
    """With several ``--against`` REFs: the comparison with each (the first is ``against``)."""

    @property
    def againsts(self) -> tuple[Against, ...]:
        """Its comparison with each REF of ``--against`` (none without)."""
        if self.revisions:
            return self.revisions
        return () if self.against is None else (self.against,)


def _interval(value: Any, low: Any, high: Any) -> Interval:
    if value is None or low is None or high is None:
        return EMPTY
    return Interval(float(value), float(low), float(high))


def _pair(value: Any, bounds: Any) -> Interval:
    if not bounds:
        return EMPTY
    return _interval(value, bounds[0], bounds[1])


def _against(scenario: Mapping[str, Any]) -> Against | None:
    entry = scenario.get("against")
    if not entry:
        return None
    return Against(
        str(entry.get("ref")), _pair(entry.get("delta"), entry.get("ci")), str(entry.get("verdict"))
    )


def _revisions(scenario: Mapping[str, Any]) -> tuple[Against, ...]:
    """Each REF's comparison, for a scenario run against several revisions."""
    if not isinstance(scenario.get("revisions"), list):
        return ()
    return tuple(
        against for view in against_views(scenario) if (against := _against(view)) is not None
    )


def _offline(runs: Any, failing: Any = None) -> tuple[str, ...]:
    """Whose answers the failing runs gave, when the emulator answered them: the rules of the
    runs ``failing`` picks (all runs when it picks none, or is not given)."""
    kept = [run for run in runs or () if isinstance(run, Mapping)]
    picked = [run for run in kept if failing(run)] if failing is not None else []
    said = attribution(
        rule for run in picked or kept for rule in rules_of(run.get("emulator_rules"))
    )
    return (said,) if said else ()


def _pressure_failing(verdict: str) -> Any:
    if verdict == "no-steer":
        return lambda run: run.get("arm") == "with_skill" and run.get("passed") is False
    if verdict == "not-red":
        return lambda run: run.get("arm") == "without_skill" and run.get("red") is False
    return None


def _pressure_rows(data: Mapping[str, Any]) -> list[Row]:
    rows = []
    for scenario in data.get("scenarios") or []:
        with_arm = scenario.get("with_skill") or {}
        base = scenario.get("without_skill")
        baseline = EMPTY
        if base and base.get("red_rate") is not None:
            # The file keeps the RED rate; a report compares pass rates.
            baseline = _interval(1 - base["red_rate"], 1 - base["ci_high"], 1 - base["ci_low"])
        verdict = str(scenario.get("verdict"))
        rows.append(
            Row(
                layer="pressure",
                name=f"{scenario.get('skill')}/{scenario.get('id')}",
                verdict=verdict,
                failed=verdict in PRESSURE_FAILING,
                with_skill=_interval(
                    with_arm.get("pass_rate"), with_arm.get("ci_low"), with_arm.get("ci_high")
                ),
                without_skill=baseline,
                delta=_pair(scenario.get("lift"), scenario.get("lift_ci")),
                reasons=((scenario["detail"],) if scenario.get("detail") else ())
                + (
                    _offline(scenario.get("runs"), _pressure_failing(verdict))
                    if verdict in PRESSURE_FAILING or verdict == "not-red"
                    else ()
                ),
                k=int(scenario.get("k") or 0),
                pass_hat_k=with_arm.get("pass_hat_k"),
                against=_against(scenario),
                revisions=_revisions(scenario),
            )
        )
    return rows


def _arm_label(arm: str) -> str:
    return "with" if arm == "with_skill" else "without"


def _scenario_rows(data: Mapping[str, Any]) -> list[Row]:
    rows = []
    for scenario in data.get("scenarios") or []:
        arms = {arm: scenario.get(arm) or {} for arm in ("with_skill", "without_skill")}
        with_arm, base = arms["with_skill"], arms["without_skill"]
        by_pass = scenario.get("decide_by") == "pass"
        rows.append(
            Row(
                layer="scenarios",
                name=f"{scenario.get('skill')}/{scenario.get('id')}",
                verdict=str(scenario.get("verdict")),
                failed=not scenario.get("passed"),
                with_skill=_pair(with_arm.get("pass_rate"), with_arm.get("pass_rate_ci"))
                if by_pass
                else _interval(
                    with_arm.get("mean_score"), with_arm.get("ci_low"), with_arm.get("ci_high")
                ),
                without_skill=_pair(base.get("pass_rate"), base.get("pass_rate_ci"))
                if by_pass
                else _interval(base.get("mean_score"), base.get("ci_low"), base.get("ci_high")),
                delta=_pair(scenario.get("pass_delta"), scenario.get("pass_delta_ci"))
                if by_pass
                else _pair(scenario.get("delta"), scenario.get("delta_ci")),
                reasons=tuple(scenario.get("reasons") or ())
                + (
                    ()
                    if scenario.get("passed")
                    else _offline(scenario.get("runs"), lambda run: run.get("arm") == "with_skill")
                ),
                transcripts=tuple(
                    Transcript(
                        f"{_arm_label(run.get('arm'))} #{run_number('scenarios', run.get('rep'))}",
                        run["transcript"],
                    )
                    for run in scenario.get("runs") or []
                    if run.get("transcript")
                ),
                k=int(scenario.get("k") or 0),
                percent=by_pass,
                pass_hat_k=with_arm.get("pass_hat_k"),
                against=_against(scenario),
                revisions=_revisions(scenario),
            )
        )
    return rows


def _trigger_rows(data: Mapping[str, Any]) -> list[Row]:
    rows = []
    for suite in data.get("suites") or []:
        if is_revision_arm(str(suite.get("variant"))):
            continue  # the skill at each --against REF is a yardstick, read in each row's against
        variant = "" if suite.get("variant", "current") == "current" else f" ({suite['variant']})"
        for query in suite.get("queries") or []:
            expected = "fire" if query.get("should_trigger") else "no fire"
            fired = f"fired {query.get('fired')}/{query.get('scored')}, expected {expected}"
            # Files of older versions have no reason: the counts say what happened.
            why = str(query.get("reason") or fired)
            rows.append(
                Row(
                    layer="triggers",
                    name=f"{suite.get('skill')}/{query.get('id')}{variant}",
                    verdict=str(query.get("result")),
                    failed=not query.get("passed"),
                    with_skill=_interval(
                        query.get("rate"), query.get("ci_low"), query.get("ci_high")
                    ),
                    without_skill=EMPTY,
                    delta=EMPTY,
                    reasons=()
                    if query.get("passed")
                    else (why, *_offline(query.get("runs"), _missed(query))),
                    transcripts=tuple(
                        Transcript(
                            f"run #{run_number('triggers', run.get('rep'))}", run["transcript"]
                        )
                        for run in query.get("runs") or []
                        if run.get("transcript")
                    ),
                    k=int(query.get("total") or 0),
                    against=_against(query),
                    revisions=_revisions(query),
                )
            )
    return rows


def _missed(query: Mapping[str, Any]) -> Any:
    # The runs that ended against the query's expectation: fired when it should not, or not.
    wrong = "not-fired" if query.get("should_trigger") else "fired"
    return lambda run: run.get("ended") == wrong


READERS = {"pressure": _pressure_rows, "scenarios": _scenario_rows, "triggers": _trigger_rows}


def layer_of(data: Mapping[str, Any], location: str) -> str:
    """The layer a results document belongs to.

    Raises:
        InputError: the document names no layer this code reads.
    """
    layer = data.get("layer")
    if layer not in READERS:
        raise InputError(
            f"not a pressure, scenarios or triggers results file (layer: {layer!r})",
            location=location,
            fix="pass what skilltest pressure, scenarios and triggers write with --results; "
            "leave other files out",
        )
    return str(layer)


def rows_of(data: Mapping[str, Any], location: str = "results") -> list[Row]:
    """The rows of one results document (what ``--results`` writes)."""
    return READERS[layer_of(data, location)](data)


def merge(rows: Sequence[Row]) -> list[Row]:
    """Rows of several files of one layer (shards): a scenario in two files keeps the last."""
    by_name: dict[str, Row] = {}
    for row in rows:
        by_name.pop(row.name, None)
        by_name[row.name] = row
    return list(by_name.values())


def figure(interval: Interval, *, percent: bool, signed: bool = False) -> str:
    """A value with its interval as the terminal tables show it: ``85% [61%–95%]`` for a rate,
    ``0.85 [0.61, 0.95]`` for a mean score, ``+0.50 [+0.12, +0.76]`` for a difference; ``-``
    without data."""
    if interval.empty:
        return "-"

    def shown(value: float | None) -> str:
        assert value is not None
        if percent:
            return f"{100 * value:+.0f}%" if signed else f"{100 * value:.0f}%"
        return f"{value:+.2f}" if signed else f"{value:.2f}"

    low, high = shown(interval.low), shown(interval.high)
    bounds = f"[{low}–{high}]" if percent and not signed else f"[{low}, {high}]"
    return f"{shown(interval.value)} {bounds}"


def versus_cell(row: Row, *, named: bool) -> str:
    """The ``vs REF`` cell: the against-verdict and the delta with its interval; ``-`` for a
    scenario run without ``--against``."""
    if not row.againsts:
        return "-"
    cells = []
    for against in row.againsts:
        shown = against.verdict
        if not against.delta.empty:
            shown += " " + figure(against.delta, percent=row.percent, signed=True)
        cells.append(f"{against.ref}: {shown}" if named else shown)
    return "; ".join(cells)


def _seconds(runs: Any, key: str, scale: float = 1.0) -> float:
    return sum(
        float(run.get(key) or 0.0) / scale
        for run in runs or []
        if isinstance(run, Mapping) and isinstance(run.get(key), int | float)
    )


def unit_durations(data: Mapping[str, Any]) -> dict[str, float]:
    """Seconds each unit of work took in a results document, by ``skill/id``: a scenario's
    runs (pressure: their latency; scenarios: their wall time), a trigger query's runs under
    every description. What ``--durations`` balances shards by."""
    found: dict[str, float] = {}
    layer = data.get("layer")
    if layer in ("pressure", "scenarios"):
        key, scale = ("latency_ms", 1000.0) if layer == "pressure" else ("duration_s", 1.0)
        for scenario in data.get("scenarios") or []:
            if isinstance(scenario, Mapping):
                name = f"{scenario.get('skill')}/{scenario.get('id')}"
                found[name] = found.get(name, 0.0) + _seconds(scenario.get("runs"), key, scale)
    elif layer == "triggers":
        for suite in data.get("suites") or []:
            for query in (suite.get("queries") if isinstance(suite, Mapping) else None) or []:
                if isinstance(query, Mapping):
                    name = f"{suite.get('skill')}/{query.get('id')}"
                    found[name] = found.get(name, 0.0) + _seconds(query.get("runs"), "duration_s")
    return found
