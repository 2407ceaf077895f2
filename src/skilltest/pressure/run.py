"""Running pressure suites: every (scenario, arm, repetition) through one runner, ``-j`` at a time.

Scenarios finish in order of completion; each finished scenario is handed to ``on_result`` at
once, so results files can be rewritten as the suite goes and an interrupted suite loses nothing
that had finished.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from skilltest.errors import PatternError
from skilltest.pressure.judge import judge
from skilltest.pressure.suite import PressureScenario, PressureSuite
from skilltest.pressure.verdict import (
    WITH_SKILL,
    WITHOUT_SKILL,
    PressureRun,
    ScenarioResult,
    aggregate,
)
from skilltest.report.progress import Progress
from skilltest.runners.base import TurnRequest, TurnRunner
from skilltest.transcript import Transcript

DEFAULT_MODEL = os.environ.get("SKILLTEST_MODEL", "claude-sonnet-5-5")


@dataclass
class SuiteProgress:
    """What has happened so far; readable after an interruption."""

    results: list[ScenarioResult] = field(default_factory=list)
    """Scenarios whose runs have all finished."""
    partial: dict[tuple[str, str], list[PressureRun]] = field(default_factory=dict)
    """Runs of scenarios still in flight, by (suite file, scenario id)."""


def _judge_run(
    scenario: PressureScenario, arm: str, rep: int, transcript: Transcript
) -> PressureRun:
    if transcript.error is not None:
        return PressureRun(scenario.id, arm, rep, transcript, None, error=transcript.error)
    try:
        judgement = judge(
            transcript.text,
            scenario.required_patterns,
            scenario.anti_patterns,
            scenario.expected_patterns if arm == WITHOUT_SKILL else (),
        )
    except PatternError as exc:
        return PressureRun(
            scenario.id, arm, rep, transcript, None, error=str(exc), pattern_error=True
        )
    return PressureRun(scenario.id, arm, rep, transcript, judgement)


async def run_suites(
    suites: Sequence[PressureSuite],
    runner_for: Callable[[PressureSuite], TurnRunner],
    *,
    jobs: int,
    skill_only: bool = False,
    default_model: str = DEFAULT_MODEL,
    progress: Progress | None = None,
    state: SuiteProgress | None = None,
    on_result: Callable[[ScenarioResult], None] | None = None,
) -> list[ScenarioResult]:
    """Runs every scenario of every suite; returns results in suite and scenario order.

    ``runner_for`` gives the runner of each suite (suites may need different model scripts);
    at most ``jobs`` requests are in flight at once across all suites.
    """
    state = state if state is not None else SuiteProgress()
    semaphore = asyncio.Semaphore(jobs)
    arms = (WITH_SKILL,) if skill_only else (WITH_SKILL, WITHOUT_SKILL)

    async def one_run(suite: PressureSuite, scenario: PressureScenario, arm: str, rep: int) -> None:
        request = TurnRequest(
            prompt=scenario.prompt,
            system=suite.skill.text if arm == WITH_SKILL else None,
            model=scenario.model or default_model,
            max_tokens=scenario.max_tokens,
            temperature=scenario.temperature,
            run=f"{suite.path}#{scenario.id}:{arm}",
            rep=rep - 1,
        )
        async with semaphore:
            transcript = await runner_for(suite).run_turn(request)
        run = _judge_run(scenario, arm, rep, transcript)
        state.partial[(str(suite.path), scenario.id)].append(run)
        if progress is not None:
            progress.advance(error=not run.completed)

    async def one_scenario(suite: PressureSuite, scenario: PressureScenario) -> ScenarioResult:
        key = (str(suite.path), scenario.id)
        state.partial[key] = []
        if not scenario.skip:
            await asyncio.gather(
                *(
                    one_run(suite, scenario, arm, rep)
                    for arm in arms
                    for rep in range(1, scenario.repetitions + 1)
                )
            )
        result = aggregate(
            scenario, suite.skill.name, state.partial.pop(key), skill_only=skill_only
        )
        state.results.append(result)
        if on_result is not None:
            on_result(result)
        return result

    return list(
        await asyncio.gather(
            *(one_scenario(suite, scenario) for suite in suites for scenario in suite.scenarios)
        )
    )


def total_runs(suites: Sequence[PressureSuite], skill_only: bool) -> int:
    """How many model requests the suites make."""
    arms = 1 if skill_only else 2
    return sum(s.repetitions * arms for suite in suites for s in suite.scenarios if not s.skip)
