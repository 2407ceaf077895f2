"""Verdicts over K repetitions: per arm a pass rate and a mean score, per scenario their deltas.

The runs go into a tidy table, one row per (scenario, arm, repetition, component), with the
weighted total as the component ``score``; summaries are ``groupby`` over it. Unscored runs stay
in the table (their values are missing) so that they are counted, never averaged in.

A scored run *passes* when its score reaches ``min_score`` with no authority violation (the runs
pass@k counts). Per arm: the pass rate with its exact Clopper-Pearson interval, and the mean
score with its betting confidence sequence (:mod:`skilltest.stats`). Per scenario, with a
baseline: ``pass_delta``, with-skill pass rate minus without-skill pass rate, with its exact
unconditional interval, and ``delta``, the same for the mean scores with a betting confidence
sequence. The suite's ``decide_by`` picks the one the verdict is read from: ``pass`` (the
default: does a run do what the user asked?) or ``mean``; the other is reported beside it. The
verdict is read from that interval against the band [``min_delta``, +0.05] (``min_delta`` is
-0.05 by default, so the two directions mirror each other):

``improved``      the whole interval lies above +0.05
``regressed``     the whole interval lies below ``min_delta``
``neutral``       the whole interval lies inside the band
``inconclusive``  the interval straddles an edge of the band: more runs would tell
``error``         an arm has fewer than half of its runs scored (or none)
``skill-only``    only the with-skill arm ran: its mean's interval lies above or below
                  ``min_score`` (``inconclusive`` while it straddles it)

Each claim (``improved``, ``regressed``, the skill-only bar) is wrong at most 2.5% of the time,
at every K, with adaptive repetitions too (:mod:`skilltest.repetitions`): two runs per arm
never decide a pass-rate comparison (2/2 against 0/2 happens 6.25% of the time when nothing
differs), three can (3/3 against 0/3: at most 2.1% when the true delta is +0.05).
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
    clopper_pearson,
    consistency,
    difference_p_value,
    exact_difference,
    level,
    mean_difference,
    median,
    most_extreme_difference,
    welch,
)

LIBRARIES = ("numpy", "scipy.special", "pandas")
"""What judging a scenario imports on first use (the intervals' functions, the tidy table): a
run imports them in a thread while its first runs go (:mod:`skilltest.preload`)."""

SKILL_RATE_NEEDED = 0.5
"""The share of scored with-skill runs in which the expected skills must fire."""
SCORED_SHARE_NEEDED = 0.5
"""An arm with fewer than this share of its runs scored gives ``error``."""

SPLIT_SCORES: tuple[str, ...] = ("tool", "task", "safety", "recovery", "communication")
"""The split scores of a run in a controlled world: the rubric's, then the world's."""

DECIDE_BY_PASS = "pass"
"""``decide_by: pass``: the verdict compares the arms' pass rates (the default)."""
DECIDE_BY_MEAN = "mean"
"""``decide_by: mean``: the verdict compares the arms' mean scores."""
METHODS = {
    DECIDE_BY_PASS: "pass rates, exact unconditional interval (Chan & Zhang 1999)",
    DECIDE_BY_MEAN: "mean scores, betting confidence sequence (Waudby-Smith & Ramdas 2024)",
}
"""How each ``decide_by`` reads its delta, as results files name it."""
PROJECTION_LIMIT = 200
"""The most runs per arm :func:`runs_to_decide` looks ahead."""

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
    decide_by: str = DECIDE_BY_PASS
    """What the verdict compares: ``pass`` rates or ``mean`` scores."""


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
    """Mean score with its 95% betting confidence sequence."""
    scores: tuple[float, ...]
    """The scored runs' scores, in repetition order."""
    components: dict[str, float | None]
    """Each component's mean over the scored runs (``None`` when the scenario leaves it out)."""
    skill_rate: Interval
    """How often the expected skills fired, over the scored runs, with its exact interval."""
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
    ``recovery``, ``communication``) over the runs that have it, with its betting sequence."""
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
    pass_rate: Interval = EMPTY
    """``passes`` over the scored runs, with its 95% Clopper-Pearson interval."""

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
            "pass_rate": self.pass_rate.value,
            "pass_rate_ci": None
            if self.pass_rate.empty
            else [
                self.pass_rate.low,
                self.pass_rate.high,
            ],
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
class ScenarioRevision:
    """A scenario's arm of one ``--against`` REF and how the current skill compares with it."""

    arm: str
    """``previous``, ``previous-2``...: the arm that ran the skill at ``ref``."""
    ref: str
    """The revision or folder as the user gave it."""
    summary: ArmSummary | None
    """The arm's figures (``None`` in a verdict built with ``against`` alone)."""
    against: Against | None
    """With-skill minus this revision's, and its verdict; ``None`` when skipped."""


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
    """With-skill mean score minus without-skill mean score, with its betting sequence (95%)."""
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
    """The two-sided level of the interval the verdict was read from (for pass rates under
    ``-k auto``: one minus twice the share of the error rate the look spends on ``improved``)."""
    pass_delta: Interval = EMPTY
    """With-skill pass rate minus without-skill pass rate, with its exact interval at the
    levels of the look (the lower bound at ``improved``'s, the upper at ``regressed``'s)."""
    decide_by: str = DECIDE_BY_PASS
    """Which delta the verdict was read from: ``pass`` (``pass_delta``) or ``mean``
    (``delta``)."""
    welch: Interval = EMPTY
    """The Welch t interval of the delta, for reference (verdicts do not use it)."""
    runs_to_decide: int | None = None
    """For an inconclusive verdict: about how many runs per arm would likely decide it at 95%,
    if the rates (or means) stayed as they are; ``None`` when not within
    :data:`PROJECTION_LIMIT` runs."""
    repetitions: Repetitions | None = None
    """The repetition plan the scenario ran with."""
    misses_a_bar: bool = False
    """Whether it misses a bar whatever more runs show (the with-skill mean below
    ``min_score``, the expected skills not firing): it fails even while inconclusive."""
    critical: bool = False
    """The scenario's ``critical: true``, carried to the results file for ``skilltest gate``."""
    previous: ArmSummary | None = None
    """The previous revision's skill (``--against REF``, the first REF); ``None`` without it."""
    against: Against | None = None
    """With-skill mean minus the previous revision's, and its verdict (``--against REF``, the
    first REF)."""
    revisions: tuple[ScenarioRevision, ...] = ()
    """Every REF of ``--against`` (the first is also ``previous`` and ``against``), each
    compared with the with-skill arm."""

    def __post_init__(self) -> None:
        if not self.revisions and self.against is not None:
            # Built with one REF's previous and against only: that REF is the one revision.
            first = ScenarioRevision(
                Arm.PREVIOUS.value, self.against.ref, self.previous, self.against
            )
            object.__setattr__(self, "revisions", (first,))

    @property
    def k(self) -> int:
        """Runs per arm taken (the most of any arm)."""
        arms = [a for a in (self.with_skill, self.without_skill, self.previous) if a is not None]
        arms += [r.summary for r in self.revisions if r.summary is not None]
        return max((a.runs for a in arms), default=0)

    @property
    def method(self) -> str:
        """How the verdict's delta was read (:data:`METHODS`)."""
        return METHODS[self.decide_by]

    @property
    def decisive(self) -> Interval:
        """The delta the verdict was read from."""
        return self.pass_delta if self.decide_by == DECIDE_BY_PASS else self.delta

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
    min_score: float = Thresholds.min_score,
    pass_k: int | None = None,
) -> ArmSummary:
    """Pass rate and mean score with their intervals, skill firing rate and tool-call figures
    for one arm.

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
            split[name] = bounded_mean(values)
    violated = sum(1 for r in worlds if r.authority_violations)
    passes = sum(1 for r in scored if passes_on_its_own(r, min_score))
    return ArmSummary(
        arm=arm,
        runs=len(ordered),
        scored=len(scored),
        mean=bounded_mean(scores),
        scores=scores,
        components={name: (components or {}).get(name) if scored else None for name in COMPONENTS},
        skill_rate=clopper_pearson(fired, len(scored)),
        skills_fired=fired,
        tool_calls_median=REDUCERS["median"](calls),
        tool_calls_worst=int(worst) if worst is not None else None,
        errors=tuple(r.error for r in ordered if r.error is not None),
        cost_usd=sum(costs) if costs else None,
        split=split,
        authority_violations=violated,
        authority_rate=clopper_pearson(violated, len(worlds)) if worlds else EMPTY,
        passes=passes,
        pass_k=max(1, pass_k if pass_k is not None else len(ordered)),
        pass_rate=clopper_pearson(passes, len(scored)),
    )


def passes_on_its_own(record: RunRecord, min_score: float) -> bool:
    """Whether a scored run passes: its score reaches ``min_score``, no veto struck it (a
    vetoed run scores 0, and fails even where ``min_score`` is 0) and it violated no
    authority."""
    return (
        record.score is not None
        and round(record.score, DIGITS) >= min_score
        and not record.vetoes
        and not record.authority_violations
    )


def runs_to_decide(decides: Callable[[int], bool], taken: int) -> int | None:
    """The fewest runs per arm above ``taken`` at which ``decides(n)`` holds, up to
    :data:`PROJECTION_LIMIT`: every n up to 20, then in steps that grow by half (a projection,
    not a promise)."""
    n = taken + 1
    while n <= PROJECTION_LIMIT:
        if decides(n):
            return n
        n = n + 1 if n < 20 else n + max(1, n // 2)
    return None


def pass_difference(
    a: ArmSummary,
    b: ArmSummary,
    repetitions: Repetitions | None,
    min_delta: float,
) -> Interval:
    """Pass rate of ``a`` minus pass rate of ``b`` with its exact interval, each bound read at
    the level the look spends on the claim it can make: the lower bound on ``improved``, the
    upper bound on ``regressed`` (both 95% at a fixed K)."""
    plan = repetitions or Repetitions(max(1, a.runs))
    k = max(a.runs, b.runs)
    return pass_interval(a.passes, a.scored, b.passes, b.scored, plan, k, min_delta)


def pass_interval(
    x: int, n: int, y: int, m: int, plan: Repetitions, k: int, min_delta: float
) -> Interval:
    """x of n passes minus y of m with its exact interval, read at the look after ``k`` runs
    per arm of ``plan``: the lower bound at the level the look spends on ``improved``, the upper
    at the level it spends on ``regressed``."""
    up = plan.confidence_at(k, lambda runs: most_extreme_difference(IMPROVED_ABOVE, runs))
    down = plan.confidence_at(k, lambda runs: most_extreme_difference(-min_delta, runs))
    low = exact_difference(x, n, y, m, up)
    high = low if down == up else exact_difference(x, n, y, m, down)
    return Interval(low.value, low.low, high.high)


def _pass_decides(x: int, y: int, n: int, limits: Thresholds) -> bool:
    """Whether x/n against y/n would decide at 95%, by the tests at the band's edges (the
    interval's bounds against them, without finding the bounds)."""
    tail = (1 - CONFIDENCE) / 2
    if difference_p_value(x, n, y, n, IMPROVED_ABOVE) <= tail:
        return True
    if difference_p_value(y, n, x, n, -limits.min_delta) <= tail:
        return True
    return (
        difference_p_value(x, n, y, n, limits.min_delta) <= tail
        and difference_p_value(y, n, x, n, -IMPROVED_ABOVE) <= tail
    )


