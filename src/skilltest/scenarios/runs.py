"""Running suites: every (scenario, arm, repetition) at most ``jobs`` at a time, then verdicts.

Runs of all scenarios share one pool of workers (:mod:`skilltest.scheduler`), so ``-j 4`` keeps
four CLI processes busy across scenario boundaries, and runs are started lazily. Repetitions
alternate arms (with, without, with, ...) so that drift in the backend over the suite's wall
time affects both arms alike. Adaptive repetitions judge a scenario after each round at that
look's confidence level and stop once the verdict is decided. Each scenario's verdict is handed
to ``on_verdict`` as soon as its last run finishes, which is when the results file is rewritten.

Canary scenarios (:mod:`skilltest.scenarios.canary`) run first, as a batch of their own, with the
skill only and for the first round of their plan; the other scenarios start when the last canary
has finished.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skilltest.cost.budget import Budget
from skilltest.cost.prices import run_cost
from skilltest.errors import PatternError, RunError
from skilltest.flow.options import Observer
from skilltest.redact import map_strings
from skilltest.repetitions import Repetitions, plan_for
from skilltest.report.provenance import Provenance
from skilltest.scenarios.canary import judge_canary
from skilltest.scenarios.outcome import Arm, RunRecord, call_summary
from skilltest.scenarios.rubric import COMPONENTS, score
from skilltest.scenarios.runner import RunOutcome, RunRequest, ScenarioRunner
from skilltest.scenarios.suite import Scenario, ScenarioSuite
from skilltest.scenarios.verdict import DECIDED, ScenarioVerdict, Thresholds, judge
from skilltest.scheduler import Planned as Scheduled
from skilltest.scheduler import ProcessLine, run_rounds
from skilltest.skills import Skill
from skilltest.trace.record import (
    build_trace,
    fixture_checksum,
    origin_header,
    trace_path,
    write_trace,
)
from skilltest.transcript import Transcript

LAYER = "scenarios"
"""The layer, as a run's id names it."""

DEFAULT_OUTPUT_FOLDER = "output"
"""Raw transcripts go to ``output/`` beside the suite file (``tests/scenarios/output/``)."""


@dataclass(frozen=True)
class Planned:
    """One scenario of one suite, queued."""

    suite: ScenarioSuite
    """Its suite."""
    scenario: Scenario
    """The scenario."""
    repetitions: Repetitions = field(default_factory=Repetitions)
    """How many runs per arm."""
    revisions: tuple[tuple[Arm, str, Skill], ...] = ()
    """Each REF of ``--against`` with its arm (``previous``, ``previous-2``...) and the skill
    under test as it was there; each runs as an arm of its own."""

    @property
    def arms(self) -> tuple[Arm, ...]:
        """The arms that run (a canary runs the skill only)."""
        arms: tuple[Arm, ...] = (Arm.WITH_SKILL,)
        if self.scenario.comparison:
            arms += (Arm.WITHOUT_SKILL,)
        if not self.scenario.canary:
            arms += tuple(arm for arm, _, _ in self.revisions)
        return arms

    @property
    def refs(self) -> tuple[tuple[str, str], ...]:
        """Each ``(arm, REF)`` the verdict compares the skill with (none for a canary)."""
        if self.scenario.canary:
            return ()
        return tuple((arm.value, ref) for arm, ref, _ in self.revisions)

    def skill_at(self, arm: Arm) -> Skill | None:
        """The skill under test as the revision ``arm`` runs it; ``None`` for another arm."""
        return next((skill for each, _, skill in self.revisions if each == arm), None)

    @property
    def run_count(self) -> int:
        """The most CLI runs this scenario can take (adaptive plans may stop sooner)."""
        if self.scenario.skip:
            return 0
        # A canary is read from its first round.
        per_arm = self.repetitions.first if self.scenario.canary else self.repetitions.most
        return per_arm * len(self.arms)


