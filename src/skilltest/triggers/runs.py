"""Running trigger suites through the scenario layer's runner.

Each (query, repetition) is one with-skill run of a scenario made from the query (the query is
the prompt; there is no rubric): the same sandbox, isolation, backends and ``claude`` binary as
``skilltest scenarios``. The skill under test and the suite's distractors are installed side by
side under ``.claude/skills/``. A ``PreToolUse`` hook (:mod:`skilltest.triggers.hook`) ends the
run at the call that decides it, before that call runs and before the CLI asks the model again;
a :class:`~skilltest.triggers.watch.TriggerWatch` reads the stream and says how the run ended
(and stops a CLI that goes on all the same).

Another description is tested on a copy of the skill folder whose ``SKILL.md`` front matter
carries it; the skill's own folder is never edited. With two descriptions (``--compare-
description``) the runs of both alternate per repetition, so that drift in the backend over the
suite's wall time affects both alike. With ``--against REF`` the second arm is the skill as it
was at REF (its own folder and description, read by :mod:`skilltest.revision`); with several
REFs, one arm per REF (``previous``, ``previous-2``...).

With ``--record`` or ``--replay`` each (skill, query, description) has a cassette,
``<DIR>/<skill>/<query>/<current|candidate>.yaml``, one repetition per run: the scenario layer's
recording and replaying endpoints, keyed by the description instead of the arm.

With ``--agent opencode`` or ``--agent codex`` the runs go through the scenario layer's
:class:`~skilltest.scenarios.agent_runner.AgentCliRunner` instead: the skills where that agent
reads them, no hook, and an :class:`~skilltest.triggers.watch.AgentWatch` that decides each run
by the agent's own firing rule and stops it there.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from skilltest.agents.base import Agent
from skilltest.cost.budget import Budget
from skilltest.cost.estimate import DEFAULT_CLI_MODEL
from skilltest.cost.prices import run_cost
from skilltest.errors import InputError, RunError
from skilltest.names import child
from skilltest.repetitions import Repetitions, plan_for
from skilltest.replay.match import MISS_PREFIX
from skilltest.report.provenance import Provenance
from skilltest.revision import is_revision_arm
from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.rubric import Expected
from skilltest.scenarios.runner import RunOutcome, RunRequest, ScenarioRunner
from skilltest.scenarios.suite import RunConfig, Scenario
from skilltest.scheduler import Planned as Scheduled
from skilltest.scheduler import run_rounds
from skilltest.skills import Skill, left_out
from skilltest.suite.loader import parse_yaml
from skilltest.transcript import Transcript
from skilltest.triggers import hook
from skilltest.triggers.suite import MAX_TURNS, TriggerQuery, TriggerSuite
from skilltest.triggers.trace import write_trigger_trace
from skilltest.triggers.verdict import DECIDED, QueryResult, SuiteResult, TriggerRun
from skilltest.triggers.watch import AgentWatch, Ended, TriggerWatch

DEFAULT_OUTPUT_FOLDER = "output"
"""Raw transcripts go to ``output/`` beside the suite file."""


@dataclass(frozen=True)
class Variant:
    """One description a suite runs with."""

    label: str
    """``current`` or ``candidate``."""
    description: str | None
    """The description the installed copy gets; ``None`` keeps SKILL.md's (or the suite's
    ``description:``)."""
    skills: Mapping[Path, Skill] | None = None
    """``--against REF``: the skill to install instead, by the current SKILL.md's path (the
    skill as it was at REF, with its own description); ``None`` installs the current one."""


CURRENT = Variant("current", None)
"""The skill as it is (with the suite's ``description:`` when it gives one)."""


def with_description(text: str, description: str) -> str:
    """``SKILL.md`` text with ``description`` in its front matter (added when it has none).

    Raises:
        InputError: the front matter is not a YAML mapping.
    """
    body, data = text, {}
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end >= 0:
            parsed = parse_yaml(text[3:end], "SKILL.md front matter", error=InputError)
            if parsed is not None and not isinstance(parsed, dict):
                raise InputError(
                    "the SKILL.md front matter is not a mapping",
                    location="SKILL.md",
                    fix="start SKILL.md with ---, name: and description: lines, then ---",
                )
            data = dict(parsed or {})
            rest = text[end + 4 :]
            body = rest[1:] if rest.startswith("\n") else rest
    data["description"] = description
    front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1_000_000)
    return f"---\n{front}---\n{body}"


