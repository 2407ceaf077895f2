"""Comparisons across cells: does the skill's lift differ between two models, or two agents?
Does a trigger query fire differently? Pure.

A trigger matrix compares each query's firing rate between two cells that differ on one axis
(a description that fires in Claude Code and never in Codex): with fixed K, the exact
unconditional interval of the difference of two independent proportions, the one every
pass-rate delta uses (``scripts/bench_exact_coverage.py`` checks its coverage); under ``-k auto``,
the two cells' own intervals combined by Bonferroni.

For each scenario and each pair of cells that differ on one axis of
:data:`~skilltest.matrix.axes.LIFT_AXES` only (two models, or two agents, everything else the
same), the difference of lifts ``(pA1 - pB1) - (pA2 - pB2)`` (with-skill minus
without-skill pass rate in cell 1, minus the same in cell 2) gets an interval from the two
cells' exact lift intervals, combined by Bonferroni: with fixed K, each lift's exact
unconditional interval at level ``1 - alpha/2`` (97.5% for a 95% statement), and the difference
lies in ``[low1 - high2, high1 - low2]`` unless one of the two lifts missed, which happens at most
``alpha`` of the time, at most ``alpha/2`` on each side. Under ``-k auto`` (where the counts
came from a stopping rule, so an interval computed afresh from them would not keep its level),
the intervals the cells' own verdicts read are combined as they are, and the statement's level
is ``1 - (alpha1 + alpha2)``. docs/statistics.md says why; ``scripts/bench_lift_difference.py``
checks the error rate by exact enumeration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skilltest.stats import CONFIDENCE, DIGITS, EMPTY, Interval, exact_difference

HELPS = frozenset({"steers", "improved"})
"""Verdicts that say the skill helps in a cell."""
NOT_NEEDED = frozenset({"not-red"})
"""Verdicts that say the baseline already passes in a cell: the skill is not needed there."""

DIFFERS = "differs"
"""The difference of lifts is credibly not 0."""
NOT_SHOWN = "no difference shown"
"""The interval holds 0: the runs do not show the lifts differ (they may still)."""


@dataclass(frozen=True)
class Arms:
    """A scenario's counts in one cell, as its verdict read them."""

    with_passed: int
    """With-skill runs that passed."""
    with_runs: int
    """With-skill runs judged."""
    base_passed: int
    """Without-skill runs that passed (a pressure baseline passes when it is not RED)."""
    base_runs: int
    """Without-skill runs judged."""
    lift: Interval
    """The lift's interval the cell's verdict read."""
    confidence: float
    """That interval's two-sided level."""
    adaptive: bool
    """The scenario ran with ``-k auto``: its counts came from a stopping rule."""
    verdict: str
    """The scenario's verdict in the cell."""


def arms_of(layer: str, scenario: Mapping[str, Any]) -> Arms | None:
    """A scenario's counts in a cell's results document; ``None`` without a baseline or a
    lift (skill-only runs, errors)."""
    with_arm, base = scenario.get("with_skill") or {}, scenario.get("without_skill") or {}
    if layer == "pressure":
        counts = (
            with_arm.get("passed"),
            with_arm.get("runs"),
            None if base.get("red") is None else base["runs"] - base["red"],
            base.get("runs"),
        )
        bounds, value = scenario.get("lift_ci"), scenario.get("lift")
    else:
        counts = (
            with_arm.get("passes"),
            with_arm.get("scored"),
            base.get("passes"),
            base.get("scored"),
        )
        bounds, value = scenario.get("pass_delta_ci"), scenario.get("pass_delta")
    if any(not isinstance(count, int) for count in counts) or not bounds or value is None:
        return None
    with_passed, with_runs, base_passed, base_runs = (int(count) for count in counts)  # type: ignore[arg-type]
    if min(with_runs, base_runs) <= 0:
        return None
    repetitions = scenario.get("repetitions") or {}
    return Arms(
        with_passed,
        with_runs,
        base_passed,
        base_runs,
        Interval(float(value), float(bounds[0]), float(bounds[1])),
        float(scenario.get("confidence") or CONFIDENCE),
        repetitions.get("mode") == "auto",
        str(scenario.get("verdict")),
    )


