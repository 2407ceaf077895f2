"""Running pressure suites: every (scenario, arm, repetition) through one runner, ``-j`` at a time.

Scenarios finish in order of completion; each finished scenario is handed to ``on_result`` at
once, so results files can be rewritten as the suite goes and an interrupted suite loses nothing
that had finished. Adaptive repetitions (:mod:`skilltest.repetitions`) judge a scenario after
each round at the confidence level of that look, and stop it once its verdict is decided.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skilltest.cost.budget import Budget
from skilltest.cost.prices import run_cost
from skilltest.errors import PatternError
from skilltest.flow.options import Observer
from skilltest.pressure.estimates import request_estimate
from skilltest.pressure.judge import is_red, judge
from skilltest.pressure.suite import PressureScenario, PressureSuite
from skilltest.pressure.verdict import (
    DECIDED,
    WITH_SKILL,
    WITHOUT_SKILL,
    PressureRun,
    ScenarioResult,
    aggregate,
)
from skilltest.repetitions import Repetitions, plan_for
from skilltest.report.provenance import Provenance
from skilltest.revision import PREVIOUS
from skilltest.runners.base import DEFAULT_MODEL, TurnRequest, TurnRunner
from skilltest.scheduler import Planned, run_rounds
from skilltest.skills import Skill
from skilltest.transcript import Transcript


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
    red = is_red(judgement, scenario.baseline_red) if arm == WITHOUT_SKILL else None
    return PressureRun(scenario.id, arm, rep, transcript, judgement, red=red)


Entry = tuple[PressureSuite, PressureScenario]


async def run_suites(
    suites: Sequence[PressureSuite],
    runner_for: Callable[[PressureSuite], TurnRunner],
    *,
    jobs: int,
    skill_only: bool = False,
    default_model: str = DEFAULT_MODEL,
    observer: Observer | None = None,
    state: SuiteProgress | None = None,
    on_result: Callable[[ScenarioResult], None] | None = None,
    plan: Callable[[PressureScenario], Repetitions] | None = None,
    against: str | None = None,
    previous: Callable[[PressureSuite], Skill] | None = None,
    trace_dir: Callable[[PressureSuite], Path] | None = None,
    provenance: Provenance | None = None,
    budget: Budget | None = None,
) -> list[ScenarioResult]:
    """Runs every scenario of every suite; returns results in suite and scenario order.

    ``runner_for`` gives the runner of each suite (suites may need different model scripts);
    at most ``jobs`` requests are in flight at once across all suites, and runs are started
    lazily (:mod:`skilltest.scheduler`). ``plan`` gives each scenario's repetitions (default:
    the suite's ``repetitions``, else adaptive). With ``against`` (the REF of ``--against``),
    ``previous`` gives each suite's skill as it was there, run as a third arm ``previous``.
    With ``trace_dir``, each run's trace is written under the folder it gives for its suite,
    with what produced it (``provenance``). With a ``budget`` (``--max-cost-usd``), each request
    starts only when it lets it.
    """
    state = state if state is not None else SuiteProgress()
    arms: tuple[str, ...] = (WITH_SKILL,) if skill_only else (WITH_SKILL, WITHOUT_SKILL)
    if against is not None:
        assert previous is not None
        arms += (PREVIOUS,)
    plan_of = plan or (lambda scenario: plan_for(None, scenario.repetitions))
    entries: list[Entry] = [(suite, scenario) for suite in suites for scenario in suite.scenarios]
    plans = {id(entry[1]): plan_of(entry[1]) for entry in entries}
    order = {id(entry[1]): index for index, entry in enumerate(entries)}
    finished: dict[int, ScenarioResult] = {}

    def key(entry: Entry) -> tuple[str, str]:
        return (str(entry[0].path), entry[1].id)

    def estimate(entry: Entry, arm: str) -> float:
        suite, scenario = entry
        return request_estimate(
            _system(suite, arm, previous),
            scenario.message,
            max_tokens=scenario.max_tokens,
            model=scenario.model or default_model,
        ).usd

    def admit(entry: Entry, arm: str, rep: int) -> bool:
        return budget is None or budget.start(estimate(entry, arm))

    async def one_run(entry: Entry, arm: str, rep: int) -> PressureRun:
        suite, scenario = entry
        request = TurnRequest(
            prompt=scenario.message,
            system=_system(suite, arm, previous),
            model=scenario.model or default_model,
            max_tokens=scenario.max_tokens,
            temperature=scenario.temperature,
            run=f"{suite.path}#{scenario.id}:{arm}",
            rep=rep,
        )
        runner = runner_for(suite)
        transcript = await runner.run_turn(request)
        if budget is not None:
            usage = transcript.usage
            budget.finish(
                estimate(entry, arm),
                run_cost(
                    transcript.cost_usd,
                    transcript.model or request.model,
                    input=usage.input_tokens,
                    output=usage.output_tokens,
                    cache_write=usage.cache_creation_input_tokens,
                    cache_read=usage.cache_read_input_tokens,
                ),
            )
        run = _judge_run(scenario, arm, rep + 1, transcript)
        if trace_dir is None:
            return run
        from skilltest.pressure.trace import write_pressure_trace

        path = write_pressure_trace(
            trace_dir(suite),
            run,
            suite=suite.path.stem,
            skill=suite.skill.name,
            prompt=request.prompt,
            system=request.system,
            backend=runner.backend,
            suite_path=suite.path,
            provenance=provenance,
        )
        return dataclasses.replace(run, trace=str(path))

    def judged(entry: Entry, runs: Sequence[PressureRun], k: int) -> ScenarioResult:
        repetitions = plans[id(entry[1])]
        return aggregate(
            entry[1],
            entry[0].skill.name,
            runs,
            skill_only=skill_only,
            repetitions=repetitions,
            against=against,
        )

    def decided(entry: Entry, runs: Sequence[PressureRun], k: int) -> bool:
        return judged(entry, runs, k).verdict in DECIDED

    def started(entry: Entry, run: PressureRun) -> None:
        state.partial.setdefault(key(entry), []).append(run)
        if observer is not None:
            observer.run_finished(error=not run.completed)

    def done(entry: Entry, runs: list[PressureRun], k: int) -> None:
        state.partial.pop(key(entry), None)
        result = judged(entry, runs, k)
        finished[order[id(entry[1])]] = result
        state.results.append(result)
        if on_result is not None:
            on_result(result)

    await run_rounds(
        [Planned(entry, plans[id(entry[1])], arms, skip=bool(entry[1].skip)) for entry in entries],
        workers=jobs,
        run=one_run,
        decided=decided,
        finished=done,
        started=started,
        admit=admit if budget is not None else None,
    )
    return [finished[index] for index in sorted(finished)]


def _system(
    suite: PressureSuite, arm: str, previous: Callable[[PressureSuite], Skill] | None
) -> str | None:
    """The system prompt of an arm: the skill, the previous revision's skill, or none."""
    if arm == WITH_SKILL:
        return suite.skill.text
    if arm == PREVIOUS:
        assert previous is not None
        return previous(suite).text
    return None


def total_runs(
    suites: Sequence[PressureSuite],
    skill_only: bool,
    plan: Callable[[PressureScenario], Repetitions] | None = None,
    against: bool = False,
) -> int:
    """The most model requests the suites can make (adaptive plans may stop sooner)."""
    arms = (1 if skill_only else 2) + (1 if against else 0)
    plan_of = plan or (lambda scenario: plan_for(None, scenario.repetitions))
    return sum(plan_of(s).most * arms for suite in suites for s in suite.scenarios if not s.skip)
