"""From runs to verdicts: pass rates, RED rates, their intervals. Pure.

A with-skill run *passes* when every required pattern matches and no anti-pattern does; a
baseline run is *RED* when it does not pass those same criteria (``baseline_red: criteria``, the
default) or, with ``baseline_red: expected_patterns``, when it matches every expected pattern; a
baseline run that is not RED counts as passing. Per arm the pass rate has an exact
Clopper-Pearson interval; the *lift*, with-skill pass rate minus baseline pass rate, has an
exact unconditional interval (:mod:`skilltest.stats.exact`). The threshold is read through an
indifference zone [``threshold - 0.1``, ``threshold``) (:data:`skilltest.decision.STEER_MARGIN`):
``steers`` and ``no-steer`` are mirror images across it. Verdicts, in this order:

``error``         an arm has fewer than half of its runs judged (API errors, a crashed CLI)
``no-steer``      the with-skill pass rate's interval lies below ``threshold``: with the skill,
                  the model credibly misses the bar
``not-red``       the baseline's RED rate interval lies below 0.5: without the skill the model
                  credibly passes most of the time, so the test measures nothing
``steers``        the lift's interval lies above 0 (the skill credibly changes the answer) and
                  the with-skill pass rate's interval lies at or above ``threshold - 0.1``
``inconclusive``  none of these is decided yet: more runs would tell
``skipped``       the suite skips the scenario

Each claim is wrong at most 2.5% of the time at every K, with ``-k auto`` too (each bound is
read at the share of the error rate its claim may spend at that look: see
:mod:`skilltest.repetitions`): ``steers`` when the true with-skill rate is 0.1 or more below the
threshold, or when the skill changes nothing; ``no-steer`` when the true rate reaches the
threshold. The price is runs: with a threshold of 0.8, ``steers`` needs 11 passing runs of 11
(0.7 ** 11 < 2.5%), whatever the method, since a true rate of 0.7 passes 10 runs of 10 2.8% of
the time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skilltest.decision import STEER_MARGIN
from skilltest.pressure.judge import Judgement
from skilltest.pressure.suite import (
    RED_BY_CRITERIA,
    RED_BY_EXPECTED,
    RED_RATE_NEEDED,
    PressureScenario,
)
from skilltest.repetitions import Repetitions
from skilltest.revision import PREVIOUS, Against, compare
from skilltest.stats import (
    CONFIDENCE,
    DIGITS,
    EMPTY,
    Interval,
    clopper_pearson,
    difference_p_value,
    exact_difference,
    most_extreme_difference,
    most_extreme_rate,
)
from skilltest.transcript import Transcript

if TYPE_CHECKING:
    import pandas as pd

WITH_SKILL = "with_skill"
WITHOUT_SKILL = "without_skill"

STEERS = "steers"
NOT_RED = "not-red"
NO_STEER = "no-steer"
INCONCLUSIVE = "inconclusive"
ERROR = "error"
SKIPPED = "skipped"
FAILING_VERDICTS = frozenset({NO_STEER, ERROR})
"""Verdicts that fail the suite (``inconclusive`` fails unless --allow-inconclusive,
``not-red`` only with --strict)."""
DECIDED = frozenset({STEERS, NOT_RED, NO_STEER, ERROR})
"""Verdicts that end adaptive repetitions."""
_ARM_ORDER = {WITH_SKILL: 0, WITHOUT_SKILL: 1, PREVIOUS: 2}
"""Runs are kept in this arm order, then by repetition."""
JUDGED_SHARE_NEEDED = 0.5
"""An arm with fewer than this share of its runs judged gives ``error``."""
PROJECTION_LIMIT = 200
"""The most runs per arm the "about N runs would decide it" projection looks ahead."""


@dataclass(frozen=True)
class PressureRun:
    """One answer from one arm, judged."""

    scenario_id: str
    """The scenario."""
    arm: str
    """``with_skill``, ``without_skill`` or ``previous`` (the skill at ``--against REF``)."""
    rep: int
    """Repetition number, from 1."""
    transcript: Transcript
    """What the model answered."""
    judgement: Judgement | None
    """What the patterns found; ``None`` when the run failed or could not be judged."""
    error: str | None = None
    """Why the run has no judgement (an API error, a pattern over its time limit)."""
    pattern_error: bool = False
    """The error is a bad pattern in the suite, not a failure of the model or the API."""
    red: bool | None = None
    """Baseline only: whether the run is RED under the scenario's ``baseline_red`` rule;
    ``None`` for the with-skill arm (a judged baseline run without it: RED when not passed)."""
    trace: str | None = None
    """The run's trace file (``--output-dir``), ``None`` when no trace was kept."""

    @property
    def completed(self) -> bool:
        """The run produced an answer that was judged."""
        return self.judgement is not None


