"""Running pressure suites: every (scenario, arm, repetition) through one runner, ``-j`` at a time.

Scenarios finish in order of completion; each finished scenario is handed to ``on_result`` at
once, so results files can be rewritten as the suite goes and an interrupted suite loses nothing
that had finished. Adaptive repetitions (:mod:`skilltest.repetitions`) judge a scenario after
each round at the confidence level of that look, and stop it once its verdict is decided.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
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
from skilltest.revision import is_revision_arm, revision_arm
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

AnswerRound = Callable[
    [int, Sequence[TurnRequest], Sequence[PressureSuite]],
    Awaitable[Sequence[tuple[Transcript, str]]],
]
"""Answers one round of a batched run: the round's number (from 1), its requests and the suite
of each; gives each request's transcript and the backend that answered, in the same order."""


@dataclass(frozen=True)
class SuiteRunSettings:
    """How suites are run, whether the answers come one request at a time
    (:func:`run_suites`) or a round at a time (:func:`run_suites_in_rounds`)."""

    skill_only: bool = False
    """Run only the with-skill arm."""
    default_model: str = DEFAULT_MODEL
    """The model of a scenario whose suite names none."""
    observer: Observer | None = None
    """Sees each finished run."""
    state: SuiteProgress | None = None
    """Where what has happened so far is kept (default: a fresh one)."""
    on_result: Callable[[ScenarioResult], None] | None = None
    """Handed each scenario as soon as all of its runs have finished."""
    plan: Callable[[PressureScenario], Repetitions] | None = None
    """Each scenario's repetitions (default: the suite's ``repetitions``, else adaptive)."""
    revisions: tuple[tuple[str, str], ...] = ()
    """Each REF of ``--against`` with its arm (``previous``, ``previous-2``...): ``previous``
    gives each suite's skill as it was there, run as an arm of its own."""
    previous: Callable[[PressureSuite, str], Skill] | None = None
    """Each suite's skill at the REF of an arm of ``revisions``."""
    trace_dir: Callable[[PressureSuite], Path] | None = None
    """The folder each suite's run traces are written under (``None``: no traces)."""
    provenance: Provenance | None = None
    """What produced the runs, written into each trace."""
    budget: Budget | None = None
    """``--max-cost-usd``: each run starts only when it lets it."""