def plan(
    suites: Sequence[ScenarioSuite],
    repetitions: Callable[[Scenario], Repetitions] | None = None,
    revisions: Sequence[tuple[str, str]] = (),
    previous: Callable[[Scenario, str], Skill] | None = None,
) -> list[Planned]:
    """Every scenario of every suite, in file order, with its repetition plan.

    ``repetitions`` gives each scenario's plan (default: the suite's ``repetitions``, else
    adaptive). With ``revisions`` (each REF of ``--against`` with its arm: ``previous``,
    ``previous-2``...), ``previous`` gives each scenario's skill under test as it was at the
    REF of an arm, run as an arm of its own.
    """
    plan_of = repetitions or (lambda scenario: plan_for(None, scenario.repetitions))
    return [
        Planned(
            suite,
            scenario,
            plan_of(scenario),
            revisions=tuple((Arm(arm), ref, previous(scenario, arm)) for arm, ref in revisions)
            if previous is not None
            else (),
        )
        for suite in suites
        for scenario in suite.scenarios
    ]


def _world_dict(outcome: RunOutcome) -> dict[str, Any] | None:
    """The world's outcome as stored, the run's secrets redacted (a token an agent put in a
    request body is recorded by the fake as sent)."""
    if outcome.world is None:
        return None
    world = outcome.world.to_dict()
    return world if outcome.redact is None else map_strings(world, outcome.redact)


def score_outcome(request: RunRequest, outcome: RunOutcome) -> RunRecord:
    """Scores one run against its scenario's rubric (an errored run stays unscored)."""
    transcript = outcome.transcript
    scenario = request.scenario
    try:
        card = score(transcript, scenario.expected, outcome.checks)
    except PatternError as exc:
        # A pattern that blows its time limit on this run's evidence: the suite must change.
        transcript = replace(transcript, error=str(exc))
        card = score(transcript, scenario.expected, outcome.checks)
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
        skill=scenario.label,
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
        ended=transcript.ended,
        hung=transcript.hung if card.score is not None else None,
        loaded=outcome.loaded,
        world=_world_dict(outcome),
        duration_s=outcome.duration_s,
        exit_code=transcript.exit_code,
        cost_usd=transcript.cost_usd,
        cli_version=transcript.cli_version,
        models=transcript.api_models,
        recorded_with=transcript.recorded_with,
        answered_by=transcript.answered_by,
        emulator_rules=transcript.emulator_rules,
        warnings=outcome.warnings,
        explanation=card.explain(),
        bad_input=bad_input,
        vetoes=card.vetoes,
        checks=tuple(check.to_dict() for check in outcome.checks),
    )


def write_run_trace(
    suite: ScenarioSuite,
    request: RunRequest,
    outcome: RunOutcome,
    record: RunRecord,
    transcript_path: Path,
    *,
    backend: str,
    provenance: Provenance | None = None,
) -> Path:
    """Writes the run's trace beside its kept transcript and returns its path; ``backend`` and
    ``provenance`` say what produced the run."""
    scenario = request.scenario
    world_files: list[Path] = []
    if scenario.world is not None:
        world_files = [scenario.world.path]
        world_files += [s.data_path for s in scenario.world.services if s.data_path is not None]
    lines = build_trace(
        header={
            "suite": suite.path.stem,
            "suite_path": str(suite.path),
            "scenario": scenario.id,
            "skill": scenario.label,
            "arm": request.arm.value,
            "rep": request.rep,
            "fixture_checksum": fixture_checksum(
                scenario.workspace, world_files, scenario.workspace_files
            ),
            "transcript": str(transcript_path),
        },
        transcript=outcome.transcript,
        transcript_path=transcript_path,
        prompts=(scenario.prompt, *scenario.turns),
        world=record.world,
        origin=origin_header(
            outcome.transcript,
            backend=backend,
            provenance=provenance,
            suite=suite.path,
            place=(LAYER, scenario.label, scenario.id, request.arm.value, request.rep),
        ),
        outcome={
            "score": record.score,
            "components": record.components,
            "explanation": record.explanation,
            "vetoes": list(record.vetoes),
            "checks": [dict(check) for check in record.checks],
            "unscored_reason": record.error,
            "duration_s": round(record.duration_s, 3),
            "warnings": list(record.warnings),
        },
    )
    return write_trace(trace_path(transcript_path), lines, outcome.redact)