def difference_of_lifts(
    first: Arms, second: Arms, confidence: float = CONFIDENCE
) -> tuple[Interval, float]:
    """The lift in ``first`` minus the lift in ``second``, with its interval and that
    interval's level (see the module docstring): ``confidence`` with fixed K, ``1 - (alpha1 +
    alpha2)`` of the cells' own intervals under ``-k auto``."""
    if first.adaptive or second.adaptive:
        one, two = first.lift, second.lift
        level = 1 - ((1 - first.confidence) + (1 - second.confidence))
    else:
        each = 1 - (1 - confidence) / 2
        one = exact_difference(
            first.with_passed, first.with_runs, first.base_passed, first.base_runs, each
        )
        two = exact_difference(
            second.with_passed, second.with_runs, second.base_passed, second.base_runs, each
        )
        level = confidence
    if one.empty or two.empty:
        return EMPTY, level
    assert one.value is not None and two.value is not None
    assert one.low is not None and one.high is not None
    assert two.low is not None and two.high is not None
    return (
        Interval(one.value - two.value, one.low - two.high, one.high - two.low),
        round(level, DIGITS),
    )


@dataclass(frozen=True)
class LiftDifference:
    """How a scenario's lift compares between two cells that differ on one axis."""

    scenario: str
    """``skill/id``."""
    axis: str
    """The axis the two cells differ on (``model``)."""
    first: str
    """The first cell's value on it (``haiku``)."""
    second: str
    """The second cell's value on it (``opus``)."""
    cells: tuple[str, str]
    """The two cells' ids."""
    difference: Interval
    """Lift in the first cell minus lift in the second, with its interval."""
    confidence: float
    """The interval's two-sided level."""
    verdict: str
    """:data:`DIFFERS` or :data:`NOT_SHOWN`."""
    reading: str
    """What the two cells' verdicts say together: ``helps haiku, not needed on opus``."""

    def to_dict(self) -> dict[str, Any]:
        """The comparison as the results file keeps it."""
        return {
            "scenario": self.scenario,
            "axis": self.axis,
            "first": self.first,
            "second": self.second,
            "cells": list(self.cells),
            "difference": self.difference.value,
            "difference_ci": [self.difference.low, self.difference.high],
            "confidence": self.confidence,
            "verdict": self.verdict,
            "reading": self.reading,
        }


def reading(first: str, one: str, second: str, two: str) -> str:
    """What two cells' verdicts say together: ``helps haiku, not needed on opus``."""

    def said(value: str, verdict: str) -> str:
        if verdict in HELPS:
            return f"helps {value}"
        if verdict in NOT_NEEDED:
            return f"not needed on {value} (its baseline passes)"
        return f"{verdict} on {value}"

    return f"{said(first, one)}, {said(second, two)}"


def _pairs(
    cells: Sequence[Mapping[str, Any]], axis: str
) -> list[tuple[Mapping[str, Any], Mapping[str, Any], list[tuple[str, Any, Any]]]]:
    """Each pair of cells that differ on ``axis`` only, in the plan's order, with the
    scenarios both ran: ``(name, scenario in the first, scenario in the second)``."""
    found = []
    for i, one in enumerate(cells):
        for two in cells[i + 1 :]:
            values_one, values_two = one["values"], two["values"]
            differing = [name for name in values_one if values_one[name] != values_two.get(name)]
            if differing != [axis]:
                continue
            items_two = dict(_items(two["results"]))
            both = [
                (name, item, items_two[name])
                for name, item in _items(one["results"])
                if name in items_two
            ]
            found.append((one, two, both))
    return found