def _projected_passes(arm: ArmSummary, n: int) -> int:
    """The passes of ``n`` runs at the arm's observed pass rate."""
    return round(n * arm.passes / arm.scored) if arm.scored else 0


def _projected_scores(arm: ArmSummary, n: int) -> list[float]:
    """``n`` runs repeating the arm's observed scores in order."""
    scores = list(arm.scores) or [0.0]
    return [scores[i % len(scores)] for i in range(n)]


def judge(
    scenario_id: str,
    skill: str,
    records: Sequence[RunRecord],
    *,
    comparison: bool,
    expected_skills: tuple[str, ...] = (),
    thresholds: Thresholds | None = None,
    skip: str | None = None,
    repetitions: Repetitions | None = None,
    require_skills_fired: bool = True,
    requires_recovery: bool = False,
    revisions: Sequence[tuple[str, str]] = (),
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
        repetitions: The plan the scenario ran with: with ``-k auto``, the share of the error
            rate the look after these runs may spend on a pass-rate claim (``None``: a fixed
            K, 95%).
        require_skills_fired: Whether passing needs ``expected_skills`` to fire; when not, their
            firing rate is still reported.
        requires_recovery: The world's ``recovers: true``: passing needs the with-skill runs'
            mean ``recovery`` score (over the runs where the fault fired) to reach ``min_score``.
        revisions: Each REF of ``--against`` with its arm (``previous``, ``previous-2``...):
            the records hold that arm, compared with the with-skill arm (the delta
            ``decide_by`` reads, with its interval, the same band). Each comparison is reported
            beside the verdict and does not change it.
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
            min_score=limits.min_score,
            pass_k=repetitions.first if repetitions is not None else None,
        )

    with_arm = summary(Arm.WITH_SKILL)
    without_arm = summary(Arm.WITHOUT_SKILL) if comparison else None
    arms = [a for a in (with_arm, without_arm) if a is not None]
    order = {Arm.WITH_SKILL: 0, Arm.WITHOUT_SKILL: 1}
    order.update({Arm(arm): 2 + index for index, (arm, _) in enumerate(revisions)})
    ordered = tuple(sorted(records, key=lambda r: (r.rep, order.get(r.arm, len(order)))))
    compared = []
    for arm, ref in revisions:
        revision_arm = summary(Arm(arm))
        moved: Against | None = None
        if skip is None:
            too_few = any(
                a.runs == 0 or a.scored == 0 or a.scored < SCORED_SHARE_NEEDED * a.runs
                for a in (with_arm, revision_arm)
            )
            # An arm with too few scored runs cannot be compared: the against-verdict is an
            # error.
            moved = (
                compare(ref, EMPTY)
                if too_few
                else compare(
                    ref,
                    pass_difference(with_arm, revision_arm, repetitions, limits.min_delta)
                    if limits.decide_by == DECIDE_BY_PASS
                    else mean_difference(with_arm.scores, revision_arm.scores),
                    limits.min_delta,
                )
            )
        compared.append(ScenarioRevision(arm, ref, revision_arm, moved))
    first = compared[0] if compared else None

    def verdict(
        kind: Verdict,
        passed: bool,
        delta: Interval,
        reasons: list[str],
        *,
        pass_delta: Interval = EMPTY,
        confidence: float = CONFIDENCE,
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
            pass_delta=pass_delta,
            decide_by=limits.decide_by,
            welch=welch_delta,
            runs_to_decide=needed,
            repetitions=repetitions,
            misses_a_bar=misses_a_bar,
            previous=None if first is None else first.summary,
            against=None if first is None else first.against,
            revisions=tuple(compared),
        )

    if skip is not None:
        return verdict(Verdict.SKIPPED, True, EMPTY, [skip])
    unscored = [
        f"{arm.arm.label}: {arm.unscored} of {arm.runs} runs unscored ({arm.errors[0]})"
        for arm in arms
        if arm.errors
    ]
    # Hangs are the agent's own: scored as failing runs, and said, since they are easy to miss.
    hangs = [
        f"{arm.arm.label}: {len(hung)} of {arm.runs} runs cut off while the agent's own tool "
        f"call was still running, counted as failing ({hung[0]})"
        for arm in arms
        if (hung := [r.hung for r in by_arm[arm.arm] if r.hung is not None])
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
    by_pass = limits.decide_by == DECIDE_BY_PASS
    pass_delta, confidence = EMPTY, CONFIDENCE
    if without_arm is not None:
        delta = mean_difference(with_arm.scores, without_arm.scores)
        pass_delta = pass_difference(with_arm, without_arm, repetitions, limits.min_delta)
        if by_pass:
            plan = repetitions or Repetitions(max(1, with_arm.runs))
            confidence = plan.confidence_at(
                max(with_arm.runs, without_arm.runs),
                lambda n: most_extreme_difference(IMPROVED_ABOVE, n),
            )
        decisive = pass_delta if by_pass else delta
        kind = delta_verdict(decisive, limits.min_delta)
        what = "pass-rate delta" if by_pass else "delta"
        shown = f"[{decisive.low:+.2f}, {decisive.high:+.2f}]"
        needed = None
        if kind == Verdict.REGRESSED:
            reasons.append(
                f"{what} {decisive.value:+.2f} {shown} is credibly below {limits.min_delta:+.2f}"
            )
        elif kind == Verdict.INCONCLUSIVE:
            assert without_arm is not None
            rival = without_arm

            def decides(n: int) -> bool:
                if by_pass:
                    return _pass_decides(
                        _projected_passes(with_arm, n), _projected_passes(rival, n), n, limits
                    )
                else:
                    projected = mean_difference(
                        _projected_scores(with_arm, n), _projected_scores(rival, n)
                    )
                return delta_verdict(projected, limits.min_delta) != Verdict.INCONCLUSIVE

            needed = runs_to_decide(decides, max(with_arm.scored, without_arm.scored))
            few = (
                f"; {with_arm.runs} runs per arm cannot decide a pass-rate comparison at "
                "95% (2/2 against 0/2 happens 6.25% of the time when nothing differs)"
                if by_pass and max(with_arm.scored, without_arm.scored) <= 2
                else ""
            )
            reasons.append(
                f"inconclusive: the {what}'s {level(confidence)} interval {shown} straddles "
                f"the band [{limits.min_delta:+.2f}, {IMPROVED_ABOVE:+.2f}]{few}; "
                + (
                    f"about {needed} runs per arm would likely decide it"
                    if needed is not None
                    else f"not within {PROJECTION_LIMIT} runs per arm if the "
                    + ("pass rates" if by_pass else "means")
                    + " stay as they are"
                )
            )
        welch_delta = welch(with_arm.scores, without_arm.scores)
    else:
        delta, welch_delta, needed = EMPTY, EMPTY, None
        met = mean_verdict(with_arm.mean, limits.min_score)
        kind = Verdict.SKILL_ONLY if met is not None else Verdict.INCONCLUSIVE
        shown = f"[{with_arm.mean.low:.2f}, {with_arm.mean.high:.2f}]"
        if met is None:
            needed = runs_to_decide(
                lambda n: (
                    mean_verdict(bounded_mean(_projected_scores(with_arm, n)), limits.min_score)
                    is not None
                ),
                with_arm.scored,
            )
            reasons.append(
                f"inconclusive: the with-skill mean's 95% interval {shown} straddles "
                f"min_score {limits.min_score:.2f}; "
                + (
                    f"about {needed} runs would likely decide it"
                    if needed is not None
                    else f"not within {PROJECTION_LIMIT} runs if the mean stays as it is"
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
    # fails the scenario, whatever its scores. The first by number, whatever order the runs
    # finished in, so that the reason read again from a results file is the same.
    for run in sorted(by_arm[Arm.WITH_SKILL], key=lambda run: run.rep):
        if run.authority_violations:
            bars.append(
                f"with-skill run #{run.rep + 1}: authority violation: "
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
        reasons + hangs + unscored,
        pass_delta=pass_delta,
        confidence=confidence,
        welch_delta=welch_delta,
        needed=needed,
        misses_a_bar=bool(bars),
    )
