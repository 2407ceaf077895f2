"""The trigger layer's entry point: :func:`run` takes :class:`TriggerOptions` and returns
:class:`TriggerResults`.

The flow: check the description options, load and select the suites, check the tape, read the
skill at ``against`` when asked, find ``claude``, choose the backend (the cassettes alone with
``replay``), run each query K times per description (each run ended at the call that decides
whether the skill fired), and write the outputs as queries finish; an interrupted run writes
what had finished, marked so, and re-raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

from skilltest.agents.registry import DEFAULT_AGENT
from skilltest.errors import InputError
from skilltest.flow.options import Observer, RunOptions, budget_of
from skilltest.flow.plan import (
    load_all,
    repetition_plan,
    select,
    take_shard,
)
from skilltest.flow.provenance import finish_provenance, source_trees, start_provenance
from skilltest.flow.results import RunResults, run_saving, save_results
from skilltest.flow.tape import Tape, tape_of
from skilltest.repetitions import TRIGGERS_MAX_K
from skilltest.revision import against_refs, is_revision_arm, previous_revisions, revision_arms
from skilltest.suite.ids import check_unique_scenarios
from skilltest.triggers.suite import TriggerSuite, load_trigger_suite

if TYPE_CHECKING:
    from skilltest.agents.base import TurnAgent
    from skilltest.cost.render import SuiteEstimate
    from skilltest.flow.shard import ShardPlan
    from skilltest.report.junit import JUnitCase
    from skilltest.transcript import AnsweredBy, Transcript
    from skilltest.triggers.runs import Variant
    from skilltest.triggers.verdict import QueryResult, SuiteResult

DEFAULT_SUITE_DIR = Path("tests/triggers")
"""Where the suites are when none is named."""
MAX_DESCRIPTION = 1024
DESCRIPTION_FILE_BYTES = 64 * 1024
"""The most a ``--description-file`` may hold (the description itself is at most
:data:`MAX_DESCRIPTION` characters; the file may have some lines around it)."""
"""The longest description the Agent Skills format allows."""


@dataclass(frozen=True, kw_only=True)
class TriggerOptions(RunOptions):
    """What a trigger run takes besides the options every layer takes (``repeat`` counts the
    runs of a query under each description, or ``"auto"``)."""

    max_k: int = TRIGGERS_MAX_K
    """``repeat="auto"``: the most runs of a query per description (20: a trigger run ends at
    the call that decides it, and a query that fires in 9 runs of 10 needs about 20 to be
    shown credibly above a threshold of 0.5)."""
    description: str | None = None
    """Test this description instead of the skill's own (SKILL.md is not edited)."""
    description_file: Path | None = None
    """Test the description in this file (its whole text) instead of the skill's own."""
    compare_description: bool = False
    """Run the current description and the other one side by side and report their
    differences."""
    record: Path | None = None
    """Record every model exchange into cassettes under this folder, one per (skill, query,
    description): ``<record>/<skill>/<query>/<current|candidate>.yaml``."""
    replay: Path | None = None
    """Answer from the cassettes under this folder only: no API, no key, no model script."""
    record_missing: bool = False
    """With ``replay``: run live and record what the cassettes do not hold."""
    threshold: float | None = None
    """``--trigger-threshold``: the share of runs that decides a query, for every suite
    (default: each suite's ``threshold``, else 0.5)."""