def _items(results: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """A cell's scenarios by ``skill/id``; a trigger cell's queries of the current description
    by ``skill/id`` (those of another description, ``skill/id (other)``)."""
    if results.get("layer") != "triggers":
        return [(f"{s.get('skill')}/{s.get('id')}", s) for s in results.get("scenarios") or []]
    from skilltest.revision import is_revision_arm

    items = []
    for suite in results.get("suites") or []:
        variant = str(suite.get("variant", "current"))
        if is_revision_arm(variant):
            continue
        shown = "" if variant == "current" else f" ({variant})"
        for query in suite.get("queries") or []:
            items.append((f"{suite.get('skill')}/{query.get('id')}{shown}", query))
    return items


@dataclass(frozen=True)
class Firing:
    """A trigger query's firing in one cell, as its verdict read it."""

    fired: int
    """Runs in which the skill fired."""
    scored: int
    """Runs decided."""
    rate: Interval
    """The firing rate's interval the cell's verdict read."""
    confidence: float
    """That interval's two-sided level."""
    adaptive: bool
    """The query ran with ``-k auto``: its counts came from a stopping rule."""


def firing_of(query: Mapping[str, Any]) -> Firing | None:
    """A trigger query's counts in a cell's results; ``None`` when no run was decided."""
    fired, scored = query.get("fired"), query.get("scored")
    if not isinstance(fired, int) or not isinstance(scored, int) or scored <= 0:
        return None
    low, high, rate = query.get("ci_low"), query.get("ci_high"), query.get("rate")
    if low is None or high is None or rate is None:
        return None
    repetitions = query.get("repetitions") or {}
    return Firing(
        fired,
        scored,
        Interval(float(rate), float(low), float(high)),
        float(query.get("confidence") or CONFIDENCE),
        repetitions.get("mode") == "auto",
    )


def difference_of_firing(
    first: Firing, second: Firing, confidence: float = CONFIDENCE
) -> tuple[Interval, float]:
    """The firing rate in ``first`` minus that in ``second``, with its interval and level: with
    fixed K, the exact unconditional interval of a difference of two independent proportions at
    ``confidence`` (the interval every pass-rate delta uses); under ``-k auto``, the cells' own
    intervals combined by Bonferroni, at ``1 - (alpha1 + alpha2)``."""
    if first.adaptive or second.adaptive:
        one, two = first.rate, second.rate
        assert one.value is not None and two.value is not None
        assert one.low is not None and one.high is not None
        assert two.low is not None and two.high is not None
        level = 1 - ((1 - first.confidence) + (1 - second.confidence))
        return (
            Interval(one.value - two.value, one.low - two.high, one.high - two.low),
            round(level, DIGITS),
        )
    interval = exact_difference(first.fired, first.scored, second.fired, second.scored, confidence)
    return interval, confidence


def firing_reading(first: str, one: Firing, second: str, two: Firing) -> str:
    """``fires 6/6 with claude-code, 0/6 with codex``."""
    return f"fires {one.fired}/{one.scored} with {first}, {two.fired}/{two.scored} with {second}"


def compare_cells(
    layer: str, cells: Sequence[Mapping[str, Any]], axis: str = "model"
) -> list[LiftDifference]:
    """Every scenario's difference of lifts between each pair of cells that differ on ``axis``
    only (the model, the agent), in the plan's order; for a trigger matrix, every query's
    difference of firing rates. ``cells`` are a matrix file's ``cells`` entries."""
    if layer == "triggers":
        return _compare_firing(cells, axis)
    found = []
    for one, two, both in _pairs(cells, axis):
        values_one, values_two = one["values"], two["values"]
        for name, scenario, other in both:
            first, second = arms_of(layer, scenario), arms_of(layer, other)
            if first is None or second is None:
                continue
            difference, level = difference_of_lifts(first, second)
            if difference.empty:
                continue
            assert difference.low is not None and difference.high is not None
            credible = round(difference.low, DIGITS) > 0 or round(difference.high, DIGITS) < 0
            found.append(
                LiftDifference(
                    name,
                    axis,
                    values_one[axis],
                    values_two[axis],
                    (one["id"], two["id"]),
                    difference,
                    level,
                    DIFFERS if credible else NOT_SHOWN,
                    reading(values_one[axis], first.verdict, values_two[axis], second.verdict),
                )
            )
    return found


def _compare_firing(cells: Sequence[Mapping[str, Any]], axis: str) -> list[LiftDifference]:
    """Every trigger query's difference of firing rates between each pair of cells that differ
    on ``axis`` only: a description that fires in one agent (or model) and not another."""
    found = []
    for one, two, both in _pairs(cells, axis):
        values_one, values_two = one["values"], two["values"]
        for name, query, other in both:
            first, second = firing_of(query), firing_of(other)
            if first is None or second is None:
                continue
            difference, level = difference_of_firing(first, second)
            if difference.empty:
                continue
            assert difference.low is not None and difference.high is not None
            credible = round(difference.low, DIGITS) > 0 or round(difference.high, DIGITS) < 0
            found.append(
                LiftDifference(
                    name,
                    axis,
                    values_one[axis],
                    values_two[axis],
                    (one["id"], two["id"]),
                    difference,
                    level,
                    DIFFERS if credible else NOT_SHOWN,
                    firing_reading(values_one[axis], first, values_two[axis], second),
                )
            )
    return found


def compare_lifts(layer: str, cells: Sequence[Mapping[str, Any]]) -> list[LiftDifference]:
    """:func:`compare_cells` along each axis the lift is compared on (the model, then the
    agent): what a matrix's ``comparisons`` hold."""
    from skilltest.matrix.axes import LIFT_AXES

    return [found for axis in LIFT_AXES for found in compare_cells(layer, cells, axis)]


SAME = "same"
"""A pass rate that credibly did not move: its change lies within the neutral band."""


@dataclass(frozen=True)
class ArmChange:
    """How one arm's pass rate moved between two CLI versions (the second minus the first)."""

    scenario: str
    """``skill/id``."""
    arm: str
    """``with_skill`` or ``without_skill``."""
    first: str
    """The first cell's CLI version."""
    second: str
    """The second cell's CLI version."""
    cells: tuple[str, str]
    """The two cells' ids."""
    change: Interval
    """Pass rate under the second version minus under the first, with its exact interval."""
    verdict: str
    """``improved``, ``regressed``, :data:`SAME` or ``inconclusive`` (the rules of a delta)."""

    def to_dict(self) -> dict[str, Any]:
        """The change as the results file keeps it."""
        return {
            "scenario": self.scenario,
            "arm": self.arm,
            "first": self.first,
            "second": self.second,
            "cells": list(self.cells),
            "change": self.change.value,
            "change_ci": [self.change.low, self.change.high],
            "verdict": self.verdict,
        }


def compare_versions(
    layer: str, cells: Sequence[Mapping[str, Any]], axis: str = "claude"
) -> list[ArmChange]:
    """For each pair of cells that differ in the CLI version only, each scenario's with-skill
    and without-skill pass rates under the second version minus under the first: the exact
    interval at 95% and the verdict a delta gets (the neutral band [-0.05, +0.05] is
    ``same``). Swapping the versions mirrors each interval and verdict."""
    from skilltest.decision import MIN_DELTA, Verdict, delta_verdict

    found = []
    for one, two, both in _pairs(cells, axis):
        for name, scenario, other in both:
            first, second = arms_of(layer, scenario), arms_of(layer, other)
            if first is None or second is None:
                continue
            arms = (
                (
                    "with_skill",
                    first.with_passed,
                    first.with_runs,
                    second.with_passed,
                    second.with_runs,
                ),
                (
                    "without_skill",
                    first.base_passed,
                    first.base_runs,
                    second.base_passed,
                    second.base_runs,
                ),
            )
            for arm, passed_before, runs_before, passed_after, runs_after in arms:
                change = exact_difference(passed_after, runs_after, passed_before, runs_before)
                verdict = delta_verdict(change, MIN_DELTA)
                found.append(
                    ArmChange(
                        name,
                        arm,
                        one["values"][axis],
                        two["values"][axis],
                        (one["id"], two["id"]),
                        change,
                        SAME if verdict == Verdict.NEUTRAL else verdict.value,
                    )
                )
    return found