def skill_variant(skill: Skill, description: str, folder: Path) -> Skill:
    """A copy of the skill's folder under ``folder`` with another description."""
    target = child(folder, skill.name, what="the skill name")
    shutil.copytree(
        skill.directory,
        target,
        ignore=left_out(skill.directory),
        symlinks=False,
    )
    text = with_description(skill.text, description)
    (target / "SKILL.md").write_text(text, encoding="utf-8")
    return replace(skill, skill_file=target / "SKILL.md", text=text, description=description)


def scenario_of(suite: TriggerSuite, query: TriggerQuery, skill: Skill) -> Scenario:
    """The scenario one query runs as: the query as the prompt, no rubric, the skill and the
    distractors installed."""
    return Scenario(
        id=query.id,
        name=None,
        skill=skill,
        prompt=query.query,
        turns=(),
        expected=Expected(),
        expected_skills=(skill.name,),
        config=RunConfig(
            max_turns=MAX_TURNS,
            timeout_s=suite.timeout_s,
            allowed_tools=suite.allowed_tools,
            model=suite.model,
        ),
        repetitions=suite.repetitions,
        comparison=False,
        min_score=0.0,
        min_delta=0.0,
        workspace=None,
        location=query.location,
        skills=(skill, *suite.distractors),
        # A run its time limit cuts off while the agent's own tool call runs is `timeout`;
        # one cut off while it waits on the model API or the CLI is unscored (`error`).
        score_partial=False,
    )


def trigger_request(
    suite: TriggerSuite,
    query: TriggerQuery,
    skill: Skill,
    rep: int,
    *,
    variant: str = "current",
    output_dir: Path | None = None,
    calls: Path | None = None,
    agent: Agent | None = None,
) -> tuple[RunRequest, TriggerWatch | AgentWatch]:
    """One trigger run's request, and the watch that reads its stream.

    Args:
        suite: The suite.
        query: The query, sent as the prompt.
        skill: The skill under test, as installed for this description.
        rep: The repetition, from 0.
        variant: ``current`` or ``candidate``: names the run's cassette.
        output_dir: Where the run's raw output is kept.
        calls: Where the stop hook counts the run's tool calls (a file of this run alone);
            ``None`` installs no hook, and the watch stops the run once it has read the
            deciding call (by then the CLI has usually asked the model again).
        agent: Another agent than Claude Code to run it through (no hook: ``calls`` is not
            used): its events are read, and its run stopped, by an :class:`AgentWatch`.
    """
    watch: TriggerWatch | AgentWatch
    if agent is not None:
        watch, calls = AgentWatch(skill.name, suite.max_tool_calls, agent), None
    else:
        watch = TriggerWatch(skill.name, suite.max_tool_calls, hooked=calls is not None)
    request = RunRequest(
        scenario_of(suite, query, skill),
        Arm.WITH_SKILL,
        rep,
        suite_path=suite.path,
        output_dir=output_dir,
        model_script=suite.model_script,
        stop_on=watch,
        settings=hook.settings(skill.name, suite.max_tool_calls, calls) if calls else None,
        cassette_arm=variant,
    )
    return request, watch


def ending(watch: TriggerWatch | AgentWatch, transcript: Transcript) -> tuple[Ended, str | None]:
    """How a run ended, and what ended it."""
    error = transcript.error
    if error is not None and error.startswith(MISS_PREFIX):
        # The cassette is stale: what the run did all the same says nothing about the skill.
        return "error", error
    watch.settle(transcript)
    if watch.fired or (error is None and watch.fired_in(transcript)):
        return "fired", watch.reason or transcript.ended
    if watch.budget:
        return "budget", watch.reason or transcript.ended
    if error is not None:
        return "error", error
    if transcript.hung is not None:
        # Cut off while the agent's own tool call ran: it had its chances and did not fire.
        return "timeout", transcript.hung
    return "not-fired", transcript.ended


OVERRAN = (
    "claude asked the model again after the deciding call: its PreToolUse stop hook did not end "
    "the run (are hooks turned off by managed settings?), so the run was stopped then"
)
"""The warning of a run the watch stopped because the hook did not."""


