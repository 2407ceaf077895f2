"""Verdicts over K repetitions: per arm a mean with its interval, per scenario a delta.

The runs go into a tidy table, one row per (scenario, arm, repetition, component), with the
weighted total as the component ``score``; summaries are ``groupby`` over it. Unscored runs stay
in the table (their values are missing) so that they are counted, never averaged in.

Per arm the mean score has a Wilson interval (:func:`skilltest.stats.bounded_mean`); ``delta``,
with-skill mean minus without-skill mean, has Newcombe's interval. The verdict is read from the
delta's interval against the band [``min_delta``, +0.05] (``min_delta`` is -0.1 by default):

``improved``      the whole interval lies above +0.05
``regressed``     the whole interval lies below ``min_delta``
``neutral``       the whole interval lies inside the band
``inconclusive``  the interval straddles an edge of the band: more runs would tell
``error``         an arm has fewer than half of its runs scored (or none)
``skill-only``    only the with-skill arm ran: its mean's interval lies above or below
                  ``min_score`` (``inconclusive`` while it straddles it)
``skipped``       the suite skips the scenario

A compared scenario passes when its verdict is ``improved`` or ``neutral``, the with-skill mean
reaches ``min_score``, and, when ``expected_skills`` is set, those skills fired in at least half
of the scored with-skill runs. The mean and the firing rate are bars on what was observed; the
interval decides the verdict, which is the claim about the skill.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skilltest.decision import (
    IMPROVED_ABOVE,
    MIN_DELTA,
    Verdict,
    delta_verdict,
    mean_verdict,
)
from skilltest.limits import MAX_REPETITIONS
from skilltest.repetitions import Repetitions
from skilltest.scenarios.outcome import Arm, RunRecord
from skilltest.scenarios.rubric import COMPONENTS

if TYPE_CHECKING:
    import pandas as pd

    from skilltest.revision import Against
from skilltest.stats import (
    CONFIDENCE,
    DIGITS,
    EMPTY,
    Interval,
    bounded_mean,
    consistency,
    level,
    median,
    newcombe,
    welch,
    wilson,
)

SKILL_RATE_NEEDED = 0.5
"""The share of scored with-skill runs in which the expected skills must fire."""
SCORED_SHARE_NEEDED = 0.5
"""An arm with fewer than this share of its runs scored gives ``error``."""

SPLIT_SCORES: tuple[str, ...] = ("tool", "task", "safety", "recovery", "communication")
"""The split scores of a run in a controlled world: the rubric's, then the world's."""

SCORE = "score"
"""The tidy table's name for the weighted total."""

REDUCERS: dict[str, Callable[[Sequence[float]], float | None]] = {
    "mean": lambda values: sum(values) / len(values) if values else None,
    "median": median,
    "worst": lambda values: max(values) if values else None,
}
"""Named reductions over one arm's runs (``worst`` is the largest: tool calls, cost)."""


DECIDED = frozenset(
    {Verdict.IMPROVED, Verdict.NEUTRAL, Verdict.REGRESSED, Verdict.ERROR, Verdict.SKILL_ONLY}
)
"""Verdicts that end adaptive repetitions."""


