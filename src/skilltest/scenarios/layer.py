"""The scenario layer's entry point: :func:`run` takes :class:`ScenarioOptions` and returns
:class:`ScenarioResults`.

The flow: load and select the suites (the core subset with ``comparison_only``), read the skill
at ``against`` when asked, find ``claude``, choose the backend (live, emulator, or cassettes),
check every MCP server and the rubrics' tool names, prove a controlled world's wiring with its
canary, run every scenario's arms K times (or adaptively; canary scenarios first), and write the
outputs as each scenario's verdict is known; an interrupted run writes what had finished, marked
so, and re-raises.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

from skilltest.agents.registry import DEFAULT_AGENT
from skilltest.claude.isolation import BASELINES, Baseline
from skilltest.errors import InputError
from skilltest.evalcases import names_eval_cases
from skilltest.flow.loop import run_async
from skilltest.flow.options import ComparedOptions, Observer, budget_of
from skilltest.flow.plan import (
    load_all,
    repetition_plan,
    select,
    take_shard,
)
from skilltest.flow.provenance import finish_provenance, source_trees, start_provenance
from skilltest.flow.results import RunResults, run_saving, save_results, saved_when_stopped
from skilltest.flow.tape import Tape, tape_of
from skilltest.revision import against_refs, previous_revisions, revision_arms
from skilltest.scenarios.report import RunContext, scenario_about
from skilltest.scenarios.suite import (
    Overrides,
    ScenarioSuite,
    load_eval_cases,
    load_scenario_suite,
)
from skilltest.suite.ids import check_unique_scenarios

if TYPE_CHECKING:
    from skilltest.agents.base import TurnAgent
    from skilltest.cost.render import SuiteEstimate
    from skilltest.flow.shard import ShardPlan
    from skilltest.report.junit import JUnitCase
    from skilltest.report.provenance import SourceTree
    from skilltest.scenarios.canary import CanaryReport
    from skilltest.scenarios.outcome import RunRecord
    from skilltest.scenarios.verdict import ScenarioVerdict
    from skilltest.skills import Skill

DEFAULT_SUITE_DIR = Path("tests/scenarios")
"""Where the suites are when none is named."""


@dataclass(frozen=True, kw_only=True)
class ScenarioOptions(ComparedOptions):
    """What a scenario run takes besides the options every layer takes."""

    comparison_only: bool = False
    """Run only the core subset (``comparison: true``) and the canaries."""
    min_score: float | None = None
    """The with-skill mean a scenario needs (default: the suite's, else 0.6)."""
    min_delta: float | None = None
    """The lower edge of the neutral band (default: the suite's, else -0.05)."""
    judge_model: str | None = None
    """The model ``judge`` checks ask (default: the scenario's model, else the default model)."""
    allow_code_graders: bool = False
    """Run a waza eval's ``code`` graders (Python assertions, in the run's workspace)."""
    baseline: Baseline = "clean"
    """``clean``: both arms without the CLI's bundled skills and built-in plugins; ``bundled``:
    both arms with them, the without-skill arm then being ``claude plugin eval``'s no-plugin
    arm."""


@dataclass(frozen=True)
class ScenarioResults(RunResults):
    """A scenario run's results, finished or not."""

    verdicts: tuple[ScenarioVerdict, ...]
    """Each finished scenario's verdict and runs, in suite order."""
    context: RunContext
    """The backend, the CLI's version and path, the suites, ``jobs``."""
    planned: int = 0
    """The scenarios the run set out to judge."""
    canaries: frozenset[tuple[str, str]] = frozenset()
    """``(skill, scenario id)`` of each canary scenario."""
    allow_inconclusive: bool = False
    """``inconclusive`` does not fail."""
    output_dir: Path | None = None
    """Where raw transcripts are kept (``None``: ``output/`` beside each suite)."""
    about: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    """What the suite asks of each scenario (prompt, turns, rubric, checks), by skill and id,
    for the results file's reports."""

    junit_name: ClassVar[str] = "skilltest scenarios"

    @property
    def canary(self) -> CanaryReport | None:
        """What the canary scenarios say; ``None`` when none ran."""
        from skilltest.scenarios.canary import canary_report

        return canary_report(self.verdicts, self.canaries)

    @property
    def misses(self) -> list[RunRecord]:
        """Runs whose requests the cassettes did not hold."""
        return [
            run
            for result in self.verdicts
            for run in result.runs
            if run.error is not None and run.error.startswith("replay miss:")
        ]

    @property
    def bad_input(self) -> bool:
        """A run met a pattern that could not be matched in time (the suite must change)."""
        return any(run.bad_input for result in self.verdicts for run in result.runs)

    @property
    def failing(self) -> list[ScenarioVerdict]:
        """The scenarios that fail the run (``inconclusive`` only without
        ``allow_inconclusive``)."""
        return [
            r
            for r in self.verdicts
            if not r.passed and not (r.inconclusive and self.allow_inconclusive)
        ]

    def to_document(self) -> dict[str, Any]:
        """The results file."""
        from skilltest.scenarios.report import results_document

        document = results_document(
            self.verdicts,
            self.context,
            complete=self.complete,
            interrupted=self.interrupted,
            provenance=self.provenance,
            about=self.about,
        )
        canary = self.canary
        document["canary"] = canary.to_dict() if canary is not None else None
        document["replay"] = self.tape.to_dict(misses=[str(run.error) for run in self.misses])
        document["shard"] = None if self.shard is None else self.shard.to_dict()
        document["stopped"] = None if self.stopped is None else dict(self.stopped)
        return document

    def junit_cases(self) -> list[JUnitCase]:
        """One JUnit case per scenario."""
        from skilltest.scenarios.report import junit_cases

        return junit_cases(self.verdicts, allow_inconclusive=self.allow_inconclusive)


def load_suites(
    options: ScenarioOptions,
) -> tuple[list[Path], list[ScenarioSuite], ShardPlan | None]:
    """The suite files and the suites, loaded, validated and narrowed to ``only`` (and to the
    core subset with ``comparison_only``) and to this shard's share, with the plan of the shard
    (``None`` without ``shard``).

    Raises:
        InputError: a suite, a skill, a plugin, a pattern or a name that is not valid.
    """
    overrides = Overrides(
        min_score=options.min_score,
        min_delta=options.min_delta,
        model=options.model,
        skill_only=options.skill_only,
        plugin_dir=options.plugin_dir,
        plugin_name=options.plugin,
        allow_code_graders=options.allow_code_graders,
    )
    # A plugin's evals/ folder, or one of its case folders, is Claude Code eval cases.
    cases = [target for target in options.suites if names_eval_cases(target)]
    files = [target for target in options.suites if target not in cases]
    paths: list[Path] = []
    suites: list[ScenarioSuite] = []
    if files or not cases:
        paths, suites = load_all(
            files,
            DEFAULT_SUITE_DIR,
            example="tests/scenarios/<skill>.yaml",
            load=lambda path: load_scenario_suite(
                path, skills_dir=options.skills_dir, overrides=overrides, skill_name=options.skill
            ),
        )
    for target in cases:
        paths.append(target)
        suites.append(load_eval_cases(target, overrides=overrides))
    suites = select(suites, options.only)
    if options.comparison_only:
        suites = _comparison_only(suites)
    check_unique_scenarios(
        [(s.label, s.id, s.location) for suite in suites for s in suite.scenarios]
    )
    suites, shard = take_shard(
        options, suites, layer="scenarios", skill_of=lambda _, scenario: scenario.label
    )
    return paths, suites, shard


def run(
    options: ScenarioOptions | None = None, *, observer: Observer | None = None
) -> ScenarioResults:
    """Runs scenario suites through the real ``claude`` CLI, with the skill installed and
    without it, K times each, and scores each run's tool calls with the scenario's rubric.

    Args:
        options: What to run and how (default: every suite under ``tests/scenarios/``).
        observer: Sees notices and each finished run (default: nothing is shown).

    Returns:
        The results; the outputs ``options.outputs`` asks for are written.

    Raises:
        InputError: bad input (a suite, an option, a cassette folder), before any run.
        ConfigurationError: no usable ``claude``, a live backend without credentials, an MCP
            server that does not start, a world canary the fake never saw.
        KeyboardInterrupt: the run was interrupted; what had finished is written, marked so.
    """
    options = options or ScenarioOptions()
    observer = observer or Observer()
    paths, suites, shard = load_suites(options)
    for suite in suites:
        if suite.source_format is not None:
            read = suite.source_format
            observer.notice(f"{suite.path}: read as a {read.name} ({read.how})")
        if options.baseline != "clean":
            observer.notice(f"baseline: {options.baseline} ({BASELINES[options.baseline]})")
        if suite.plugin_found is not None:
            observer.notice(
                f"{suite.path}: testing the plugin it lives in, {suite.plugin_found} "
                "(--plugin-dir names another)"
            )
        if suite.scoring.announcement is not None:
            observer.notice(f"{suite.path}: {suite.scoring.announcement}")
    tape = tape_of(options, layer="scenarios")
    scenarios = [scenario for suite in suites for scenario in suite.scenarios]
    refs = against_refs(options.against, options.also_against)
    if refs:
        for scenario in scenarios:
            if scenario.plugin is not None:
                raise InputError(
                    f"scenario {scenario.id!r} tests the plugin {scenario.plugin.name!r}; "
                    "--against compares revisions of a skill, not of a plugin",
                    location=scenario.location,
                    fix="run --against on suites of skills, or compare two results files with "
                    "skilltest compare",
                )
    with previous_revisions(refs, (s.skill for s in scenarios)) as previous:
        return _run(options, observer, paths, suites, tape, previous, shard)


def estimate(options: ScenarioOptions | None = None) -> list[SuiteEstimate]:
    """What a run with these options would make and cost, per suite, without calling anything
    (``--dry-run``; see :mod:`skilltest.cost.estimate` for what it assumes). Nothing is started:
    no ``claude``, no MCP server, no world.

    Raises:
        InputError: bad input (a suite, an option), as :func:`run` would raise it.
    """
    from skilltest.scenarios.estimates import estimate_planned
    from skilltest.scenarios.runs import plan

    options = options or ScenarioOptions()
    _, suites, _ = load_suites(options)
    # The skill at each --against REF is taken to be the current one: nothing is checked out.
    revisions = revision_arms(against_refs(options.against, options.also_against))
    return estimate_planned(
        plan(suites, repetition_plan(options), revisions, lambda scenario, _: scenario.skill)
    )


def _run(
    options: ScenarioOptions,
    observer: Observer,
    paths: Sequence[Path],
    suites: list[ScenarioSuite],
    tape: Tape,
    previous: dict[str, dict[Path, Skill]],
    shard: ShardPlan | None,
) -> ScenarioResults:
    from skilltest import preload
    from skilltest.agents.base import AgentBinary
    from skilltest.claude.binary import ClaudeBinary
    from skilltest.claude.isolation import unconfined_bash
    from skilltest.scenarios.agent_runner import AgentCliRunner
    from skilltest.scenarios.endpoints import cli_backend
    from skilltest.scenarios.runner import ClaudeCliRunner
    from skilltest.scenarios.runs import asks_a_model, plan, run_suites
    from skilltest.scenarios.tools import check_scenario_tools
    from skilltest.scenarios.verdict import LIBRARIES
    from skilltest.scenarios.wiring import check_wiring

    asks = any(asks_a_model(s) for suite in suites for s in suite.scenarios)

    def preload_beside_the_runs() -> None:
        # Once the first process works, beside it: the SDK when a judge or an agent mock will
        # ask the model, and what the verdicts import.
        if asks:
            from skilltest.runners.sdk import start_import

            start_import()
        preload.start(LIBRARIES, name="skilltest-stats-import")

    turn_agent = None
    if options.agent != DEFAULT_AGENT:
        from skilltest.agents import agent as agent_named
        from skilltest.scenarios.agent_runner import check_agent_scenarios

        if options.baseline != "clean":
            raise InputError(
                f"--baseline {options.baseline} keeps what Claude Code bundles; "
                f"--agent {options.agent} has nothing of it to keep",
                fix="leave out --baseline, or run with --agent claude-code",
            )
        turn_agent = cast("TurnAgent", agent_named(options.agent))
        check_agent_scenarios(turn_agent, [s for suite in suites for s in suite.scenarios])
    chosen = cli_backend(
        options, suites, observer, tape, {s.path: s.replay for s in suites}, agent=options.agent
    )
    binary, endpoint = chosen.binary, chosen.endpoint
    provenance = start_provenance(
        options,
        entry="skilltest.scenarios.run",
        backend=chosen.backend,
        suites=paths,
        claude_version=binary.version if turn_agent is None else None,
        agent=(options.agent, binary.version),
        trees=scenario_trees(suites),
    )
    # Claude Code's file tools are confined to its sandbox and Bash is not; another agent says
    # what holds its own commands in.
    notice = (
        unconfined_bash(
            rule for suite in suites for s in suite.scenarios for rule in s.config.allowed_tools
        )
        if turn_agent is None
        else turn_agent.commands_note
    )
    if notice:
        observer.notice(f"skilltest: note: {notice}")
    repetitions = repetition_plan(options)
    revisions = revision_arms(against_refs(options.against, options.also_against))
    planned = plan(suites, repetitions, revisions, lambda s, arm: previous[arm][s.skill.skill_file])
    order = {(p.scenario.label, p.scenario.id): i for i, p in enumerate(planned)}
    finished: list[tuple[int, ScenarioVerdict]] = []
    recorder = getattr(endpoint, "recorder", None)
    base = ScenarioResults(
        verdicts=(),
        context=RunContext(
            backend=chosen.backend,
            claude_version=binary.version if turn_agent is None else None,
            claude_path=str(binary.path) if turn_agent is None else None,
            known_version=binary.known,
            agent=options.agent,
            agent_version=binary.version,
            suites=tuple(str(p) for p in paths),
            jobs=options.jobs,
            skill_only=options.skill_only,
            baseline=options.baseline,
        ),
        planned=len(planned),
        canaries=frozenset((p.scenario.label, p.scenario.id) for p in planned if p.scenario.canary),
        allow_inconclusive=options.allow_inconclusive,
        tape=tape,
        output_dir=options.output_dir,
        shard=shard,
        about={(p.scenario.label, p.scenario.id): scenario_about(p.scenario) for p in planned},
    )

    budget = budget_of(options)

    def save(*, complete: bool, interrupted: bool = False) -> ScenarioResults:
        verdicts = tuple(verdict for _, verdict in sorted(finished, key=lambda pair: pair[0]))
        runs = [run for verdict in verdicts for run in verdict.runs]
        return save_results(
            base,
            options.outputs,
            complete=complete,
            interrupted=interrupted,
            budget=budget,
            recorder=recorder,
            verdicts=verdicts,
            provenance=finish_provenance(
                provenance.with_models(m for run in runs for m in run.models)
                .with_recorded(run.recorded_with for run in runs if run.recorded_with)
                .with_answered(run.answered_by for run in runs)
            ),
        )

    def on_verdict(verdict: ScenarioVerdict) -> None:
        finished.append((order.get((verdict.skill, verdict.scenario_id), len(order)), verdict))
        save(complete=False)

    # A stop before the runs writes the results marked interrupted; a suite these checks
    # refuse writes none (an earlier results file stays as it was).
    with saved_when_stopped(observer, save):
        # Every MCP server answers initialize and tools/list before the first run, and the
        # rubrics name only tools that exist: a broken server stops the suite here, with its
        # stderr.
        if not tape.replaying:  # replayed servers are not started: their cassettes answer
            check_scenario_tools([s for suite in suites for s in suite.scenarios if not s.skip])
        runner: ClaudeCliRunner | AgentCliRunner
        if turn_agent is not None:
            assert isinstance(binary, AgentBinary)
            runner = AgentCliRunner(
                turn_agent,
                binary,
                endpoint,
                processes=options.jobs,
                on_first_start=preload_beside_the_runs,
                judge_model=options.judge_model,
            )
        else:
            assert isinstance(binary, ClaudeBinary)
            runner = ClaudeCliRunner(
                binary,
                endpoint,
                judge_model=options.judge_model,
                processes=options.jobs,
                on_first_start=preload_beside_the_runs,
                baseline=options.baseline,
            )
        # Before anything could write to a controlled world: one read-only run proves the
        # agent's requests reach the fake (exit 2 with how they escaped when they do not).
        for line in run_async(check_wiring(suites, runner, options.output_dir)):
            observer.notice(f"skilltest: {line}")
        save(complete=False)  # an unwritable results file fails now, before the suite's runs
    observer.started(sum(p.run_count for p in planned))
    runs = run_suites(
        suites,
        runner,
        jobs=options.jobs,
        output_dir=options.output_dir,
        on_verdict=on_verdict,
        observer=observer,
        repetitions=repetitions,
        revisions=revisions,
        previous=lambda scenario, arm: previous[arm][scenario.skill.skill_file],
        provenance=provenance,
        budget=budget,
    )
    return run_saving(runs, observer=observer, save=save, recorder=recorder)


def _comparison_only(suites: list[ScenarioSuite]) -> list[ScenarioSuite]:
    """The core subset (``comparison: true``) and the canaries that guard it.

    Raises:
        InputError: no scenario is marked ``comparison: true``.
    """
    kept = [
        dataclasses.replace(suite, scenarios=core)
        for suite in suites
        if (core := tuple(s for s in suite.scenarios if s.core or s.canary))
    ]
    if not any(s.core for suite in kept for s in suite.scenarios):
        raise InputError(
            "no scenario is marked `comparison: true`, the core subset --comparison-only runs",
            location=", ".join(str(suite.path) for suite in suites),
            fix="add `comparison: true` to the core scenarios (or the suite), or leave out "
            "--comparison-only",
        )
    return kept


def scenario_trees(suites: Sequence[ScenarioSuite]) -> tuple[SourceTree, ...]:
    """The folders the with-skill arms read: every skill installed, every plugin loaded, each
    with its files' checksums."""
    scenarios = [scenario for suite in suites for scenario in suite.scenarios]
    return source_trees(
        skills=(skill.directory for scenario in scenarios for skill in scenario.skills),
        plugins=(scenario.plugin.root for scenario in scenarios if scenario.plugin is not None),
    )