@dataclass(frozen=True)
class ArmStats:
    """One arm's figures over its K runs."""

    runs: int
    """Runs that completed and were judged (errors excluded)."""
    errors: int
    """Runs that did not complete."""
    passed: int
    """Completed runs that passed: with the skill, that met the criteria; for the baseline,
    that were not RED (with ``baseline_red: criteria``, the same thing)."""
    rate: Interval
    """For the with-skill arm the pass rate; for the baseline the RED rate (not passing); with
    its exact interval, each bound at the level of the claim it decides."""
    expected: Interval
    """Baseline only: how often every ``expected_patterns`` entry matched."""


_NO_RUNS = ArmStats(runs=0, errors=0, passed=0, rate=EMPTY, expected=EMPTY)
"""The figures of an arm that has none."""


@dataclass(frozen=True)
class ScenarioResult:
    """One scenario's verdict and the runs behind it."""

    scenario: PressureScenario
    """The scenario."""
    skill: str
    """The skill's name."""
    verdict: str
    """``steers``, ``not-red``, ``no-steer``, ``error`` or ``skipped``."""
    with_skill: ArmStats
    """Figures of the with-skill arm."""
    without_skill: ArmStats | None
    """Figures of the baseline; ``None`` with ``--skill-only``."""
    runs: tuple[PressureRun, ...]
    """Every run, in arm and repetition order."""
    detail: str
    """One line saying why, for the table."""
    complete: bool = True
    """False when the suite was interrupted before every run finished."""
    lift: Interval = EMPTY
    """With-skill pass rate minus baseline pass rate, with its exact unconditional interval."""
    confidence: float = CONFIDENCE
    """The two-sided level of the lift's interval (under ``-k auto``, one minus twice the share
    of the error rate the look spends on ``steers``)."""
    runs_to_decide: int | None = None
    """For an inconclusive verdict: about how many runs per arm would likely decide it at 95%
    if the rates stayed as they are; ``None`` when more runs are unlikely to."""
    repetitions: Repetitions | None = None
    """The repetition plan the scenario ran with."""
    previous: ArmStats | None = None
    """Figures of the previous revision's skill (``--against REF``); ``None`` without it."""
    against: Against | None = None
    """With-skill pass rate minus the previous revision's, and its verdict (``--against``)."""
    revisions: tuple[RevisionResult, ...] = ()
    """Every REF of ``--against`` (the first is also ``previous`` and ``against``), each
    compared with the with-skill arm."""

    def __post_init__(self) -> None:
        if not self.revisions and self.against is not None:
            # Built with one REF's previous and against only: that REF is the one revision.
            first = RevisionResult(
                PREVIOUS, self.against.ref, self.previous or _NO_RUNS, self.against
            )
            object.__setattr__(self, "revisions", (first,))

    @property
    def failed(self) -> bool:
        """Whether the verdict fails the suite (``not-red`` fails only with ``--strict``,
        ``inconclusive`` unless ``--allow-inconclusive``)."""
        return self.verdict in FAILING_VERDICTS

    @property
    def k(self) -> int:
        """Runs per arm taken (the most of either arm)."""
        return max(
            (sum(1 for r in self.runs if r.arm == arm) for arm in {r.arm for r in self.runs}),
            default=0,
        )


@dataclass(frozen=True)
class RevisionResult:
    """A scenario's arm of one ``--against`` REF and how the current skill compares with it."""

    arm: str
    """``previous``, ``previous-2``...: the arm that ran the skill at ``ref``."""
    ref: str
    """The revision or folder as the user gave it."""
    stats: ArmStats
    """The arm's figures."""
    against: Against | None
    """With-skill pass rate minus this revision's, and its verdict; ``None`` when skipped."""


