"""Verdicts over K repetitions: per arm a mean with its interval, per scenario a delta.

The runs go into a tidy table, one row per (scenario, arm, repetition, component), with the
weighted total as the component ``score``; summaries are ``groupby`` over it. Unscored runs stay
in the table (their values are missing) so that they are counted, never averaged in.

A scenario's verdict, from ``delta`` = with-skill mean minus without-skill mean:

``improved``   delta > 0.05
``regressed``  delta < -0.1
``neutral``    otherwise
``error``      an arm has no scored run
``skill-only`` only the with-skill arm ran (``--skill-only`` or ``comparison: false``)
``skipped``    the suite skips the scenario

It passes when delta >= ``min_delta`` (-0.1), the with-skill mean >= ``min_score`` (0.6), and,
when ``expected_skills`` is set, those skills fired in at least half the scored with-skill runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import pandas as pd

from skilltest.scenarios.outcome import Arm, RunRecord
from skilltest.scenarios.rubric import COMPONENTS
from skilltest.stats import DIGITS, Interval, difference_interval, mean_interval, median, wilson

IMPROVED_ABOVE = 0.05
"""A delta above this is an improvement."""
REGRESSED_BELOW = -0.1
"""A delta below this is a regression."""
SKILL_RATE_NEEDED = 0.5
"""The share of scored with-skill runs in which the expected skills must fire."""

SCORE = "score"
"""The tidy table's name for the weighted total."""

REDUCERS: dict[str, Callable[[Sequence[float]], float | None]] = {
    "mean": lambda values: sum(values) / len(values) if values else None,
    "median": median,
    "worst": lambda values: max(values) if values else None,
}
"""Named reductions over one arm's runs (``worst`` is the largest: tool calls, cost)."""


class Verdict(StrEnum):
    """What the comparison says about a scenario."""

    IMPROVED = "improved"
    NEUTRAL = "neutral"
    REGRESSED = "regressed"
    ERROR = "error"
    SKILL_ONLY = "skill-only"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Thresholds:
    """What a scenario needs to pass."""

    min_score: float = 0.6
    """The with-skill mean needed."""
    min_delta: float = -0.1
    """The lowest delta that still passes."""
    skill_rate: float = SKILL_RATE_NEEDED
    """The share of scored with-skill runs in which the expected skills must fire."""


@dataclass(frozen=True)
class ArmSummary:
    """One arm of one scenario over its K runs."""

    arm: Arm
    """Which arm."""
    runs: int
    """Runs attempted."""
    scored: int
    """Runs with a score."""
    mean: Interval
    """Mean score with its 95% t interval (clipped to [0, 1])."""
    scores: tuple[float, ...]
    """The scored runs' scores, in repetition order."""
    components: dict[str, float | None]
    """Each component's mean over the scored runs (``None`` when the scenario leaves it out)."""
    skill_rate: Interval
    """How often the expected skills fired, over the scored runs, with a Wilson interval."""
    skills_fired: int
    """Scored runs in which the expected skills fired."""
    tool_calls_median: float | None
    """Median tool calls per scored run."""
    tool_calls_worst: int | None
    """Most tool calls in one scored run."""
    errors: tuple[str, ...]
    """Each unscored run's reason, in repetition order."""
    cost_usd: float | None = None
    """What the arm's runs cost, when the CLI reported it."""

    def to_dict(self) -> dict[str, Any]:
        """The arm as the results file stores it."""
        return {
            "runs": self.runs,
            "scored": self.scored,
            "mean_score": self.mean.value,
            "ci_low": self.mean.low,
            "ci_high": self.mean.high,
            "scores": list(self.scores),
            "components": self.components,
            "skills_fired": self.skills_fired,
            "skill_rate": self.skill_rate.value,
            "skill_rate_ci": [self.skill_rate.low, self.skill_rate.high],
            "tool_calls_median": self.tool_calls_median,
            "tool_calls_worst": self.tool_calls_worst,
            "errors": list(self.errors),
            "cost_usd": self.cost_usd,
        }


@dataclass(frozen=True)
class ScenarioVerdict:
    """The judgement on one scenario."""

    scenario_id: str
    """The scenario."""
    skill: str
    """The skill under test."""
    verdict: Verdict
    """See the module docstring."""
    passed: bool
    """Whether the scenario passes."""
    delta: Interval
    """With-skill mean minus without-skill mean, with a Welch t interval."""
    with_skill: ArmSummary
    """The with-skill arm."""
    without_skill: ArmSummary | None
    """The without-skill arm; ``None`` in skill-only mode."""
    expected_skills: tuple[str, ...]
    """The skills whose firing is counted."""
    reasons: tuple[str, ...] = ()
    """Why it fails or errors, most important first."""
    runs: tuple[RunRecord, ...] = field(default=(), repr=False)
    """Every run, in (repetition, arm) order."""


def tidy_table(records: Sequence[RunRecord]) -> pd.DataFrame:
    """One row per (scenario, arm, rep, component): ``value`` is missing when unscored."""
    rows = []
    for record in records:
        base = {
            "scenario": record.scenario_id,
            "skill": record.skill,
            "arm": record.arm.value,
            "rep": record.rep,
        }
        rows.append({**base, "component": SCORE, "value": record.score})
        for name in COMPONENTS:
            value = record.components.get(name) if record.scored else None
            rows.append({**base, "component": name, "value": value})
    frame = pd.DataFrame(
        rows, columns=["scenario", "skill", "arm", "rep", "component", "value"]
    ).astype({"value": "float64"})
    return frame