class _SuiteRuns:
    """What running a set of suites needs, however the answers come (one request at a time or
    in batches): the requests, judging and tracing each run, the verdict after each round."""

    def __init__(self, suites: Sequence[PressureSuite], settings: SuiteRunSettings) -> None:
        self.settings = settings
        self.state = settings.state if settings.state is not None else SuiteProgress()
        arms: tuple[str, ...] = (
            (WITH_SKILL,) if settings.skill_only else (WITH_SKILL, WITHOUT_SKILL)
        )
        if settings.revisions:
            assert settings.previous is not None
            arms += tuple(arm for arm, _ in settings.revisions)
        self.arms = arms
        plan_of = settings.plan or (lambda scenario: plan_for(None, scenario.repetitions))
        self.entries: list[Entry] = [
            (suite, scenario) for suite in suites for scenario in suite.scenarios
        ]
        self.plans = {id(entry[1]): plan_of(entry[1]) for entry in self.entries}
        self.order = {id(entry[1]): index for index, entry in enumerate(self.entries)}
        self.finished: dict[int, ScenarioResult] = {}

    def planned(self) -> list[Planned[Entry]]:
        """Every scenario with its plan and arms, in suite order."""
        return [
            Planned(entry, self.plans[id(entry[1])], self.arms, skip=bool(entry[1].skip))
            for entry in self.entries
        ]

    def request(self, entry: Entry, arm: str, rep: int) -> TurnRequest:
        """The request of one run (``rep`` counted from 0)."""
        suite, scenario = entry
        return TurnRequest(
            prompt=scenario.message,
            system=_system(suite, arm, self.settings.previous),
            model=scenario.model or self.settings.default_model,
            max_tokens=scenario.max_tokens,
            temperature=scenario.temperature,
            run=f"{suite.path}#{scenario.id}:{arm}",
            rep=rep,
        )

    def record(
        self,
        entry: Entry,
        arm: str,
        rep: int,
        request: TurnRequest,
        transcript: Transcript,
        backend: str,
    ) -> PressureRun:
        """The run judged, with its trace written when traces are kept."""
        suite, scenario = entry
        run = _judge_run(scenario, arm, rep + 1, transcript)
        if self.settings.trace_dir is None:
            return run
        from skilltest.pressure.trace import write_pressure_trace

        path = write_pressure_trace(
            self.settings.trace_dir(suite),
            run,
            request,
            suite=suite,
            backend=backend,
            provenance=self.settings.provenance,
        )
        return dataclasses.replace(run, trace=str(path))

    def estimate(self, entry: Entry, arm: str) -> float:
        """What one run is held to before it starts (``--max-cost-usd``), at list prices."""
        suite, scenario = entry
        return request_estimate(
            _system(suite, arm, self.settings.previous),
            scenario.message,
            max_tokens=scenario.max_tokens,
            model=scenario.model or self.settings.default_model,
        ).usd

    @staticmethod
    def cost(request: TurnRequest, transcript: Transcript) -> float:
        """What a finished run cost at list prices: the backend's figure, else its tokens."""
        usage = transcript.usage
        return run_cost(
            transcript.cost_usd,
            transcript.model or request.model,
            input=usage.input_tokens,
            output=usage.output_tokens,
            cache_write=usage.cache_creation_input_tokens,
            cache_read=usage.cache_read_input_tokens,
        )

    def judged(self, entry: Entry, runs: Sequence[PressureRun], k: int) -> ScenarioResult:
        repetitions = self.plans[id(entry[1])]
        return aggregate(
            entry[1],
            entry[0].skill.name,
            runs,
            skill_only=self.settings.skill_only,
            repetitions=repetitions,
            revisions=self.settings.revisions,
        )

    def decided(self, entry: Entry, runs: Sequence[PressureRun], k: int) -> bool:
        return self.judged(entry, runs, k).verdict in DECIDED

    def started(self, entry: Entry, run: PressureRun) -> None:
        self.state.partial.setdefault(_key(entry), []).append(run)
        if self.settings.observer is not None:
            self.settings.observer.run_finished(error=not run.completed)

    def done(self, entry: Entry, runs: list[PressureRun], k: int) -> None:
        self.state.partial.pop(_key(entry), None)
        result = self.judged(entry, runs, k)
        self.finished[self.order[id(entry[1])]] = result
        self.state.results.append(result)
        if self.settings.on_result is not None:
            self.settings.on_result(result)

    def results(self) -> list[ScenarioResult]:
        return [self.finished[index] for index in sorted(self.finished)]


def _key(entry: Entry) -> tuple[str, str]:
    return (str(entry[0].path), entry[1].id)


async def run_suites(
    suites: Sequence[PressureSuite],
    runner_for: Callable[[PressureSuite], TurnRunner],
    *,
    jobs: int,
    settings: SuiteRunSettings | None = None,
) -> list[ScenarioResult]:
    """Runs every scenario of every suite; returns results in suite and scenario order.

    ``runner_for`` gives the runner of each suite (suites may need different model scripts);
    at most ``jobs`` requests are in flight at once across all suites, and runs are started
    lazily (:mod:`skilltest.scheduler`). ``settings`` say which arms run, how many times, what
    is traced and what sees each result (default: both arms, each suite's plan, no traces).
    """
    runs = _SuiteRuns(suites, settings or SuiteRunSettings())
    budget = runs.settings.budget

    def admit(entry: Entry, arm: str, rep: int) -> bool:
        return budget is None or budget.start(runs.estimate(entry, arm))

    async def one_run(entry: Entry, arm: str, rep: int) -> PressureRun:
        request = runs.request(entry, arm, rep)
        runner = runner_for(entry[0])
        transcript = await runner.run_turn(request)
        if budget is not None:
            budget.finish(runs.estimate(entry, arm), runs.cost(request, transcript))
        return runs.record(entry, arm, rep, request, transcript, runner.backend)

    await run_rounds(
        runs.planned(),
        workers=jobs,
        run=one_run,
        decided=runs.decided,
        finished=runs.done,
        started=runs.started,
        admit=admit if budget is not None else None,
    )
    return runs.results()