def runs_frame(runs: Sequence[PressureRun]) -> pd.DataFrame:
    """The tidy table: one row per (scenario, arm, repetition)."""
    import pandas as pd  # on first use: it takes longer to import than a command to start

    rows = [
        {
            "scenario": run.scenario_id,
            "arm": run.arm,
            "rep": run.rep,
            "completed": run.completed,
            "passed": bool(run.judgement and run.judgement.passed),
            "red": bool(
                run.judgement and (run.red if run.red is not None else not run.judgement.passed)
            ),
            "expected_defined": bool(run.judgement and run.judgement.expected_matched is not None),
            "expected_matched": bool(run.judgement and run.judgement.expected_matched),
        }
        for run in runs
    ]
    columns = ["scenario", "arm", "rep", "completed", "passed", "red", "expected_defined"]
    return pd.DataFrame(rows, columns=[*columns, "expected_matched"])


def _arm_stats(frame: pd.DataFrame, arm: str, levels: tuple[float, float]) -> ArmStats:
    """One arm's counts; its rate's lower bound at ``levels[0]``, upper at ``levels[1]``."""
    rows = frame[frame["arm"] == arm]
    # As booleans: a skipped scenario's empty table has columns of no type, and indexing by
    # one of those would select columns, not rows.
    done = rows[rows["completed"].astype(bool)]
    completed = len(done)
    # A baseline run passes when it is not RED (baseline_red decides which runs are); the
    # previous revision's skill is judged as the current one is.
    skilled = arm != WITHOUT_SKILL
    passed = int(done["passed"].sum()) if skilled else completed - int(done["red"].sum())
    successes = passed if skilled else completed - passed
    expected_rows = done[done["expected_defined"].astype(bool)]
    return ArmStats(
        runs=completed,
        errors=len(rows) - completed,
        passed=passed,
        rate=_bounds(successes, completed, levels),
        expected=clopper_pearson(int(expected_rows["expected_matched"].sum()), len(expected_rows)),
    )


def _bounds(successes: int, n: int, levels: tuple[float, float]) -> Interval:
    """A rate's Clopper-Pearson interval, the lower bound at ``levels[0]``, the upper at
    ``levels[1]``."""
    low = clopper_pearson(successes, n, levels[0])
    high = low if levels[1] == levels[0] else clopper_pearson(successes, n, levels[1])
    return Interval(low.value, low.low, high.high)


@dataclass(frozen=True)
class Levels:
    """The two-sided level each claim's bound is read at, at one look."""

    steers: float = CONFIDENCE
    """The with-skill rate's lower bound (at or above ``threshold - 0.1``)."""
    no_steer: float = CONFIDENCE
    """The with-skill rate's upper bound (below ``threshold``)."""
    not_red: float = CONFIDENCE
    """The RED rate's upper bound (below 0.5)."""
    lift: float = CONFIDENCE
    """The lift's bounds (above 0; below 0 for the mirror image)."""

    @classmethod
    def at(cls, repetitions: Repetitions | None, k: int, threshold: float) -> Levels:
        """The levels of the look after ``k`` runs per arm (95% each at a fixed K)."""
        if repetitions is None or not repetitions.adaptive:
            return cls()
        floor = threshold - STEER_MARGIN
        return cls(
            steers=repetitions.confidence_at(k, lambda n: most_extreme_rate(floor, n)),
            no_steer=repetitions.confidence_at(k, lambda n: most_extreme_rate(1 - threshold, n)),
            not_red=repetitions.confidence_at(k, lambda n: most_extreme_rate(RED_RATE_NEEDED, n)),
            lift=repetitions.confidence_at(k, lambda n: most_extreme_difference(0.0, n)),
        )


def _most_common(items: Sequence[str]) -> tuple[str, int] | None:
    return Counter(items).most_common(1)[0] if items else None


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.0f}%"


def _shown(interval: Interval) -> str:
    return f"[{_percent(interval.low)}–{_percent(interval.high)}]"