@dataclass(frozen=True)
class TriggerResults(RunResults):
    """A trigger run's results, finished or not."""

    suites: tuple[tuple[SuiteResult, ...], ...]
    """Per suite, one result per description (or revision) it ran with."""
    context: dict[str, Any]
    """The backend, the CLI's version and path, the suite files, ``jobs``."""
    against: str | None = None
    """The first REF of ``--against``: each suite's second result is the skill as it was
    there."""
    revisions: tuple[tuple[str, str], ...] = ()
    """Every REF of ``--against`` with its arm (``previous``, ``previous-2``...), in the order
    given: each suite's results after the first are the skill at each in turn."""
    finished_queries: int = 0
    """Query results finished (per description)."""
    allow_inconclusive: bool = False
    """An ``inconclusive`` query does not fail the run."""

    junit_name: ClassVar[str] = "skilltest triggers"

    @property
    def flat(self) -> list[SuiteResult]:
        """Every suite result, each suite's descriptions in turn."""
        return [suite for each in self.suites for suite in each]

    @property
    def judged(self) -> list[SuiteResult]:
        """The results that decide the run: the skill at ``against`` is the yardstick, its own
        misses fail nothing."""
        return [suite for suite in self.flat if not is_revision_arm(suite.variant)]

    @property
    def failing(self) -> list[tuple[SuiteResult, QueryResult]]:
        """The judged queries that fail the run: ``fail`` and ``error``, and ``inconclusive``
        unless ``allow_inconclusive``."""
        return [
            (suite, query)
            for suite in self.judged
            for query in suite.queries
            if not query.passed and not (query.inconclusive and self.allow_inconclusive)
        ]

    @property
    def passed(self) -> bool:
        """No judged query fails the run."""
        return not self.failing

    @property
    def misses(self) -> list[str]:
        """Why each run the cassettes could not answer missed (``replay miss: ...``)."""
        from skilltest.replay.match import MISS_PREFIX

        return [
            str(run.reason)
            for suite in self.flat
            for query in suite.queries
            for run in query.runs
            if run.ended == "error" and (run.reason or "").startswith(MISS_PREFIX)
        ]

    def to_document(self) -> dict[str, Any]:
        """The results file."""
        from skilltest.triggers.report import results_document

        document = results_document(
            [list(each) for each in self.suites],
            self.context,
            complete=self.complete,
            interrupted=self.interrupted,
            provenance=self.provenance,
        )
        document["replay"] = self.tape.to_dict(misses=self.misses)
        document["shard"] = None if self.shard is None else self.shard.to_dict()
        document["stopped"] = None if self.stopped is None else dict(self.stopped)
        return document

    def junit_cases(self) -> list[JUnitCase]:
        """One JUnit case per query of the skill under test (and per description)."""
        from skilltest.triggers.report import junit_cases

        return junit_cases(self.judged, allow_inconclusive=self.allow_inconclusive)


def candidate_description(options: TriggerOptions) -> str | None:
    """``description`` or the text of ``description_file``, checked.

    Raises:
        InputError: an empty or too long description, an unreadable file, or
            ``compare_description`` without a description.
    """
    if options.description_file is not None:
        where = "--description-file"
        from skilltest.files import decode, read_bytes

        raw = read_bytes(
            options.description_file,
            limit=DESCRIPTION_FILE_BYTES,
            what="the description file",
            too_large="a description file may be",
            large_fix="give a text file holding the description alone",
            missing="no such description file (--description-file)",
            missing_fix="give the path of a text file holding the description",
        )
        text: str | None = decode(
            raw, options.description_file, fix="save the description as UTF-8"
        ).strip()
    else:
        where, text = "--description", options.description
    if text is None:
        if options.compare_description:
            raise InputError(
                "--compare-description needs the description to compare with",
                location="--compare-description",
                fix="add --description TEXT or --description-file FILE",
            )
        return None
    if not text.strip() or len(text) > MAX_DESCRIPTION:
        raise InputError(
            f"the description has {len(text.strip())} characters",
            location=where,
            fix=f"give a description of 1 to {MAX_DESCRIPTION} characters (the Agent Skills limit)",
        )
    return text.strip()


def load_suites(
    options: TriggerOptions,
) -> tuple[list[Path], list[TriggerSuite], ShardPlan | None]:
    """The suite files and the suites, loaded, validated and narrowed to ``only`` and to this
    shard's share, with the plan of the shard (``None`` without ``shard``).

    Raises:
        InputError: a suite, a skill or a name that is not valid.
    """
    paths, suites = load_all(
        options.suites,
        DEFAULT_SUITE_DIR,
        example="tests/triggers/<skill>.yaml",
        load=lambda path: load_trigger_suite(
            path,
            skills_dir=options.skills_dir,
            model=options.model,
            threshold=options.threshold,
        ),
    )
    suites = select(suites, options.only, items="queries", noun="query", example="loki-*")
    check_unique_scenarios([(s.skill.name, q.id, q.location) for s in suites for q in s.queries])
    suites, shard = take_shard(
        options,
        suites,
        layer="triggers",
        skill_of=lambda suite, _: suite.skill.name,
        items="queries",
    )
    return paths, suites, shard


