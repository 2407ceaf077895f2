"""From runs to verdicts: pass rates, RED rates, their intervals. Pure.

A with-skill run *passes* when every required pattern matches and no anti-pattern does; a
baseline run is *RED* when it does not pass those same criteria (``baseline_red: criteria``, the
default) or, with ``baseline_red: expected_patterns``, when it matches every expected pattern; a
baseline run that is not RED counts as passing. Per arm the pass rate has a
Wilson interval; the *lift*, with-skill pass rate minus baseline pass rate, has Newcombe's
interval (:mod:`skilltest.stats`). Verdicts, in this order:

``error``         an arm has fewer than half of its runs judged (API errors, a crashed CLI)
``no-steer``      the with-skill pass rate's interval lies below ``threshold``: with the skill,
                  the model credibly misses the bar
``not-red``       the baseline's RED rate interval lies below 0.5: without the skill the model
                  credibly passes most of the time, so the test measures nothing
``steers``        the lift's interval lies above 0 (the skill credibly changes the answer) and
                  the observed with-skill pass rate reaches ``threshold``
``inconclusive``  none of these is decided yet: more runs would tell
``skipped``       the suite skips the scenario
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skilltest.limits import MAX_REPETITIONS
from skilltest.pressure.judge import Judgement
from skilltest.pressure.suite import (
    RED_BY_CRITERIA,
    RED_BY_EXPECTED,
    RED_RATE_NEEDED,
    PressureScenario,
)
from skilltest.repetitions import Repetitions
from skilltest.revision import PREVIOUS, Against, compare
from skilltest.stats import CONFIDENCE, DIGITS, EMPTY, Interval, newcombe, wilson
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
    """For the with-skill arm the pass rate; for the baseline the RED rate (not passing)."""
    expected: Interval
    """Baseline only: how often every ``expected_patterns`` entry matched."""


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
    """With-skill pass rate minus baseline pass rate, with Newcombe's interval."""
    confidence: float = CONFIDENCE
    """The confidence level of the intervals the verdict was read from."""
    runs_to_decide: int | None = None
    """For an inconclusive verdict: about how many runs per arm would likely decide it at 95%
    if the rates stayed as they are; ``None`` when more runs are unlikely to."""
    repetitions: Repetitions | None = None
    """The repetition plan the scenario ran with."""
    previous: ArmStats | None = None
    """Figures of the previous revision's skill (``--against REF``); ``None`` without it."""
    against: Against | None = None
    """With-skill pass rate minus the previous revision's, and its verdict (``--against``)."""

    @property
    def failed(self) -> bool:
        """Whether the verdict fails the suite (``not-red`` fails only with ``--strict``,
        ``inconclusive`` unless ``--allow-inconclusive``)."""
        return self.verdict in FAILING_VERDICTS

    @property
    def k(self) -> int:
        """Runs per arm taken (the most of either arm)."""
        return max(
            (
                sum(1 for r in self.runs if r.arm == arm)
                for arm in (WITH_SKILL, WITHOUT_SKILL, PREVIOUS)
            ),
            default=0,
        )


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


def _arm_stats(frame: pd.DataFrame, arm: str, confidence: float) -> ArmStats:
    rows = frame[frame["arm"] == arm]
    done = rows[rows["completed"]]
    completed = len(done)
    # A baseline run passes when it is not RED (baseline_red decides which runs are); the
    # previous revision's skill is judged as the current one is.
    skilled = arm != WITHOUT_SKILL
    passed = int(done["passed"].sum()) if skilled else completed - int(done["red"].sum())
    successes = passed if skilled else completed - passed
    expected_rows = done[done["expected_defined"]]
    return ArmStats(
        runs=completed,
        errors=len(rows) - completed,
        passed=passed,
        rate=wilson(successes, completed, confidence),
        expected=wilson(int(expected_rows["expected_matched"].sum()), len(expected_rows)),
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
                f"{_shown(with_stats.rate)} vs threshold {_percent(threshold)}"
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
    threshold: float,
) -> tuple[str, Interval]:
    """The verdict and the lift from the two arms' intervals (``red_rate`` None: skill-only)."""
    assert with_rate.value is not None and with_rate.high is not None
    if round(with_rate.high, DIGITS) < threshold:
        return NO_STEER, EMPTY if red_rate is None else _lift(with_rate, red_rate)
    if red_rate is None:
        # Skill-only: there is no lift to measure; the with-skill rate must clear the bar.
        assert with_rate.low is not None
        return (STEERS if round(with_rate.low, DIGITS) >= threshold else INCONCLUSIVE), EMPTY
    lift = _lift(with_rate, red_rate)
    assert red_rate.high is not None and lift.low is not None
    if round(red_rate.high, DIGITS) < RED_RATE_NEEDED:
        return NOT_RED, lift
    if round(lift.low, DIGITS) > 0 and round(with_rate.value, DIGITS) >= threshold:
        return STEERS, lift
    return INCONCLUSIVE, lift