def _request_count(outcome: RunOutcome) -> int | None:
    if outcome.requests_path is None:
        return None
    try:
        recorded = json.loads(outcome.requests_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return len(recorded) if isinstance(recorded, list) else None


def trigger_run(rep: int, watch: TriggerWatch | AgentWatch, outcome: RunOutcome) -> TriggerRun:
    """One run's record from what the runner returned and what the watch saw."""
    transcript = outcome.transcript
    ended, reason = ending(watch, transcript)
    usage = transcript.usage
    return TriggerRun(
        rep=rep,
        ended=ended,
        reason=reason,
        first_calls=watch.first_calls,
        duration_s=outcome.duration_s,
        requests=_request_count(outcome),
        tokens=usage.to_dict() if transcript.results or usage.input_tokens else None,
        cost_usd=transcript.cost_usd,
        transcript=str(outcome.transcript_path) if outcome.transcript_path else None,
        warnings=(*outcome.warnings, *((OVERRAN,) if watch.overran else ())),
        models=transcript.api_models,
        answered_by=transcript.answered_by,
        emulator_rules=transcript.emulator_rules,
    )


@dataclass(frozen=True)
class QueryPlan:
    """One query of one suite, queued with its repetition plan."""

    suite: int
    """The suite's index."""
    query: int
    """The query's index in its suite."""
    repetitions: Repetitions
    """How many runs per description: a fixed K, or adaptive looks."""


def judged_variants(variants: Sequence[Variant]) -> tuple[int, ...]:
    """The variants whose verdicts decide a query (the skill at each ``--against`` REF is only
    a yardstick)."""
    return tuple(v for v, variant in enumerate(variants) if not is_revision_arm(variant.label))


async def run_triggers(
    suites: Sequence[TriggerSuite],
    runner: ScenarioRunner,
    *,
    variants: Sequence[Variant] = (CURRENT,),
    jobs: int = 4,
    output_dir: Path | None = None,
    plan: Callable[[TriggerSuite], Repetitions] | None = None,
    on_result: Callable[[int, int, int, QueryResult], None] | None = None,
    on_run: Callable[[TriggerRun, Transcript], None] | None = None,
    provenance: Provenance | None = None,
    budget: Budget | None = None,
    agent: Agent | None = None,
) -> list[list[SuiteResult]]:
    """Runs every query of every suite per its plan under each description, ``jobs`` runs at
    once, through the scheduler every layer uses (:func:`~skilltest.scheduler.run_rounds`):
    the descriptions of a query are its arms, alternating per repetition, and under ``-k auto``
    a query runs one more round per description at a time until every judged description's
    verdict is decided or the plan's ``max_k``.

    Args:
        suites: The loaded suites.
        runner: The scenario layer's runner.
        variants: The descriptions to run with (in the order reported).
        jobs: CLI processes at once.
        output_dir: Where raw output is kept (default: ``output/`` beside each suite).
        plan: Each suite's repetition plan (default: its ``repetitions``, else adaptive).
        on_result: Called with (suite index, variant index, query index, result) as soon as a
            query's last run finished.
        on_run: Called after each run, with its transcript.
        provenance: What produced the runs, for their traces.
        budget: ``--max-cost-usd``: each run starts only when it lets it; once it does not, no
            run starts any more (a query whose plan is not through has no result).
        agent: The agent the runs go through when it is not Claude Code (``runner`` runs it).

    Returns:
        Per suite, one result per variant.
    """
    plan_of = plan or (lambda suite: plan_for(None, suite.repetitions))
    judged = judged_variants(variants)
    labels = tuple(variant.label for variant in variants)
    with tempfile.TemporaryDirectory(prefix="skilltest-descriptions-") as tmp:
        skills: dict[tuple[int, int], Skill] = {}
        for s, suite in enumerate(suites):
            for v, variant in enumerate(variants):
                if variant.skills is not None:
                    skills[s, v] = variant.skills[suite.skill.skill_file]
                    continue
                description = variant.description or suite.description
                skills[s, v] = (
                    skill_variant(suite.skill, description, Path(tmp) / f"{s}-{v}")
                    if description is not None
                    else suite.skill
                )
        planned = [
            QueryPlan(s, q, plan_of(suite))
            for s, suite in enumerate(suites)
            for q in range(len(suite.queries))
        ]
        results: dict[tuple[int, int, int], QueryResult] = {}

        def estimate(item: QueryPlan, label: str) -> float:
            from skilltest.triggers.estimates import run_estimate

            suite = suites[item.suite]
            description = skills[item.suite, labels.index(label)].description
            return run_estimate(suite, suite.queries[item.query], description).usd

        def admit(item: QueryPlan, label: str, rep: int) -> bool:
            return budget is None or budget.start(estimate(item, label))

        async def one(item: QueryPlan, label: str, rep: int) -> tuple[int, TriggerRun]:
            v = labels.index(label)
            suite = suites[item.suite]
            query = suite.queries[item.query]
            skill = skills[item.suite, v]
            folder = output_dir or suite.path.parent / DEFAULT_OUTPUT_FOLDER
            request, watch = trigger_request(
                suite,
                query,
                skill,
                rep,
                variant=label,
                output_dir=folder if label == CURRENT.label else folder / label,
                calls=Path(tmp) / f"calls-{item.suite}-{v}-{item.query}-{rep}.txt",
                agent=agent,
            )
            try:
                outcome = await runner.run(request)
            except (RunError, OSError) as exc:
                # A run that cannot even start is unscored; the suite goes on.
                outcome = RunOutcome(Transcript(source=runner.backend, error=str(exc)))
            if budget is not None:
                usage = outcome.transcript.usage
                model = next(iter(outcome.transcript.api_models), None) or suite.model
                budget.finish(
                    estimate(item, label),
                    run_cost(
                        outcome.transcript.cost_usd,
                        model or DEFAULT_CLI_MODEL,
                        input=usage.input_tokens,
                        output=usage.output_tokens,
                        cache_write=usage.cache_creation_input_tokens,
                        cache_read=usage.cache_read_input_tokens,
                    ),
                )
            run = trigger_run(rep, watch, outcome)
            run = _with_trace(
                suite,
                query,
                skill,
                label,
                run,
                outcome,
                backend=runner.backend,
                provenance=provenance,
            )
            if on_run is not None:
                on_run(run, outcome.transcript)
            return v, run

        def judge(
            item: QueryPlan, records: Sequence[tuple[int, TriggerRun]], v: int
        ) -> QueryResult:
            suite = suites[item.suite]
            return query_result(
                suite,
                suite.queries[item.query],
                [run for variant, run in records if variant == v],
                item.repetitions,
            )

        def decided(item: QueryPlan, records: Sequence[tuple[int, TriggerRun]], k: int) -> bool:
            return all(judge(item, records, v).verdict in DECIDED for v in judged)

        def finished(item: QueryPlan, records: list[tuple[int, TriggerRun]], k: int) -> None:
            for v in range(len(variants)):
                result = judge(item, records, v)
                results[item.suite, v, item.query] = result
                if on_result is not None:
                    on_result(item.suite, v, item.query, result)

        await run_rounds(
            [Scheduled(item, item.repetitions, labels) for item in planned],
            workers=jobs,
            run=one,
            decided=decided,
            finished=finished,
            admit=admit if budget is not None else None,
        )
        return assemble(suites, variants, results)


def assemble(
    suites: Sequence[TriggerSuite],
    variants: Sequence[Variant],
    results: Mapping[tuple[int, int, int], QueryResult],
) -> list[list[SuiteResult]]:
    """Per suite, one result per variant, from the queries finished so far (keyed by suite,
    variant and query index); a query not finished is left out."""
    return [
        [
            SuiteResult(
                suite=str(suite.path),
                skill=suite.skill.name,
                variant=variant.label,
                description=(
                    variant.skills[suite.skill.skill_file].description
                    if variant.skills is not None
                    else variant.description or suite.description or suite.skill.description
                ),
                queries=tuple(
                    results[s, v, q] for q in range(len(suite.queries)) if (s, v, q) in results
                ),
                threshold=suite.threshold,
                max_tool_calls=suite.max_tool_calls,
                distractors=tuple(d.name for d in suite.distractors),
            )
            for v, variant in enumerate(variants)
        ]
        for s, suite in enumerate(suites)
    ]


def _with_trace(
    suite: TriggerSuite,
    query: TriggerQuery,
    skill: Skill,
    variant: str,
    run: TriggerRun,
    outcome: RunOutcome,
    *,
    backend: str,
    provenance: Provenance | None,
) -> TriggerRun:
    """The run with its trace, written beside its kept transcript."""
    try:
        path = write_trigger_trace(
            suite,
            query,
            description=skill.description,
            variant=variant,
            run=run,
            outcome=outcome,
            backend=backend,
            provenance=provenance,
        )
    except OSError as exc:
        # The run itself counts; a trace that cannot be written (a full disk) is a warning.
        return replace(run, warnings=(*run.warnings, f"trace not written: {exc}"))
    return run if path is None else replace(run, trace=str(path))


def query_result(
    suite: TriggerSuite,
    query: TriggerQuery,
    runs: Sequence[TriggerRun],
    repetitions: Repetitions | None = None,
) -> QueryResult:
    """A query's result from its runs (in any order) and the plan they came from."""
    return QueryResult(
        query=query,
        runs=tuple(sorted(runs, key=lambda r: r.rep)),
        threshold=suite.threshold,
        repetitions=repetitions,
    )