def run(
    options: TriggerOptions | None = None, *, observer: Observer | None = None
) -> TriggerResults:
    """Runs trigger suites: each query K times through the real ``claude`` CLI with the skill
    (and the suite's distractors) installed, each run stopped as soon as it is known whether the
    skill fired.

    Args:
        options: What to run and how (default: every suite under ``tests/triggers/``).
        observer: Sees notices and each finished run (default: nothing is shown).

    Returns:
        The results; the outputs ``options.outputs`` asks for are written.

    Raises:
        InputError: bad input (a suite, a description, an option, a cassette folder), before
            any run.
        ConfigurationError: no usable ``claude``, a live backend without credentials.
        KeyboardInterrupt: the run was interrupted; what had finished is written, marked so.
    """
    options = options or TriggerOptions()
    observer = observer or Observer()
    if options.against is not None and (
        options.description is not None
        or options.description_file is not None
        or options.compare_description
    ):
        raise InputError(
            "--against compares the skill with a previous revision; it does not take another "
            "description",
            location=f"--against {options.against}",
            fix="drop --description, --description-file and --compare-description, or drop "
            "--against",
        )
    candidate = candidate_description(options)
    repetition_plan(options)  # --min-k above --max-k is refused before anything loads
    paths, suites, shard = load_suites(options)
    for suite in suites:
        if suite.source_format is not None:
            folder = suite.skill.skill_file.resolve().parent
            shown = folder.relative_to(Path.cwd()) if folder.is_relative_to(Path.cwd()) else folder
            read = suite.source_format
            observer.notice(
                f"{suite.path}: read as a {read.name} ({read.how}, the skill is {shown}/)"
            )
    tape = tape_of(options, layer="triggers")
    tested = sorted({suite.skill.name for suite in suites})
    if candidate is not None and len(tested) > 1:
        raise InputError(
            f"another description is for one skill, and these suites test {', '.join(tested)}",
            location="--description-file" if options.description_file else "--description",
            fix="name the suite of the skill whose description you are tuning, e.g. "
            f"skilltest triggers {tested[0]} --description ...",
        )
    refs = against_refs(options.against, options.also_against)
    with previous_revisions(refs, (suite.skill for suite in suites)) as previous:
        from skilltest.triggers.runs import CURRENT, Variant

        if refs:
            # The skill at each REF runs as an arm of its own, alternating with the current one.
            variants: tuple[Variant, ...] = (
                CURRENT,
                *(Variant(arm, None, skills=previous[arm]) for arm, _ in revision_arms(refs)),
            )
        elif candidate is None:
            variants = (CURRENT,)
        elif options.compare_description:
            variants = (CURRENT, Variant("candidate", candidate))
        else:
            # Only the other description runs; it is reported as the one under test.
            variants = (Variant("current", candidate),)
        return _run(options, observer, paths, suites, variants, tape, shard)


def estimate(options: TriggerOptions | None = None) -> list[SuiteEstimate]:
    """What a run with these options would make and cost, per suite, without calling anything
    (``--dry-run``; see :mod:`skilltest.cost.estimate` for what it assumes).

    Raises:
        InputError: bad input (a suite, a description, an option), as :func:`run` would raise
            it.
    """
    from skilltest.triggers.estimates import estimate_suites

    options = options or TriggerOptions()
    candidate = candidate_description(options)
    plan = repetition_plan(options)
    _, suites, _ = load_suites(options)
    if options.against is not None:
        descriptions: tuple[str | None, ...] = (None,) * (
            1 + len(against_refs(options.against, options.also_against))
        )
    elif candidate is None:
        descriptions = (None,)
    elif options.compare_description:
        descriptions = (None, candidate)
    else:
        descriptions = (candidate,)
    return estimate_suites(suites, descriptions, plan)


