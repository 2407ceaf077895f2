"""Canary scenarios: smoke tests that say whether the comparison can mean anything. Pure.

A suite marks a first smoke scenario ``canary: true`` (as the public scenario suites do). Canaries
run before every other scenario, with the skill only, for the first round of their repetition
plan: a smoke test asks whether the setup works at all (the skill loads, the tools answer, the
agent gets through the task), which is read from what its runs showed, not from an interval that
more runs would narrow.

A canary **passes** when at least half of its runs were scored, its with-skill mean reaches
``min_score``, and its expected skills fired in at least half of its scored runs (unless the
scenario sets ``require_skills_fired: false``). A passing canary's row reads ``skill-only``
``PASS``; a failing one ``FAIL`` with the reason ``canary failed: ...``.

When a canary fails, whatever broke it (a skill that does not load, a missing tool, an API that
refuses the key) is likely to break the other scenarios too, so their comparison results are
marked as not meaningful: the results file says ``"canary": {"passed": false, "failed": [ids],
"meaningful": false}``, the summary says it, and the run exits 3.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.verdict import SKILL_RATE_NEEDED, ScenarioVerdict, Verdict
from skilltest.stats import DIGITS


@dataclass(frozen=True)
class CanaryReport:
    """What the canaries of a run say about its comparison results."""

    scenarios: tuple[str, ...]
    """The id of every canary that ran (skipped ones left out), in suite order."""
    failed: tuple[str, ...]
    """The ids of the canaries that failed."""

    @property
    def passed(self) -> bool:
        """Whether every canary passed."""
        return not self.failed

    @property
    def meaningful(self) -> bool:
        """Whether the comparison results can be trusted: every canary passed."""
        return self.passed

    def to_dict(self) -> dict[str, Any]:
        """The results file's top-level ``canary`` object."""
        return {
            "passed": self.passed,
            "scenarios": list(self.scenarios),
            "failed": list(self.failed),
            "meaningful": self.meaningful,
        }


def judge_canary(
    verdict: ScenarioVerdict,
    *,
    min_score: float,
    expected_skills: Sequence[str],
    require_skills_fired: bool = True,
) -> ScenarioVerdict:
    """A canary's verdict, read from what its with-skill runs showed.

    Args:
        verdict: The scenario's verdict as :func:`skilltest.scenarios.verdict.judge` gave it
            (skill-only: a canary runs with the skill only).
        min_score: The with-skill mean the canary needs.
        expected_skills: The skills the scenario expects to fire (empty: none required).
        require_skills_fired: Whether those skills must fire.

    Returns:
        ``skill-only`` and passed, or the verdict as judged, failed, its first reason saying
        why the canary failed.
    """
    if verdict.verdict == Verdict.SKIPPED:
        return verdict
    arm = verdict.with_skill
    problems = []
    if verdict.verdict == Verdict.ERROR:
        problems.append(verdict.reasons[0] if verdict.reasons else "no run was scored")
    else:
        mean = round(arm.mean.value or 0.0, DIGITS)
        if mean < min_score:
            problems.append(f"with-skill mean {mean:.2f} is below {min_score:.2f}")
        rate = round(arm.skill_rate.value or 0.0, DIGITS)
        if expected_skills and require_skills_fired and rate < SKILL_RATE_NEEDED:
            problems.append(
                f"expected skills {', '.join(expected_skills)} fired in "
                f"{arm.skills_fired}/{arm.scored} runs"
            )
    if problems:
        shown = tuple(f"canary failed: {problem}" for problem in problems)
        return replace(
            verdict,
            passed=False,
            misses_a_bar=True,
            reasons=(*shown, *(r for r in verdict.reasons if r not in problems)),
        )
    # Only what the runs showed is kept: the unscored runs, not an interval's indecision.
    unscored = tuple(r for r in verdict.reasons if r.startswith(f"{Arm.WITH_SKILL.label}: "))
    return replace(
        verdict,
        verdict=Verdict.SKILL_ONLY,
        passed=True,
        reasons=unscored,
        misses_a_bar=False,
        runs_to_decide=None,
    )


def canary_report(
    results: Sequence[ScenarioVerdict], canaries: Collection[tuple[str, str]]
) -> CanaryReport | None:
    """What the canaries among ``results`` say; ``None`` when no canary ran.

    Args:
        results: Every scenario's verdict.
        canaries: ``(skill, scenario id)`` of each canary scenario.
    """
    ran = [
        r for r in results if (r.skill, r.scenario_id) in canaries and r.verdict != Verdict.SKIPPED
    ]
    if not ran:
        return None
    return CanaryReport(
        scenarios=tuple(r.scenario_id for r in ran),
        failed=tuple(r.scenario_id for r in ran if not r.passed),
    )


def render_canary(report: CanaryReport) -> str:
    """The summary's canary line."""
    count = len(report.scenarios)
    if report.passed:
        return f"canary: {count} of {count} passed; the comparison results are meaningful"
    return (
        f"canary FAILED: {', '.join(report.failed)} ({len(report.failed)} of {count}); "
        "the comparison results are not meaningful (exit 3)"
    )
