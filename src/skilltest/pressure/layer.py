"""The pressure layer's entry point: :func:`run` takes :class:`PressureOptions` and returns
:class:`PressureResults`.

The flow: load and select the suites, read the skill at ``against`` when asked, choose the
backend (live, emulator, or cassettes), open the runners (through a recording proxy while
recording), run every scenario's arms K times (or adaptively), and write the outputs as
scenarios finish; an interrupted run writes what had finished, marked so, and re-raises.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from skilltest.errors import InputError
from skilltest.flow.options import ComparedOptions, Observer, budget_of
from skilltest.flow.plan import (
    load_all,
    repetition_plan,
    select,
    take_shard,
)
from skilltest.flow.provenance import finish_provenance, source_trees, start_provenance
from skilltest.flow.results import Recorder, RunResults, run_saving, save_results
from skilltest.flow.tape import Tape, tape_of
from skilltest.pressure.suite import Overrides, PressureSuite, load_pressure_suite
from skilltest.repetitions import PRESSURE_MAX_K
from skilltest.report.outputs import Journal
from skilltest.revision import against_refs, previous_revisions, revision_arms
from skilltest.suite.ids import check_unique_scenarios

if TYPE_CHECKING:
    from skilltest.cost.render import SuiteEstimate
    from skilltest.flow.shard import ShardPlan
    from skilltest.pressure.batch import PressureBatches, ResumeFile
    from skilltest.pressure.verdict import ScenarioResult
    from skilltest.report.junit import JUnitCase
    from skilltest.runners.base import TurnRunner
    from skilltest.runners.replay import ReplayTurnRunner
    from skilltest.skills import Skill

DEFAULT_SUITE_DIR = Path("tests/skill-pressure")
"""Where the suites are when none is named."""


@dataclass(frozen=True, kw_only=True)
class PressureOptions(ComparedOptions):
    """What a pressure run takes besides the options every layer takes."""

    threshold: float | None = None
    """The with-skill pass rate a scenario needs to steer (default: the suite's, else 0.8)."""
    max_k: int = PRESSURE_MAX_K
    """``repeat="auto"``: the most runs per arm (20: a pass rate credibly near a threshold of
    0.8 takes a dozen one-turn runs)."""
    max_tokens: int | None = None
    """The longest answer (default 1024)."""
    temperature: float | None = None
    """The sampling temperature (default: the API's)."""
    timeout_s: float | None = None
    """Seconds one request may take (default 120; the claude backend: one run, 300)."""
    max_retries: int | None = None
    """Retries of a request that failed with 429, 529, 5xx or a time-out (default 4)."""
    strict: bool = False
    """``not-red`` scenarios (the baseline already passes) fail the run too."""
    batch: bool = False
    """Send the runs through the Message Batches API (half the price, answered within 24
    hours): a batch per round, polled until it has ended."""
    resume_batch: Path | None = None
    """Resume the batches this file holds (written by an earlier ``batch`` run) instead of
    submitting them again; implies ``batch``."""
    poll_interval_s: float | None = None
    """Seconds between polls of a batch (default 15; on the emulator 0.1)."""


@dataclass(frozen=True)
class PressureResults(RunResults):
    """A pressure run's results, finished or not."""

    scenarios: tuple[ScenarioResult, ...]
    """Each scenario's verdict and runs, in suite order."""
    backend: str
    """``anthropic``, ``claude``, ``emulator`` or ``replay``."""
    model: str
    """The model asked for."""
    suites: tuple[str, ...]
    """The suite files."""
    skill_only: bool = False
    """Only the with-skill arm ran."""
    strict: bool = False
    """``not-red`` fails."""
    allow_inconclusive: bool = False
    """``inconclusive`` does not fail."""
    misses: tuple[str, ...] = ()
    """Requests the cassettes did not hold (replay), each explained."""
    batch: dict[str, Any] | None = None
    """With ``batch``: the batches (ids, rounds, the resume file), how their requests ended,
    their tokens and the price they are billed at; ``None`` for direct runs."""

    junit_name: ClassVar[str] = "skilltest pressure"

    @property
    def bad_input(self) -> str | None:
        """The first pattern that could not be matched in time (the suite must change)."""
        return next(
            (run.error for result in self.scenarios for run in result.runs if run.pattern_error),
            None,
        )

    @property
    def failed(self) -> bool:
        """A scenario failed: a failing verdict, ``not-red`` with ``strict``, or ``inconclusive``
        without ``allow_inconclusive``."""
        from skilltest.pressure.verdict import INCONCLUSIVE, NOT_RED

        return any(
            r.failed
            or (self.strict and r.verdict == NOT_RED)
            or (r.verdict == INCONCLUSIVE and not self.allow_inconclusive)
            for r in self.scenarios
        )

    def to_document(self) -> dict[str, Any]:
        """The results file."""
        from skilltest.pressure.report import results_document

        document = results_document(
            self.scenarios,
            backend=self.backend,
            model=self.model,
            skill_only=self.skill_only,
            complete=self.complete,
            interrupted=self.interrupted,
            suites=self.suites,
            provenance=self.provenance,
            strict=self.strict,
        )
        document["replay"] = self.tape.to_dict(misses=self.misses)
        document["batch"] = self.batch
        document["shard"] = None if self.shard is None else self.shard.to_dict()
        document["stopped"] = None if self.stopped is None else dict(self.stopped)
        return document

    def junit_cases(self) -> list[JUnitCase]:
        """One JUnit case per scenario."""
        from skilltest.pressure.report import junit_cases

        return junit_cases(
            self.scenarios, strict=self.strict, allow_inconclusive=self.allow_inconclusive
        )


def load_suites(
    options: PressureOptions,
) -> tuple[list[Path], list[PressureSuite], ShardPlan | None]:
    """The suite files and the suites, loaded, validated and narrowed to ``only`` and to this
    shard's share, with the plan of the shard (``None`` without ``shard``).

    Raises:
        InputError: a suite, a skill, a pattern or a name that is not valid.
    """
    overrides = Overrides(
        model=options.model,
        threshold=options.threshold,
        max_tokens=options.max_tokens,
        temperature=options.temperature,
        plugin_dir=options.plugin_dir,
        plugin_name=options.plugin,
    )
    paths, suites = load_all(
        options.suites,
        DEFAULT_SUITE_DIR,
        example="tests/skill-pressure/<skill>.yaml",
        load=lambda path: load_pressure_suite(
            path, skills_dir=options.skills_dir, overrides=overrides, skill_name=options.skill
        ),
    )
    suites = select(suites, options.only)
    check_unique_scenarios(
        [(suite.skill.name, s.id, s.location) for suite in suites for s in suite.scenarios]
    )
    suites, shard = take_shard(
        options, suites, layer="pressure", skill_of=lambda suite, _: suite.skill.name
    )
    return paths, suites, shard


def run(
    options: PressureOptions | None = None, *, observer: Observer | None = None
) -> PressureResults:
    """Runs pressure suites: each scenario's prompt with the skill as the system prompt and
    without it, K times each, judged by the suite's patterns.

    Args:
        options: What to run and how (default: every suite under ``tests/skill-pressure/``).
        observer: Sees notices and each finished run (default: nothing is shown).

    Returns:
        The results; the outputs ``options.outputs`` asks for are written.

    Raises:
        InputError: bad input (a suite, an option, a cassette folder), before any model call.
        ConfigurationError: a live backend without credentials, no usable ``claude``.
        KeyboardInterrupt: the run was interrupted; what had finished is written, marked so.
    """
    options = options or PressureOptions()
    paths, suites, shard = load_suites(options)
    tape = tape_of(options, layer="pressure")
    refs = against_refs(options.against, options.also_against)
    with previous_revisions(refs, (suite.skill for suite in suites)) as previous:
        return _PressureRun(
            options, observer or Observer(), paths, suites, tape, previous, shard=shard
        ).go()


def estimate(options: PressureOptions | None = None) -> list[SuiteEstimate]:
    """What a run with these options would make and cost, per suite, without calling anything
    (``--dry-run``; see :mod:`skilltest.cost.estimate` for what it assumes).

    Raises:
        InputError: bad input (a suite, an option), as :func:`run` would raise it.
    """
    from skilltest.pressure.estimates import estimate_suites
    from skilltest.runners.base import DEFAULT_MODEL

    options = options or PressureOptions()
    _, suites, _ = load_suites(options)
    arms = (1 if options.skill_only else 2) + len(
        against_refs(options.against, options.also_against)
    )
    return estimate_suites(
        suites, repetition_plan(options), arms=arms, default_model=options.model or DEFAULT_MODEL
    )


class _PressureRun:
    """One run of :func:`run`: its backend, runners, recording and results so far."""

    def __init__(
        self,
        options: PressureOptions,
        observer: Observer,
        paths: Sequence[Path],
        suites: list[PressureSuite],
        tape: Tape,
        previous: dict[str, dict[Path, Skill]],
        *,
        shard: ShardPlan | None = None,
    ) -> None:
        from skilltest.pressure.batch import emulator_folder
        from skilltest.pressure.runs import SuiteProgress
        from skilltest.runners.backends import (
            PRESSURE_EMULATOR_NOTICE,
            BackendChoice,
            TurnRunnerPool,
            choose_backend,
        )
        from skilltest.runners.base import DEFAULT_MODEL

        self.options, self.observer, self.suites, self.tape = options, observer, suites, tape
        self.previous = previous
        self.paths = tuple(str(p) for p in paths)
        if tape.replay_only:
            # Answers come from the cassettes only: no credentials, no model script, no upstream.
            self.backend = BackendChoice("replay")
        else:
            self.backend = choose_backend(
                options.backend, live="anthropic", emulator_notice=PRESSURE_EMULATOR_NOTICE
            )
            if tape.recording and self.backend.name == "claude":
                raise InputError(
                    "pressure runs record and replay through the SDK backends only",
                    location="--backend claude",
                    fix="record with --backend anthropic (live) or the emulator",
                )
        # The SDK runners' module is imported while the run gets ready, off the event loop.
        self.needs_sdk = self.backend.name in ("anthropic", "emulator")
        if self.needs_sdk:
            from skilltest.runners.sdk import start_import

            start_import()
        self.model = options.model or DEFAULT_MODEL
        self.provenance = start_provenance(
            options,
            entry="skilltest.pressure.run",
            backend=self.backend.name,
            suites=paths,
            model=self.model,
            trees=source_trees(suite.skill.directory for suite in self.suites),
        )
        self.resume: ResumeFile | None = None
        if options.batch or options.resume_batch is not None:
            from skilltest.pressure.batch import open_resume_file

            self.resume = open_resume_file(
                _check_batch(options, tape, self.backend.name),
                resume=options.resume_batch is not None,
                backend=self.backend.name,
                command=self.provenance.command,
            )
        if self.backend.notice:
            observer.notice(self.backend.notice)
        self.state = SuiteProgress()
        # Replay is imported only when asked for: a plain run pays nothing for it.
        self.recording = None
        if tape.recording and tape.directory is not None:
            from skilltest.pressure.replay import PressureRecording

            self.recording = PressureRecording(
                tape.directory, suites, model=self.model, backend=self.backend.name
            )
        self.cassettes = None
        if tape.replaying:
            from skilltest.pressure.replay import PressureCassettes

            self.cassettes = PressureCassettes(suites)
        self.replayers: dict[Path, ReplayTurnRunner] = {}
        self.live: dict[Path, TurnRunner] = {}
        self.pool = TurnRunnerPool(
            self.backend,
            script=options.script,
            claude=options.claude,
            timeout_s=options.timeout_s,
            max_retries=options.max_retries,
            via=self.recording.via if self.recording is not None else None,
            batch_dir=(
                emulator_folder(self.resume.path)
                if self.resume is not None and self.backend.name == "emulator"
                else None
            ),
        )
        if self.backend.name != "replay":
            self.pool.check(suites)
        self.batches: PressureBatches | None = None
        if self.resume is not None:
            from skilltest.pressure.batch import PressureBatches
            from skilltest.pressure.runs import most_repetitions

            self.batches = PressureBatches(
                self.pool,
                self.resume,
                observer=observer,
                most=most_repetitions(
                    suites,
                    options.skill_only,
                    repetition_plan(options),
                    against=len(against_refs(options.against, options.also_against)),
                ),
                poll_s=options.poll_interval_s,
                recording=self.recording,
            )
        self.journal = Journal(options.outputs)
        self.shard = shard
        self.budget = budget_of(options)

    @property
    def recorder(self) -> Recorder | None:
        """The recorder of the cassettes this run writes (``None``: nothing is recorded)."""
        return self.recording.recorder if self.recording is not None else None

    def results(self) -> PressureResults:
        """What has finished so far, as the results of a whole run (:meth:`save` says whether
        it was complete)."""
        order = {
            (suite.skill.name, scenario.id): index
            for index, (suite, scenario) in enumerate(
                (suite, scenario) for suite in self.suites for scenario in suite.scenarios
            )
        }
        finished = sorted(
            self.state.results, key=lambda r: order.get((r.skill, r.scenario.id), len(order))
        )
        transcripts = [run.transcript for result in finished for run in result.runs]
        provenance = finish_provenance(
            self.provenance.with_models(model for t in transcripts for model in t.api_models)
            .with_recorded(t.recorded_with for t in transcripts if t.recorded_with)
            .with_answered(t.answered_by for t in transcripts)
        )
        cli = next((t.cli_version for t in transcripts if t.cli_version), None)
        if cli is not None:  # --backend claude: the CLI's version, as its runs reported it
            provenance = dataclasses.replace(provenance, claude_version=cli)
        return PressureResults(
            scenarios=tuple(finished),
            backend=self.backend.name,
            model=self.model,
            suites=self.paths,
            skill_only=self.options.skill_only,
            strict=self.options.strict,
            allow_inconclusive=self.options.allow_inconclusive,
            tape=self.tape,
            misses=tuple(m.message for r in self.replayers.values() for m in r.misses),
            provenance=provenance,
            batch=self.batches.to_dict() if self.batches is not None else None,
            shard=self.shard,
        )

    def save(self, *, complete: bool, interrupted: bool = False) -> PressureResults:
        """Writes the whole results file (at the start, ``complete=False``; at the end)."""
        return save_results(
            self.results(),
            self.options.outputs,
            complete=complete,
            interrupted=interrupted,
            budget=self.budget,
            recorder=self.recorder,
            journal=self.journal,
        )

    def live_runner(self, suite: PressureSuite) -> TurnRunner:
        """The backend's runner; while recording, each of its runs is written as it ends."""
        if suite.path not in self.live:
            runner = self.pool.runner_for(suite)
            if self.recording is not None:
                runner = self.recording.runner(runner)
            self.live[suite.path] = runner
        return self.live[suite.path]

    def runner_for(self, suite: PressureSuite) -> TurnRunner:
        if not self.tape.replaying:
            return self.live_runner(suite)
        if suite.path not in self.replayers:
            from skilltest.runners.replay import ReplayTurnRunner

            assert self.tape.directory is not None and self.cassettes is not None
            self.replayers[suite.path] = ReplayTurnRunner(
                self.tape.directory,
                key_of=self.cassettes.key_of,
                rules_of=self.cassettes.rules_of,
                fallback=self.live_runner(suite) if self.tape.record_missing else None,
                max_retries=self.pool.limits.get("max_retries", 4),
            )
        return self.replayers[suite.path]

    def go(self) -> PressureResults:
        from skilltest.pressure.runs import (
            SuiteRunSettings,
            run_suites,
            run_suites_in_rounds,
            total_runs,
        )

        options = self.options
        plan = repetition_plan(options)
        self.journal.start()
        self.save(complete=False)  # an unwritable results file fails now, before any model call
        if self.batches is not None:
            self.batches.resume.save()  # and so does an unwritable resume file
        self.observer.started(
            total_runs(
                self.suites,
                options.skill_only,
                plan,
                against=len(against_refs(options.against, options.also_against)),
            )
        )

        def finished(result: ScenarioResult) -> None:
            # This scenario's line, and nothing of those before it: the whole file is written
            # once, at the end (or when the run is interrupted).
            from skilltest.pressure.report import scenario_document

            self.journal.append(
                scenario_document(result, provenance=self.provenance, strict=options.strict)
            )

        traces = options.output_dir

        async def run_all() -> None:
            settings = SuiteRunSettings(
                skill_only=options.skill_only,
                default_model=self.model,
                observer=self.observer,
                state=self.state,
                on_result=finished,
                plan=plan,
                revisions=revision_arms(against_refs(options.against, options.also_against)),
                previous=lambda suite, arm: self.previous[arm][suite.skill.skill_file],
                trace_dir=None if traces is None else lambda suite: traces / suite.skill.name,
                provenance=self.provenance,
                budget=self.budget,
            )
            try:
                if self.needs_sdk:
                    from skilltest.runners.sdk import sdk_imported

                    await sdk_imported()
                if self.batches is not None:
                    from skilltest.runners.batch import PRICE_FACTOR

                    await run_suites_in_rounds(
                        self.suites,
                        self.batches.answer,
                        settings=settings,
                        price_factor=PRICE_FACTOR,
                    )
                    if self.budget is None or self.budget.stopped() is None:
                        self.batches.finish()
                else:
                    await run_suites(
                        self.suites, self.runner_for, jobs=options.jobs, settings=settings
                    )
            finally:
                for replayer in self.replayers.values():
                    await replayer.aclose()
                await self.pool.aclose()
                if self.recording is not None:
                    self.recording.close()

        return run_saving(run_all(), observer=self.observer, save=self.save, recorder=self.recorder)


def _check_batch(options: PressureOptions, tape: Tape, backend: str) -> Path:
    """The resume file of a ``batch`` run, once the options allow one.

    Raises:
        InputError: ``batch`` with a replay (it sends nothing) or with a backend that has no
            Message Batches (the claude CLI).
    """
    from skilltest.pressure.batch import default_resume_file

    flag = "--resume-batch" if options.resume_batch is not None else "--batch"
    if tape.replaying:
        raise InputError(
            "a replay answers from the cassettes and sends no request to batch",
            location=f"{flag} with --replay",
            fix="drop --batch to replay; record with --batch --record DIR",
        )
    if backend not in ("anthropic", "emulator"):
        raise InputError(
            f"--backend {backend} runs each turn through the claude CLI, which has no Message "
            "Batches",
            location=flag,
            fix="use --backend anthropic (live, with ANTHROPIC_API_KEY) or the emulator with "
            "--batch, or drop --batch",
        )
    return options.resume_batch or default_resume_file(options.outputs.results, options.output_dir)