def _run(
    options: TriggerOptions,
    observer: Observer,
    paths: Sequence[Path],
    suites: list[TriggerSuite],
    variants: tuple[Variant, ...],
    tape: Tape,
    shard: ShardPlan | None,
) -> TriggerResults:
    from skilltest.agents.base import AgentBinary
    from skilltest.claude.binary import ClaudeBinary
    from skilltest.scenarios.agent_runner import AgentCliRunner
    from skilltest.scenarios.endpoints import cli_backend
    from skilltest.scenarios.runner import ClaudeCliRunner
    from skilltest.triggers.runs import assemble, run_triggers
    from skilltest.triggers.verdict import TriggerRun, against_revisions

    turn_agent = None
    if options.agent != DEFAULT_AGENT:
        from skilltest.agents import agent as agent_named

        turn_agent = cast("TurnAgent", agent_named(options.agent))
    rules = {suite.path: suite.replay for suite in suites}
    chosen = cli_backend(
        options, suites, observer, tape, rules, layer="triggers", agent=options.agent
    )
    binary = chosen.binary
    runner: ClaudeCliRunner | AgentCliRunner
    if turn_agent is not None:
        observer.notice(f"skilltest: note: {turn_agent.commands_note}")
        assert isinstance(binary, AgentBinary)
        runner = AgentCliRunner(turn_agent, binary, chosen.endpoint)
    else:
        assert isinstance(binary, ClaudeBinary)  # Claude Code's runs stop at its hook
        runner = ClaudeCliRunner(binary, chosen.endpoint)
    claude = turn_agent is None
    provenance = start_provenance(
        options,
        entry="skilltest.triggers.run",
        backend=chosen.backend,
        suites=paths,
        claude_version=binary.version if claude else None,
        agent=(options.agent, binary.version),
        trees=source_trees(
            skill.directory for suite in suites for skill in (suite.skill, *suite.distractors)
        ),
    )
    models: set[str] = set()
    recorded: set[str] = set()  # what the replayed cassettes were recorded against
    answered: list[AnsweredBy | None] = []
    recorder = getattr(chosen.endpoint, "recorder", None)
    base = TriggerResults(
        suites=(),
        context={
            "backend": chosen.backend,
            "claude_version": binary.version if claude else None,
            "claude_path": str(binary.path) if claude else None,
            "agent": {"name": options.agent, "version": binary.version},
            "suite_files": [str(p) for p in paths],
            "jobs": options.jobs,
        },
        against=options.against,
        revisions=revision_arms(against_refs(options.against, options.also_against)),
        tape=tape,
        shard=shard,
        allow_inconclusive=options.allow_inconclusive,
    )
    finished: dict[tuple[int, int, int], QueryResult] = {}
    budget = budget_of(options)

    def save(*, complete: bool, interrupted: bool = False) -> TriggerResults:
        results = assemble(suites, variants, finished)
        if base.revisions:
            results = [
                [
                    against_revisions(
                        now,
                        [
                            (arm, ref, previous)
                            for (arm, ref), previous in zip(base.revisions, before, strict=True)
                        ],
                    ),
                    *before,
                ]
                for now, *before in results
            ]
        return save_results(
            base,
            options.outputs,
            complete=complete,
            interrupted=interrupted,
            budget=budget,
            recorder=recorder,
            suites=tuple(tuple(each) for each in results),
            finished_queries=len(finished),
            provenance=finish_provenance(
                provenance.with_models(models).with_recorded(recorded).with_answered(answered)
            ),
        )

    def on_result(s: int, v: int, q: int, result: QueryResult) -> None:
        finished[s, v, q] = result
        save(complete=False)

    def on_run(run: TriggerRun, transcript: Transcript) -> None:
        models.update(transcript.api_models)
        answered.append(transcript.answered_by)
        if transcript.recorded_with:
            recorded.add(transcript.recorded_with)
        observer.run_finished(error=run.ended == "error")

    save(complete=False)  # an unwritable results file fails now, before any run
    plan = repetition_plan(options)
    observer.started(sum(len(s.queries) * plan(s).most for s in suites) * len(variants))
    runs = run_triggers(
        suites,
        runner,
        variants=variants,
        jobs=options.jobs,
        output_dir=options.output_dir,
        plan=plan,
        on_result=on_result,
        on_run=on_run,
        provenance=provenance,
        budget=budget,
        agent=turn_agent,
    )
    return run_saving(runs, observer=observer, save=save, recorder=recorder)