async def run_suites(
    suites: Sequence[ScenarioSuite],
    runner: ScenarioRunner,
    *,
    jobs: int,
    output_dir: Path | None = None,
    on_verdict: Callable[[ScenarioVerdict], None] | None = None,
    observer: Observer | None = None,
    repetitions: Callable[[Scenario], Repetitions] | None = None,
    revisions: Sequence[tuple[str, str]] = (),
    previous: Callable[[Scenario, str], Skill] | None = None,
    provenance: Provenance | None = None,
    budget: Budget | None = None,
) -> list[ScenarioVerdict]:
    """Runs every scenario's arms K times (or adaptively), at most ``jobs`` CLI processes at once.

    Args:
        suites: The loaded suites.
        runner: Runs one conversation.
        jobs: CLI processes at once.
        output_dir: Where raw output is kept (default: ``output/`` beside each suite file).
        on_verdict: Called with each scenario's verdict as soon as it is known.
        observer: Told of each finished run.
        repetitions: Each scenario's plan (default: the suite's ``repetitions``, else adaptive).
        revisions: Each REF of ``--against`` with its arm (``previous``, ``previous-2``...):
            each scenario also runs the skill as it was there, as many rounds as the others,
            all compared with the one without-skill arm's runs.
        previous: Each scenario's skill under test as it was at the REF of an arm.
        provenance: What produced the runs, for their traces.
        budget: ``--max-cost-usd``: each run starts only when it lets it.

    Returns:
        The verdicts in file order (``on_verdict`` sees them in completion order).
    """
    planned = plan(suites, repetitions, revisions, previous)
    verdicts: dict[int, ScenarioVerdict] = {}

    def estimate(index: int, arm: str) -> float:
        from skilltest.scenarios.estimates import run_estimate

        return run_estimate(planned[index].scenario, Arm(arm)).usd

    def admit(index: int, arm: str, rep: int) -> bool:
        return budget is None or budget.start(estimate(index, arm))

    async def one_run(index: int, arm: str, rep: int) -> RunRecord:
        entry = planned[index]
        request = RunRequest(
            entry.scenario,
            Arm(arm),
            rep,
            suite_path=entry.suite.path,
            output_dir=output_dir or entry.suite.output_folder,
            model_script=entry.suite.model_script,
            previous=entry.skill_at(Arm(arm)),
        )
        try:
            outcome = await runner.run(request)
        except (RunError, OSError) as exc:
            # One run that cannot even start (a full disk, a sandbox that cannot be made)
            # is an unscored run; the suite goes on.
            outcome = RunOutcome(Transcript(source=runner.backend, error=str(exc)))
        if budget is not None:
            budget.finish(estimate(index, arm), spent(outcome.transcript, entry.scenario))
        record = score_outcome(request, outcome)
        if outcome.transcript_path is None:
            return record
        try:
            trace = write_run_trace(
                entry.suite,
                request,
                outcome,
                record,
                outcome.transcript_path,
                backend=runner.backend,
                provenance=provenance,
            )
        except OSError as exc:
            # The run itself is scored; a trace that cannot be written (a full disk) is a
            # warning on it, not a reason to stop the suite.
            return replace(record, warnings=(*record.warnings, f"trace not written: {exc}"))
        return replace(record, trace=str(trace))

    async def judged(index: int, records: Sequence[RunRecord], k: int) -> ScenarioVerdict:
        # Off the event loop: the statistics take a while (and their libraries to import),
        # and the other runs' processes go on meanwhile.
        return await asyncio.to_thread(judge_planned, planned[index], list(records))

    async def decided(index: int, records: Sequence[RunRecord], k: int) -> bool:
        if planned[index].scenario.canary:
            return True
        return (await judged(index, records, k)).verdict in DECIDED

    def started(index: int, record: RunRecord) -> None:
        if observer is not None:
            observer.run_finished(error=not record.scored)

    async def finished(index: int, records: list[RunRecord], k: int) -> None:
        verdict = await judged(index, records, k)
        verdicts[index] = verdict
        if on_verdict is not None:
            on_verdict(verdict)

    scheduled = [
        Scheduled(
            index,
            entry.repetitions,
            tuple(a.value for a in entry.arms),
            skip=bool(entry.scenario.skip),
        )
        for index, entry in enumerate(planned)
    ]
    # A runner that bounds its own CLI processes gets more runs under way than processes:
    # while ``jobs`` runs' processes work, the others prepare their sandboxes or are checked
    # and judged (a judge may wait for the SDK to be imported), and the next process starts
    # the moment one ends.
    line = getattr(runner, "line", None)
    overlapped = isinstance(line, ProcessLine) and line.processes is not None
    workers = jobs + max(jobs, 2) if overlapped else jobs
    try:
        await _run_batches(
            planned, scheduled, workers, one_run, decided, finished, started, admit, budget
        )
    finally:
        close = getattr(runner, "aclose", None)
        if close is not None:
            await close()
    return [verdicts[index] for index in sorted(verdicts)]