def component_means(table: pd.DataFrame) -> dict[tuple[str, str], dict[str, float | None]]:
    """``{(scenario, arm): {component: mean}}`` over scored values only."""
    if table.empty:
        return {}
    means = table.groupby(["scenario", "arm", "component"], sort=False)["value"].mean()
    result: dict[tuple[str, str], dict[str, float | None]] = {}
    for row in means.reset_index().to_dict("records"):
        value = float(row["value"])
        result.setdefault((str(row["scenario"]), str(row["arm"])), {})[str(row["component"])] = (
            None if math.isnan(value) else value
        )
    return result


def summarise_arm(
    arm: Arm,
    records: Sequence[RunRecord],
    expected_skills: tuple[str, ...],
    components: dict[str, float | None] | None = None,
) -> ArmSummary:
    """Mean score with its interval, skill firing rate and tool-call figures for one arm."""
    ordered = sorted(records, key=lambda r: r.rep)
    scored = [r for r in ordered if r.score is not None]
    scores = tuple(float(r.score) for r in scored if r.score is not None)
    fired = sum(1 for r in scored if r.fired(expected_skills))
    calls = [float(r.tool_calls) for r in scored]
    worst = REDUCERS["worst"](calls)
    costs = [r.cost_usd for r in ordered if r.cost_usd is not None]
    return ArmSummary(
        arm=arm,
        runs=len(ordered),
        scored=len(scored),
        mean=mean_interval(scores, bounds=(0.0, 1.0)),
        scores=scores,
        components={name: (components or {}).get(name) if scored else None for name in COMPONENTS},
        skill_rate=wilson(fired, len(scored)),
        skills_fired=fired,
        tool_calls_median=REDUCERS["median"](calls),
        tool_calls_worst=int(worst) if worst is not None else None,
        errors=tuple(r.error for r in ordered if r.error is not None),
        cost_usd=sum(costs) if costs else None,
    )


def judge(
    scenario_id: str,
    skill: str,
    records: Sequence[RunRecord],
    *,
    comparison: bool,
    expected_skills: tuple[str, ...] = (),
    thresholds: Thresholds | None = None,
    skip: str | None = None,
) -> ScenarioVerdict:
    """The verdict on one scenario from all its runs.

    Args:
        scenario_id: The scenario.
        skill: The skill under test.
        records: Every run of both arms.
        comparison: Whether the without-skill arm ran.
        expected_skills: Skills the with-skill arm must invoke; when empty, the firing rate is
            reported for the skill under test but not required.
        thresholds: What it needs to pass.
        skip: Why the scenario was skipped, when it was.
    """
    limits = thresholds or Thresholds()
    counted = expected_skills or (skill,)
    means = component_means(tidy_table(records))
    by_arm = {arm: [r for r in records if r.arm == arm] for arm in Arm}
    with_arm = summarise_arm(
        Arm.WITH_SKILL,
        by_arm[Arm.WITH_SKILL],
        counted,
        means.get((scenario_id, Arm.WITH_SKILL.value)),
    )
    without_arm = (
        summarise_arm(
            Arm.WITHOUT_SKILL,
            by_arm[Arm.WITHOUT_SKILL],
            counted,
            means.get((scenario_id, Arm.WITHOUT_SKILL.value)),
        )
        if comparison
        else None
    )
    ordered = tuple(sorted(records, key=lambda r: (r.rep, r.arm != Arm.WITH_SKILL)))

    def verdict(
        kind: Verdict, passed: bool, delta: Interval, reasons: list[str]
    ) -> ScenarioVerdict:
        return ScenarioVerdict(
            scenario_id=scenario_id,
            skill=skill,
            verdict=kind,
            passed=passed,
            delta=delta,
            with_skill=with_arm,
            without_skill=without_arm,
            expected_skills=counted,
            reasons=tuple(reasons),
            runs=ordered,
        )

    none = Interval(None, None, None)
    if skip is not None:
        return verdict(Verdict.SKIPPED, True, none, [skip])
    errors = [
        f"{summary.arm.label}: no scored run ({summary.errors[0]})"
        if summary.errors
        else f"{summary.arm.label}: no run"
        for summary in (with_arm, without_arm)
        if summary is not None and summary.scored == 0
    ]
    if errors:
        return verdict(Verdict.ERROR, False, none, errors)

    reasons: list[str] = []
    # Rounded before comparing: a mean of 0.7, 0.7, 0.7 is 0.6999999999999998 in floating
    # point, and must still reach a threshold of 0.7.
    with_mean = round(with_arm.mean.value or 0.0, DIGITS)
    if without_arm is not None:
        delta = difference_interval(with_arm.scores, without_arm.scores)
        value = round(delta.value or 0.0, DIGITS)
        if value > IMPROVED_ABOVE:
            kind = Verdict.IMPROVED
        elif value < REGRESSED_BELOW:
            kind = Verdict.REGRESSED
        else:
            kind = Verdict.NEUTRAL
        if value < limits.min_delta:
            reasons.append(f"delta {value:+.2f} is below {limits.min_delta:+.2f}")
    else:
        delta, kind = none, Verdict.SKILL_ONLY
    if with_mean < limits.min_score:
        reasons.append(f"with-skill mean {with_mean:.2f} is below {limits.min_score:.2f}")
    if expected_skills:
        rate = round(with_arm.skill_rate.value or 0.0, DIGITS)
        if rate < limits.skill_rate:
            reasons.append(
                f"expected skills {', '.join(expected_skills)} fired in "
                f"{with_arm.skills_fired}/{with_arm.scored} with-skill runs"
            )
    partial = [
        f"{summary.arm.label}: {summary.runs - summary.scored} of {summary.runs} runs unscored "
        f"({summary.errors[0]})"
        for summary in (with_arm, without_arm)
        if summary is not None and summary.errors
    ]
    passed = not reasons
    return verdict(kind, passed, delta, reasons + partial)