@dataclass(frozen=True)
class Thresholds:
    """What a scenario needs to pass."""

    min_score: float = 0.6
    """The with-skill mean needed."""
    min_delta: float = MIN_DELTA
    """The lower edge of the neutral band: a delta credibly below it is a regression."""
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
    """Mean score with its Wilson interval at the verdict's confidence level."""
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
    split: dict[str, Interval] = field(default_factory=dict)
    """With a controlled world: the mean of each split score (``tool``, ``task``, ``safety``,
    ``recovery``, ``communication``) over the runs that have it, with its Wilson interval."""
    authority_violations: int = 0
    """With a controlled world: scored runs with an authority violation."""
    authority_rate: Interval = EMPTY
    """With a controlled world: the share of scored runs with an authority violation."""
    passes: int = 0
    """Scored runs that pass on their own: a score of at least ``min_score`` and no authority
    violation (the runs pass@k and pass^k count)."""
    pass_k: int = 1
    """The k of pass@k and pass^k: the fixed K, or with ``-k auto`` the runs of the first round
    (every scenario takes them), so scenarios that stopped at different K stay comparable."""

    @property
    def unscored(self) -> int:
        """Runs without a score."""
        return self.runs - self.scored

    @property
    def cost_per_pass(self) -> float | None:
        """What the arm's runs cost per passing run (every run's cost, failing ones included,
        over the passes); ``None`` when no run passed or no run reported a cost."""
        if self.cost_usd is None or self.passes == 0:
            return None
        return self.cost_usd / self.passes

    def to_dict(self) -> dict[str, Any]:
        """The arm as the results file stores it."""
        return {
            "runs": self.runs,
            "scored": self.scored,
            "unscored": self.unscored,
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
            "passes": self.passes,
            "cost_per_pass": self.cost_per_pass,
            **consistency(self.scored, self.passes, self.pass_k),
            **(
                {
                    "split_scores": {
                        name: {"mean": value.value, "ci_low": value.low, "ci_high": value.high}
                        for name, value in self.split.items()
                    },
                    "authority_violations": self.authority_violations,
                    "authority_violation_rate": self.authority_rate.value,
                    "authority_violation_ci": [self.authority_rate.low, self.authority_rate.high],
                }
                if self.split
                else {}
            ),
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
    """With-skill mean minus without-skill mean, with Newcombe's interval."""
    with_skill: ArmSummary
    """The with-skill arm."""
    without_skill: ArmSummary | None
    """The without-skill arm; ``None`` in skill-only mode."""
    expected_skills: tuple[str, ...]
    """The skills whose firing is counted."""
    reasons: tuple[str, ...] = ()
    """Why it fails, errors or is inconclusive, most important first."""
    runs: tuple[RunRecord, ...] = field(default=(), repr=False)
    """Every run, in (repetition, arm) order."""
    confidence: float = CONFIDENCE
    """The confidence level of the intervals the verdict was read from."""
    welch: Interval = EMPTY
    """The Welch t interval of the delta, for reference (verdicts do not use it)."""
    runs_to_decide: int | None = None
    """For an inconclusive verdict: about how many runs per arm would likely decide it at 95%,
    if the means stayed as they are; ``None`` when more runs are unlikely to."""
    repetitions: Repetitions | None = None
    """The repetition plan the scenario ran with."""
    misses_a_bar: bool = False
    """Whether it misses a bar whatever more runs show (the with-skill mean below
    ``min_score``, the expected skills not firing): it fails even while inconclusive."""
    critical: bool = False
    """The scenario's ``critical: true``, carried to the results file for ``skilltest gate``."""
    previous: ArmSummary | None = None
    """The previous revision's skill (``--against REF``); ``None`` without it."""
    against: Against | None = None
    """With-skill mean minus the previous revision's, and its verdict (``--against REF``)."""

    @property
    def k(self) -> int:
        """Runs per arm taken (the most of any arm)."""
        arms = [a for a in (self.with_skill, self.without_skill, self.previous) if a is not None]
        return max((a.runs for a in arms), default=0)

    @property
    def inconclusive(self) -> bool:
        """Whether more runs are needed before the scenario can pass or fail."""
        return self.verdict == Verdict.INCONCLUSIVE and not self.misses_a_bar


def tidy_table(records: Sequence[RunRecord]) -> pd.DataFrame:
    """One row per (scenario, arm, rep, component): ``value`` is missing when unscored."""
    import pandas as pd  # on first use: it takes longer to import than a command to start

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
    confidence: float = CONFIDENCE,
    min_score: float = Thresholds.min_score,
    pass_k: int | None = None,
) -> ArmSummary:
    """Mean score with its interval, skill firing rate and tool-call figures for one arm.

    ``min_score`` decides which runs pass on their own and ``pass_k`` is the k of pass@k and
    pass^k (default: the runs attempted).
    """
    ordered = sorted(records, key=lambda r: r.rep)
    scored = [r for r in ordered if r.score is not None]
    scores = tuple(float(r.score) for r in scored if r.score is not None)
    fired = sum(1 for r in scored if r.fired(expected_skills))
    calls = [float(r.tool_calls) for r in scored]
    worst = REDUCERS["worst"](calls)
    costs = [r.cost_usd for r in ordered if r.cost_usd is not None]
    worlds = [r for r in scored if r.world is not None]
    split: dict[str, Interval] = {}
    if worlds:
        for name in SPLIT_SCORES:
            values = [v for r in worlds if (v := r.split_score(name)) is not None]
            split[name] = bounded_mean(values, confidence)
    violated = sum(1 for r in worlds if r.authority_violations)
    return ArmSummary(
        arm=arm,
        runs=len(ordered),
        scored=len(scored),
        mean=bounded_mean(scores, confidence),
        scores=scores,
        components={name: (components or {}).get(name) if scored else None for name in COMPONENTS},
        skill_rate=wilson(fired, len(scored)),
        skills_fired=fired,
        tool_calls_median=REDUCERS["median"](calls),
        tool_calls_worst=int(worst) if worst is not None else None,
        errors=tuple(r.error for r in ordered if r.error is not None),
        cost_usd=sum(costs) if costs else None,
        split=split,
        authority_violations=violated,
        authority_rate=wilson(violated, len(worlds)) if worlds else EMPTY,
        passes=sum(
            1
            for r in scored
            if r.score is not None
            and round(r.score, DIGITS) >= min_score
            and not r.authority_violations
        ),
        pass_k=max(1, pass_k if pass_k is not None else len(ordered)),
    )


