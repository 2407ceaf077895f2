"""From runs to verdicts: pass rates, RED rates, Wilson intervals. Pure.

Verdicts:

``steers``    the with-skill pass rate reaches the threshold and the baseline is RED at least
              half the time: the skill changes the answer.
``not-red``   the with-skill arm passes but the baseline mostly passes too: the test measures
              nothing, the model already does this without the skill.
``no-steer``  the with-skill pass rate is below the threshold.
``error``     an arm has no run that completed.
``skipped``   the suite skips the scenario.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from skilltest.pressure.judge import Judgement
from skilltest.pressure.suite import RED_RATE_NEEDED, PressureScenario
from skilltest.stats import DIGITS, Interval, wilson
from skilltest.transcript import Transcript

WITH_SKILL = "with_skill"
WITHOUT_SKILL = "without_skill"

STEERS = "steers"
NOT_RED = "not-red"
NO_STEER = "no-steer"
ERROR = "error"
SKIPPED = "skipped"
FAILING_VERDICTS = frozenset({NO_STEER, ERROR})


@dataclass(frozen=True)
class PressureRun:
    """One answer from one arm, judged."""

    scenario_id: str
    """The scenario."""
    arm: str
    """``with_skill`` or ``without_skill``."""
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

    @property
    def completed(self) -> bool:
        """The run produced an answer that was judged."""
        return self.judgement is not None


@dataclass(frozen=True)
class ArmStats:
    """One arm's figures over its K runs."""

    runs: int
    """Runs that completed (errors excluded)."""
    errors: int
    """Runs that did not complete."""
    passed: int
    """Completed runs that met the with-skill criteria."""
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

    @property
    def failed(self) -> bool:
        """Whether the verdict fails the suite (``not-red`` fails only with ``--strict``)."""
        return self.verdict in FAILING_VERDICTS


def runs_frame(runs: Sequence[PressureRun]) -> pd.DataFrame:
    """The tidy table: one row per (scenario, arm, repetition)."""
    rows = [
        {
            "scenario": run.scenario_id,
            "arm": run.arm,
            "rep": run.rep,
            "completed": run.completed,
            "passed": bool(run.judgement and run.judgement.passed),
            "expected_defined": bool(run.judgement and run.judgement.expected_matched is not None),
            "expected_matched": bool(run.judgement and run.judgement.expected_matched),
        }
        for run in runs
    ]
    columns = ["scenario", "arm", "rep", "completed", "passed", "expected_defined"]
    return pd.DataFrame(rows, columns=[*columns, "expected_matched"])


def _arm_stats(frame: pd.DataFrame, arm: str) -> ArmStats:
    rows = frame[frame["arm"] == arm]
    done = rows[rows["completed"]]
    completed = len(done)
    passed = int(done["passed"].sum())
    successes = passed if arm == WITH_SKILL else completed - passed
    expected_rows = done[done["expected_defined"]]
    return ArmStats(
        runs=completed,
        errors=len(rows) - completed,
        passed=passed,
        rate=wilson(successes, completed),
        expected=wilson(int(expected_rows["expected_matched"].sum()), len(expected_rows)),
    )


def _most_common(items: Sequence[str]) -> tuple[str, int] | None:
    return Counter(items).most_common(1)[0] if items else None


def _detail(verdict: str, runs: Sequence[PressureRun], with_stats: ArmStats) -> str:
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
        passed = sum(1 for r in base if r.judgement and r.judgement.passed)
        return f"baseline already passes in {passed}/{len(base)} runs without the skill"
    failed = sum(1 for r in runs if not r.completed)
    return f"{failed} run(s) failed and were left out" if failed else ""


def aggregate(
    scenario: PressureScenario,
    skill: str,
    runs: Sequence[PressureRun],
    *,
    skill_only: bool = False,
    complete: bool = True,
) -> ScenarioResult:
    """Turns a scenario's runs into its figures and verdict."""
    frame = runs_frame(runs)
    with_stats = _arm_stats(frame, WITH_SKILL)
    without_stats = None if skill_only else _arm_stats(frame, WITHOUT_SKILL)
    if scenario.skip:
        verdict = SKIPPED
    elif with_stats.runs == 0 or (without_stats is not None and without_stats.runs == 0):
        verdict = ERROR
    elif round(with_stats.rate.value or 0.0, DIGITS) < scenario.threshold:
        verdict = NO_STEER
    elif without_stats is None or round(without_stats.rate.value or 0.0, DIGITS) >= RED_RATE_NEEDED:
        verdict = STEERS
    else:
        verdict = NOT_RED
    detail = scenario.skip or "" if verdict == SKIPPED else _detail(verdict, runs, with_stats)
    return ScenarioResult(
        scenario=scenario,
        skill=skill,
        verdict=verdict,
        with_skill=with_stats,
        without_skill=without_stats,
        runs=tuple(sorted(runs, key=lambda r: (r.arm != WITH_SKILL, r.rep))),
        detail=detail,
        complete=complete,
    )
