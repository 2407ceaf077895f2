"""Running suites: every (scenario, arm, repetition) at most ``jobs`` at a time, then verdicts.

Runs of all scenarios share one pool, so ``-j 4`` keeps four CLI processes busy across scenario
boundaries. Repetitions alternate arms (with, without, with, ...) so that drift in the backend
over the suite's wall time affects both arms alike. Each scenario's verdict is handed to
``on_verdict`` as soon as its last run finishes, which is when the results file is rewritten.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from skilltest.errors import PatternError, RunError
from skilltest.report.progress import Progress
from skilltest.scenarios.outcome import Arm, RunRecord, call_summary
from skilltest.scenarios.rubric import COMPONENTS, score
from skilltest.scenarios.runner import RunOutcome, RunRequest, ScenarioRunner
from skilltest.scenarios.suite import Scenario, ScenarioSuite
from skilltest.scenarios.verdict import ScenarioVerdict, Thresholds, judge
from skilltest.transcript import Transcript

DEFAULT_OUTPUT_FOLDER = "output"
"""Raw transcripts go to ``output/`` beside the suite file (``tests/scenarios/output/``)."""


@dataclass(frozen=True)
class Planned:
    """One scenario of one suite, queued."""

    suite: ScenarioSuite
    """Its suite."""
    scenario: Scenario
    """The scenario."""

    @property
    def arms(self) -> tuple[Arm, ...]:
        """The arms that run."""
        if self.scenario.comparison:
            return (Arm.WITH_SKILL, Arm.WITHOUT_SKILL)
        return (Arm.WITH_SKILL,)

    @property
    def run_count(self) -> int:
        """How many CLI runs this scenario takes."""
        return 0 if self.scenario.skip else self.scenario.repetitions * len(self.arms)


def plan(suites: Sequence[ScenarioSuite]) -> list[Planned]:
    """Every scenario of every suite, in file order."""
    return [Planned(suite, scenario) for suite in suites for scenario in suite.scenarios]


def score_outcome(request: RunRequest, outcome: RunOutcome) -> RunRecord:
    """Scores one run against its scenario's rubric (an errored run stays unscored)."""
    transcript = outcome.transcript
    scenario = request.scenario
    try:
        card = score(transcript, scenario.expected)
    except PatternError as exc:
        # A pattern that blows its time limit on this run's evidence: the suite must change.
        transcript = replace(transcript, error=str(exc))
        card = score(transcript, scenario.expected)
        bad_input = True
    else:
        bad_input = False
    components: dict[str, float | None] = {}
    if card.score is not None:
        for name in COMPONENTS:
            component = card.components.get(name)
            components[name] = None if component is None else component.value
    return RunRecord(
        scenario_id=scenario.id,
        skill=scenario.skill.name,
        arm=request.arm,
        rep=request.rep,
        score=card.score,
        components=components,
        tool_calls=len(transcript.tool_calls),
        calls=tuple(call_summary(call) for call in transcript.tool_calls),
        skills_invoked=transcript.skills_invoked,
        skills_available=transcript.skills_available,
        transcript=str(outcome.transcript_path) if outcome.transcript_path else None,
        stderr=str(outcome.stderr_path) if outcome.stderr_path else None,
        error=card.unscored_reason if card.score is None else None,
        duration_s=outcome.duration_s,
        exit_code=transcript.exit_code,
        cost_usd=transcript.cost_usd,
        cli_version=transcript.cli_version,
        warnings=outcome.warnings,
        explanation=card.explain(),
        bad_input=bad_input,
    )


async def run_suites(
    suites: Sequence[ScenarioSuite],
    runner: ScenarioRunner,
    *,
    jobs: int,
    output_dir: Path | None = None,
    on_verdict: Callable[[ScenarioVerdict], None] | None = None,
    progress: Progress | None = None,
) -> list[ScenarioVerdict]:
    """Runs every scenario's arms K times, at most ``jobs`` CLI processes at once.

    Args:
        suites: The loaded suites.
        runner: Runs one conversation.
        jobs: CLI processes at once.
        output_dir: Where raw output is kept (default: ``output/`` beside each suite file).
        on_verdict: Called with each scenario's verdict as soon as it is known.
        progress: Counts finished runs.

    Returns:
        The verdicts in file order (``on_verdict`` sees them in completion order).
    """
    limit = asyncio.Semaphore(jobs)

    async def one_run(request: RunRequest) -> RunRecord:
        async with limit:
            try:
                outcome = await runner.run(request)
            except (RunError, OSError) as exc:
                # One run that cannot even start (a full disk, a sandbox that cannot be made)
                # is an unscored run; the suite goes on.
                outcome = RunOutcome(Transcript(source=runner.backend, error=str(exc)))
        record = score_outcome(request, outcome)
        if progress is not None:
            progress.advance(error=not record.scored)
        return record

    async def one_scenario(planned: Planned) -> ScenarioVerdict:
        scenario = planned.scenario
        records: list[RunRecord] = []
        if not scenario.skip:
            suite = planned.suite
            requests = [
                RunRequest(
                    scenario,
                    arm,
                    rep,
                    suite_path=suite.path,
                    output_dir=output_dir or suite.path.parent / DEFAULT_OUTPUT_FOLDER,
                    model_script=suite.model_script,
                )
                for rep in range(scenario.repetitions)
                for arm in planned.arms
            ]
            records = list(await asyncio.gather(*(one_run(r) for r in requests)))
        verdict = judge(
            scenario.id,
            scenario.skill.name,
            records,
            comparison=scenario.comparison,
            expected_skills=scenario.expected_skills,
            thresholds=Thresholds(min_score=scenario.min_score, min_delta=scenario.min_delta),
            skip=scenario.skip,
        )
        if on_verdict is not None:
            on_verdict(verdict)
        return verdict

    return list(await asyncio.gather(*(one_scenario(p) for p in plan(suites))))