def runs_to_decide(decides: Callable[[int], bool], taken: int) -> int | None:
    """The fewest runs per arm above ``taken`` at which ``decides(n)`` holds (up to the bound)."""
    for n in range(taken + 1, MAX_REPETITIONS + 1):
        if decides(n):
            return n
    return None


def _projected(arm: ArmSummary, n: int) -> Interval:
    """The arm's 95% interval if ``n`` runs kept its observed mean."""
    mean = arm.mean.value or 0.0
    return wilson(mean * n, n)


def judge(
    scenario_id: str,
    skill: str,
    records: Sequence[RunRecord],
    *,
    comparison: bool,
    expected_skills: tuple[str, ...] = (),
    thresholds: Thresholds | None = None,
    skip: str | None = None,
    confidence: float = CONFIDENCE,
    repetitions: Repetitions | None = None,
    require_skills_fired: bool = True,
    requires_recovery: bool = False,
    against: str | None = None,
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
        confidence: The intervals' confidence level (lower than 95% never; adaptive
            repetitions raise it to pay for their repeated looks).
        repetitions: The plan the scenario ran with, recorded with the verdict.
        require_skills_fired: Whether passing needs ``expected_skills`` to fire; when not, their
            firing rate is still reported.
        requires_recovery: The world's ``recovers: true``: passing needs the with-skill runs'
            mean ``recovery`` score (over the runs where the fault fired) to reach ``min_score``.
        against: The REF of ``--against``: the records hold a ``previous`` arm, compared with
            the with-skill arm (delta of the means, Newcombe's interval, the same band). The
            comparison is reported beside the verdict and does not change it.
    """
    # Imported here: revision reads this module's band, so it cannot be imported at the top.
    from skilltest.revision import compare

    limits = thresholds or Thresholds()
    counted = expected_skills or (skill,)
    means = component_means(tidy_table(records))
    by_arm = {arm: [r for r in records if r.arm == arm] for arm in Arm}

    def summary(arm: Arm) -> ArmSummary:
        return summarise_arm(
            arm,
            by_arm[arm],
            counted,
            means.get((scenario_id, arm.value)),
            confidence,
            min_score=limits.min_score,
            pass_k=repetitions.first if repetitions is not None else None,
        )

    with_arm = summary(Arm.WITH_SKILL)
    without_arm = summary(Arm.WITHOUT_SKILL) if comparison else None
    arms = [a for a in (with_arm, without_arm) if a is not None]
    order = {Arm.WITH_SKILL: 0, Arm.WITHOUT_SKILL: 1, Arm.PREVIOUS: 2}
    ordered = tuple(sorted(records, key=lambda r: (r.rep, order[r.arm])))
    previous_arm = summary(Arm.PREVIOUS) if against is not None else None
    moved: Against | None = None
    if against is not None and skip is None:
        assert previous_arm is not None
        too_few = any(
            a.runs == 0 or a.scored == 0 or a.scored < SCORED_SHARE_NEEDED * a.runs
            for a in (with_arm, previous_arm)
        )
        # An arm with too few scored runs cannot be compared: the against-verdict is an error.
        moved = (
            compare(against, EMPTY, EMPTY)
            if too_few
            else compare(against, with_arm.mean, previous_arm.mean, limits.min_delta)
        )

    def verdict(
        kind: Verdict,
        passed: bool,
        delta: Interval,
        reasons: list[str],
        *,
        welch_delta: Interval = EMPTY,
        needed: int | None = None,
        misses_a_bar: bool = False,
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
            confidence=confidence,
            welch=welch_delta,
            runs_to_decide=needed,
            repetitions=repetitions,
            misses_a_bar=misses_a_bar,
            previous=previous_arm,
            against=moved,
        )

    if skip is not None:
        return verdict(Verdict.SKIPPED, True, EMPTY, [skip])
    unscored = [
        f"{arm.arm.label}: {arm.unscored} of {arm.runs} runs unscored ({arm.errors[0]})"
        for arm in arms
        if arm.errors
    ]
    errors = [
        (
            f"{arm.arm.label}: no run"
            if arm.runs == 0
            else f"{arm.arm.label}: only {arm.scored} of "
            f"{arm.runs} runs scored, fewer than half ({arm.errors[0]})"
        )
        for arm in arms
        if arm.runs == 0 or arm.scored < SCORED_SHARE_NEEDED * arm.runs or arm.scored == 0
    ]
    if errors:
        return verdict(Verdict.ERROR, False, EMPTY, errors)

    reasons: list[str] = []
    # Rounded before comparing: a mean of 0.7, 0.7, 0.7 is 0.6999999999999998 in floating
    # point, and must still reach a threshold of 0.7.
    with_mean = round(with_arm.mean.value or 0.0, DIGITS)
    shown_level = level(confidence)
    if without_arm is not None:
        delta = newcombe(with_arm.mean, without_arm.mean)
        kind = delta_verdict(delta, limits.min_delta)
        shown = f"[{delta.low:+.2f}, {delta.high:+.2f}]"
        needed = None
        if kind == Verdict.REGRESSED:
            reasons.append(
                f"delta {delta.value:+.2f} {shown} is credibly below {limits.min_delta:+.2f}"
            )
        elif kind == Verdict.INCONCLUSIVE:
            assert without_arm is not None
            needed = runs_to_decide(
                lambda n: (
                    delta_verdict(
                        newcombe(_projected(with_arm, n), _projected(without_arm, n)),
                        limits.min_delta,
                    )
                    != Verdict.INCONCLUSIVE
                ),
                max(with_arm.scored, without_arm.scored),
            )
            reasons.append(
                f"inconclusive: the delta's {shown_level} interval {shown} straddles the band "
                f"[{limits.min_delta:+.2f}, {IMPROVED_ABOVE:+.2f}]; "
                + (
                    f"about {needed} runs per arm would likely decide it"
                    if needed is not None
                    else "more runs are unlikely to decide it (the delta sits on an edge)"
                )
            )
        welch_delta = welch(with_arm.scores, without_arm.scores, confidence)
    else:
        delta, welch_delta, needed = EMPTY, EMPTY, None
        met = mean_verdict(with_arm.mean, limits.min_score)
        kind = Verdict.SKILL_ONLY if met is not None else Verdict.INCONCLUSIVE
        shown = f"[{with_arm.mean.low:.2f}, {with_arm.mean.high:.2f}]"
        if met is None:
            needed = runs_to_decide(
                lambda n: mean_verdict(_projected(with_arm, n), limits.min_score) is not None,
                with_arm.scored,
            )
            reasons.append(
                f"inconclusive: the with-skill mean's {shown_level} interval {shown} straddles "
                f"min_score {limits.min_score:.2f}; "
                + (
                    f"about {needed} runs would likely decide it"
                    if needed is not None
                    else "more runs are unlikely to decide it (the mean sits on min_score)"
                )
            )
        elif not met:
            reasons.append(
                f"with-skill mean {with_mean:.2f} {shown} is credibly below {limits.min_score:.2f}"
            )
    bars: list[str] = []
    if without_arm is not None and with_mean < limits.min_score:
        bars.append(f"with-skill mean {with_mean:.2f} is below {limits.min_score:.2f}")
    if expected_skills and require_skills_fired:
        rate = round(with_arm.skill_rate.value or 0.0, DIGITS)
        if rate < limits.skill_rate:
            bars.append(
                f"expected skills {', '.join(expected_skills)} fired in "
                f"{with_arm.skills_fired}/{with_arm.scored} with-skill runs"
            )
    if requires_recovery:
        recoveries = [
            value
            for run in by_arm[Arm.WITH_SKILL]
            if (value := run.split_score("recovery")) is not None
        ]
        if not recoveries:
            bars.append(
                "recovers: true, but the fault profile fired in no with-skill run, so recovery "
                "was never tested"
            )
        elif sum(recoveries) / len(recoveries) < limits.min_score:
            bars.append(
                f"with-skill runs recovered from the fault in {sum(recoveries):.0f}/"
                f"{len(recoveries)} (recovers: true)"
            )
    # Authority is not averaged away: one with-skill run that wrote what it must not, wrote
    # twice, wrote before the user confirmed, left the world or claimed an unobserved write
    # fails the scenario, whatever its scores.
    for run in by_arm[Arm.WITH_SKILL]:
        if run.authority_violations:
            bars.append(
                f"with-skill run #{run.rep}: authority violation: "
                + "; ".join(run.authority_violations[:3])
            )
            break
    # A missed bar fails the scenario whatever more runs would show: it comes first.
    reasons = bars + reasons if kind == Verdict.INCONCLUSIVE else reasons + bars
    passed = not reasons and kind in (Verdict.IMPROVED, Verdict.NEUTRAL, Verdict.SKILL_ONLY)
    return verdict(
        kind,
        passed,
        delta,
        reasons + unscored,
        welch_delta=welch_delta,
        needed=needed,
        misses_a_bar=bool(bars),
    )