def _detail(
    verdict: str,
    runs: Sequence[PressureRun],
    with_stats: ArmStats,
    without_stats: ArmStats | None,
    lift: Interval,
    needed: int | None,
    threshold: float,
    red_rule: str = RED_BY_CRITERIA,
) -> str:
    with_runs = [r for r in runs if r.arm == WITH_SKILL and r.judgement is not None]
    if verdict == ERROR:
        errors = [r.error for r in runs if r.error]
        return errors[0] if errors else "no run completed"
    if verdict == NO_STEER:
        missing = _most_common([p for r in with_runs if r.judgement for p in r.judgement.missing])
        anti = _most_common([p for r in with_runs if r.judgement for p in r.judgement.anti_matched])
        parts = []
        if missing:
            parts.append(f"missing {missing[0]} in {missing[1]}/{with_stats.runs}")
        if anti:
            parts.append(f"anti-pattern {anti[0]} matched in {anti[1]}/{with_stats.runs}")
        return "; ".join(parts)
    if verdict == NOT_RED:
        base = [r for r in runs if r.arm == WITHOUT_SKILL and r.judgement is not None]
        if red_rule == RED_BY_EXPECTED:
            red = sum(1 for r in base if r.red)
            return (
                f"baseline matches expected_patterns in only {red}/{len(base)} runs "
                "without the skill"
            )
        passed = sum(1 for r in base if r.judgement and r.judgement.passed)
        return f"baseline already passes in {passed}/{len(base)} runs without the skill"
    if verdict == INCONCLUSIVE:
        if without_stats is not None and (lift.low or 0.0) <= 0:
            shown = f"[{_signed(lift.low)}, {_signed(lift.high)}]"
            why = f"lift {_signed(lift.value)} {shown} does not clear 0"
        else:
            why = (
                f"with-skill pass rate {_percent(with_stats.rate.value)} "
                f"{_shown(with_stats.rate)} is not credibly at or above "
                f"{_percent(threshold - STEER_MARGIN)} (threshold {_percent(threshold)} "
                f"less {_percent(STEER_MARGIN)})"
            )
        more = (
            f"about {needed} runs per arm would likely decide it"
            if needed is not None
            else "more runs are unlikely to decide it"
        )
        return f"inconclusive: {why}; {more}"
    failed = sum(1 for r in runs if not r.completed)
    return f"{failed} run(s) failed and were left out" if failed else ""


def _decide(
    with_rate: Interval,
    red_rate: Interval | None,
    lift: Interval,
    threshold: float,
) -> str:
    """The verdict from the with-skill pass rate, the baseline's RED rate (``None``:
    skill-only) and the lift, each with the bounds of its claims."""
    assert with_rate.low is not None and with_rate.high is not None
    if round(with_rate.high, DIGITS) < threshold:
        return NO_STEER
    credible = round(with_rate.low, DIGITS) >= round(threshold - STEER_MARGIN, DIGITS)
    if red_rate is None:
        # Skill-only: there is no lift to measure; the with-skill rate must clear the bar.
        return STEERS if credible else INCONCLUSIVE
    assert red_rate.high is not None and lift.low is not None
    if round(red_rate.high, DIGITS) < RED_RATE_NEEDED:
        return NOT_RED
    if round(lift.low, DIGITS) > 0 and credible:
        return STEERS
    return INCONCLUSIVE


def _lift(
    with_passed: int, with_runs: int, base_passed: int, base_runs: int, level: float
) -> Interval:
    """Pass rate with the skill minus pass rate without it, with its exact interval."""
    return exact_difference(with_passed, with_runs, base_passed, base_runs, level)