def asks_a_model(scenario: Scenario) -> bool:
    """Whether a scenario's runs ask the model beside the agent: a ``judge`` check, or a mock
    an agent answers (its command then starts importing the SDK as it starts)."""
    if scenario.skip:
        return False
    judges = any(check.kind == "judge" for check in scenario.expected.checks)
    return judges or any(mock.has_agent() for mock in scenario.mocks)


async def _run_batches(
    planned: Sequence[Planned],
    scheduled: Sequence[Scheduled[int]],
    workers: int,
    one_run: Callable[[int, str, int], Awaitable[RunRecord]],
    decided: Callable[[int, Sequence[RunRecord], int], Awaitable[bool]],
    finished: Callable[[int, list[RunRecord], int], Awaitable[None]],
    started: Callable[[int, RunRecord], None],
    admit: Callable[[int, str, int], bool],
    budget: Budget | None,
) -> None:
    # The canaries first: the comparison is only worth reading once they have passed.
    for batch in (
        [s for s in scheduled if planned[s.item].scenario.canary],
        [s for s in scheduled if not planned[s.item].scenario.canary],
    ):
        if batch:
            await run_rounds(
                batch,
                workers=workers,
                run=one_run,
                decided=decided,
                finished=finished,
                started=started,
                admit=admit if budget is not None else None,
            )


def judge_planned(entry: Planned, records: Sequence[RunRecord]) -> ScenarioVerdict:
    """The verdict on one planned scenario from its runs (a canary's as a canary's), with what
    the suite says of it now: thresholds, skills expected, ``critical``."""
    scenario = entry.scenario
    verdict = judge(
        scenario.id,
        scenario.label,
        records,
        comparison=scenario.comparison,
        expected_skills=scenario.expected_skills,
        thresholds=Thresholds(
            min_score=scenario.min_score,
            min_delta=scenario.min_delta,
            decide_by=scenario.decide_by,
        ),
        skip=scenario.skip,
        repetitions=entry.repetitions,
        require_skills_fired=scenario.require_skills_fired,
        requires_recovery=scenario.world is not None and scenario.world_expected.recovers,
        revisions=entry.refs,
    )
    if scenario.canary:
        verdict = judge_canary(
            verdict,
            min_score=scenario.min_score,
            expected_skills=scenario.expected_skills,
            require_skills_fired=scenario.require_skills_fired,
        )
    # The verdict does not depend on it; the release gate reads it from the results file.
    return replace(verdict, critical=scenario.critical) if scenario.critical else verdict


def spent(transcript: Transcript, scenario: Scenario) -> float:
    """What one CLI run cost: as the CLI reported it, else its tokens at list prices."""
    from skilltest.cost.estimate import DEFAULT_CLI_MODEL

    usage = transcript.usage
    model = next(iter(transcript.api_models), None) or scenario.config.model or DEFAULT_CLI_MODEL
    return run_cost(
        transcript.cost_usd,
        model,
        input=usage.input_tokens,
        output=usage.output_tokens,
        cache_write=usage.cache_creation_input_tokens,
        cache_read=usage.cache_read_input_tokens,
    )