def _lift(with_rate: Interval, red_rate: Interval) -> Interval:
    """Pass rate with the skill minus pass rate without it (1 - RED rate)."""
    assert red_rate.value is not None and red_rate.low is not None and red_rate.high is not None
    baseline_pass = Interval(1 - red_rate.value, 1 - red_rate.high, 1 - red_rate.low)
    return newcombe(with_rate, baseline_pass)


def aggregate(
    scenario: PressureScenario,
    skill: str,
    runs: Sequence[PressureRun],
    *,
    skill_only: bool = False,
    complete: bool = True,
    confidence: float = CONFIDENCE,
    repetitions: Repetitions | None = None,
    against: str | None = None,
) -> ScenarioResult:
    """Turns a scenario's runs into its figures and verdict.

    Args:
        scenario: The scenario.
        skill: The skill's name.
        runs: Every run of both arms.
        skill_only: Whether the baseline was left out.
        complete: False when the suite was interrupted before every run finished.
        confidence: The intervals' confidence level (adaptive repetitions raise it).
        repetitions: The plan the scenario ran with, recorded with the result.
        against: The REF of ``--against``: the runs hold a ``previous`` arm to compare with.
    """
    frame = runs_frame(runs)
    with_stats = _arm_stats(frame, WITH_SKILL, confidence)
    without_stats = None if skill_only else _arm_stats(frame, WITHOUT_SKILL, confidence)
    arms = [a for a in (with_stats, without_stats) if a is not None]
    lift, needed = EMPTY, None
    if scenario.skip:
        verdict = SKIPPED
    elif any(a.runs == 0 or a.runs < JUDGED_SHARE_NEEDED * (a.runs + a.errors) for a in arms):
        verdict = ERROR
    else:
        red = without_stats.rate if without_stats is not None else None
        verdict, lift = _decide(with_stats.rate, red, scenario.threshold)
        if verdict == INCONCLUSIVE:
            with_p = with_stats.rate.value or 0.0
            red_p = None if without_stats is None else (without_stats.rate.value or 0.0)

            def decides(n: int) -> bool:
                projected_red = None if red_p is None else wilson(red_p * n, n)
                return _decide(wilson(with_p * n, n), projected_red, scenario.threshold)[0] != (
                    INCONCLUSIVE
                )

            needed = next(
                (n for n in range(with_stats.runs + 1, MAX_REPETITIONS + 1) if decides(n)), None
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
    previous, moved = None, None
    if against is not None:
        previous = _arm_stats(frame, PREVIOUS, confidence)
        if scenario.skip:
            moved = None
        elif any(
            a.runs < JUDGED_SHARE_NEEDED * (a.runs + a.errors) for a in (with_stats, previous)
        ):
            moved = compare(against, EMPTY, EMPTY)  # too few judged runs to compare: error
        else:
            moved = compare(against, with_stats.rate, previous.rate)
    return ScenarioResult(
        scenario=scenario,
        skill=skill,
        verdict=verdict,
        with_skill=with_stats,
        without_skill=without_stats,
        runs=tuple(sorted(runs, key=lambda r: (_ARM_ORDER.get(r.arm, 3), r.rep))),
        detail=detail,
        complete=complete,
        lift=lift,
        confidence=confidence,
        runs_to_decide=needed,
        repetitions=repetitions,
        previous=previous,
        against=moved,
    )