def aggregate(
    scenario: PressureScenario,
    skill: str,
    runs: Sequence[PressureRun],
    *,
    skill_only: bool = False,
    complete: bool = True,
    repetitions: Repetitions | None = None,
    against: str | None = None,
    revisions: Sequence[tuple[str, str]] = (),
) -> ScenarioResult:
    """Turns a scenario's runs into its figures and verdict.

    Args:
        scenario: The scenario.
        skill: The skill's name.
        runs: Every run of both arms.
        skill_only: Whether the baseline was left out.
        complete: False when the suite was interrupted before every run finished.
        repetitions: The plan the scenario ran with: with ``-k auto`` it sets the share of
            the error rate each claim may spend at this look; ``None``: a fixed K, 95%.
        against: The REF of ``--against``: the runs hold a ``previous`` arm to compare with.
        revisions: Every REF of ``--against`` with its arm (``previous``, ``previous-2``...),
            when given instead of ``against``.
    """
    if against is not None and not revisions:
        revisions = ((PREVIOUS, against),)
    # In arm and repetition order, as the results file keeps them: the detail (the first error,
    # the most common missing pattern) is the same whichever run finished first.
    runs = sorted(runs, key=lambda r: (_ARM_ORDER.get(r.arm, 3), r.arm, r.rep))
    frame = runs_frame(runs)
    k = max(
        (sum(1 for r in runs if r.arm == arm) for arm in (WITH_SKILL, WITHOUT_SKILL)), default=0
    )
    levels = Levels.at(repetitions, k, scenario.threshold)
    with_stats = _arm_stats(frame, WITH_SKILL, (levels.steers, levels.no_steer))
    without_stats = (
        None if skill_only else _arm_stats(frame, WITHOUT_SKILL, (levels.not_red, levels.not_red))
    )
    arms = [a for a in (with_stats, without_stats) if a is not None]
    lift, needed = EMPTY, None
    if scenario.skip:
        verdict = SKIPPED
    elif any(a.runs == 0 or a.runs < JUDGED_SHARE_NEEDED * (a.runs + a.errors) for a in arms):
        verdict = ERROR
    else:
        red = without_stats.rate if without_stats is not None else None
        if without_stats is not None:
            lift = _lift(
                with_stats.passed,
                with_stats.runs,
                without_stats.passed,
                without_stats.runs,
                levels.lift,
            )
        verdict = _decide(with_stats.rate, red, lift, scenario.threshold)
        if verdict == INCONCLUSIVE:
            with_p = with_stats.passed / with_stats.runs
            base_p = None if without_stats is None else without_stats.passed / without_stats.runs

            def decides(n: int) -> bool:
                passes = round(with_p * n)
                base = None if base_p is None else round(base_p * n)
                # The lift by its test at 0 (the only bound the verdict reads), not its interval.
                credible_lift = base is not None and (
                    difference_p_value(passes, n, base, n, 0.0) <= (1 - CONFIDENCE) / 2
                )
                return (
                    _decide(
                        clopper_pearson(passes, n),
                        None if base is None else clopper_pearson(n - base, n),
                        EMPTY
                        if base is None
                        else Interval(None, 1.0 if credible_lift else 0.0, 1.0),
                        scenario.threshold,
                    )
                    != INCONCLUSIVE
                )

            needed = next(
                (
                    n
                    for n in range(with_stats.runs + 1, PROJECTION_LIMIT + 1)
                    if n <= 30 or n % 10 == 0
                    if decides(n)
                ),
                None,
            )
    detail = (
        scenario.skip or ""
        if verdict == SKIPPED
        else _detail(
            verdict,
            runs,
            with_stats,
            without_stats,
            lift,
            needed,
            scenario.threshold,
            scenario.baseline_red,
        )
    )
    compared = []
    for arm, ref in revisions:
        previous = _arm_stats(frame, arm, (levels.steers, levels.no_steer))
        moved: Against | None
        if scenario.skip:
            moved = None
        elif any(
            a.runs == 0 or a.runs < JUDGED_SHARE_NEEDED * (a.runs + a.errors)
            for a in (with_stats, previous)
        ):
            moved = compare(ref, EMPTY)  # too few judged runs to compare: error
        else:
            moved = compare(
                ref,
                _lift(
                    with_stats.passed, with_stats.runs, previous.passed, previous.runs, levels.lift
                ),
            )
        compared.append(RevisionResult(arm, ref, previous, moved))
    return ScenarioResult(
        scenario=scenario,
        skill=skill,
        verdict=verdict,
        with_skill=with_stats,
        without_skill=without_stats,
        runs=tuple(runs),
        detail=detail,
        complete=complete,
        lift=lift,
        confidence=levels.lift,
        runs_to_decide=needed,
        repetitions=repetitions,
        previous=compared[0].stats if compared else None,
        against=compared[0].against if compared else None,
        revisions=tuple(compared),
    )