async def run_suites_in_rounds(
    suites: Sequence[PressureSuite],
    answer: AnswerRound,
    *,
    settings: SuiteRunSettings | None = None,
    price_factor: float = 1.0,
) -> list[ScenarioResult]:
    """Runs every scenario of every suite as :func:`run_suites` does, a round of every open
    scenario at a time, each round answered at once by ``answer`` (a Message Batch).

    The first round is every scenario's first K repetitions per arm; after it, an adaptive
    scenario whose verdict is not decided takes one more repetition per arm in the next round,
    as :func:`skilltest.scheduler.run_rounds` would give it, so the verdicts are those of a
    direct run. Returns results in suite and scenario order.

    With a budget in ``settings`` (``--max-cost-usd``), each run of a round is let in, in order,
    before the round is sent, its estimate and cost at ``price_factor`` times the list price (the
    Message Batches' 0.5); once one is refused, the round goes with the runs let in and no round
    follows.
    As in a direct run, a scenario whose plan is not through is then not finished.
    """
    runs = _SuiteRuns(suites, settings or SuiteRunSettings())
    budget = runs.settings.budget
    open_: list[tuple[Entry, Repetitions, int, int]] = []
    """Scenarios under way: their plan, the repetitions done before this round and after it."""
    records: dict[int, list[PressureRun]] = {}
    for planned in runs.planned():
        if planned.skip:
            runs.done(planned.item, [], 0)
        else:
            open_.append((planned.item, planned.plan, 0, planned.plan.first))
            records[id(planned.item[1])] = []
    number = 1
    halted = False
    while open_ and not halted:
        wanted = [
            (entry, arm, rep)
            for entry, _, before, target in open_
            for rep in range(before, target)
            for arm in runs.arms
        ]
        if budget is not None:
            let_in = 0
            for entry, arm, _ in wanted:
                if not budget.start(runs.estimate(entry, arm) * price_factor):
                    halted = True
                    break
                let_in += 1
            wanted = wanted[:let_in]
        requests = [runs.request(entry, arm, rep) for entry, arm, rep in wanted]
        answers = (
            await answer(number, requests, [entry[0] for entry, _, _ in wanted]) if wanted else []
        )
        for (entry, arm, rep), request, (transcript, backend) in zip(
            wanted, requests, answers, strict=True
        ):
            if budget is not None:
                budget.finish(
                    runs.estimate(entry, arm) * price_factor,
                    runs.cost(request, transcript) * price_factor,
                )
            run = runs.record(entry, arm, rep, request, transcript, backend)
            records[id(entry[1])].append(run)
            runs.started(entry, run)
        still: list[tuple[Entry, Repetitions, int, int]] = []
        for entry, repetitions, _, k in open_:
            done = records[id(entry[1])]
            if len(done) < k * len(runs.arms):
                continue  # the budget let in only part of its round: not finished
            if repetitions.more_after(k) and not runs.decided(entry, done, k):
                if not halted:
                    still.append((entry, repetitions, k, k + 1))
            else:
                runs.done(entry, done, k)
        open_ = still
        number += 1
    return runs.results()


def _system(
    suite: PressureSuite, arm: str, previous: Callable[[PressureSuite, str], Skill] | None
) -> str | None:
    """The system prompt of an arm: the skill, a previous revision's skill, or none."""
    if arm == WITH_SKILL:
        return suite.skill.text
    if is_revision_arm(arm):
        assert previous is not None
        return previous(suite, arm).text
    return None


def total_runs(
    suites: Sequence[PressureSuite],
    skill_only: bool,
    plan: Callable[[PressureScenario], Repetitions] | None = None,
    against: int = 0,
) -> int:
    """The most model requests the suites can make (adaptive plans may stop sooner);
    ``against``: how many REFs of ``--against`` run an arm each."""
    arms = (1 if skill_only else 2) + int(against)
    plan_of = plan or (lambda scenario: plan_for(None, scenario.repetitions))
    return sum(plan_of(s).most * arms for suite in suites for s in suite.scenarios if not s.skip)


def most_repetitions(
    suites: Sequence[PressureSuite],
    skill_only: bool,
    plan: Callable[[PressureScenario], Repetitions] | None = None,
    against: int = 0,
) -> dict[str, int]:
    """The most repetitions each run of the suites may take (adaptive plans may stop sooner),
    by ``<skill>/<scenario>:<arm>``; a skipped scenario has no runs."""
    arms: tuple[str, ...] = (WITH_SKILL,) if skill_only else (WITH_SKILL, WITHOUT_SKILL)
    arms += tuple(revision_arm(index) for index in range(int(against)))
    plan_of = plan or (lambda scenario: plan_for(None, scenario.repetitions))
    return {
        f"{suite.skill.name}/{scenario.id}:{arm}": plan_of(scenario).most
        for suite in suites
        for scenario in suite.scenarios
        if not scenario.skip
        for arm in arms
    }
