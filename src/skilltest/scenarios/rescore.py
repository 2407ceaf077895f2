"""Scoring the transcripts an output folder keeps against the scenario suites as they are now,
without running anything (``skilltest scenarios --rescore DIR``).

A scenario run keeps its stream-json output and, beside it, its trace
(:mod:`skilltest.flow.rescore`). Each kept run is matched to a scenario of the suites by the
skill, scenario id, arm and repetition its trace records; its transcript is parsed again and
scored with the scenario's rubric as the suite now gives it (patterns, tools, ordering,
weights), and the scenario is judged with today's thresholds. No ``claude`` is started, no
emulator, no model is asked.

What a run's own process decided stays as it was: why it was unscored (the API failing, a time
limit, a stale cassette), how it was cut short, what the CLI loaded, the controlled world's
outcome (its calls are the run's; the world is not judged again), a mock's abort. Checks that
read the transcript (``final_answer``, ``trace_matches``, ``tool_used``, ``tool_order``) are
evaluated again; checks that need what an output folder does not keep (the run's workspace:
``file_exists``, ``file_matches``, ``files_match``, ``command``; a model: ``judge``; the calls
to its mocks: ``mock_calls_match``) cannot be, and say so: the run is then unscored with that
reason, never scored on a guess.

A scenario the folder keeps no run of is reported unscored, with the command that runs it; a
kept run whose scenario is no longer in the suites is named and skipped.
"""

from __future__ import annotations

import asyncio
import fnmatch
from dataclasses import replace
from pathlib import Path

from skilltest.checks.model import Check, CheckResult
from skilltest.claude.isolation import init_event, loaded
from skilltest.errors import InputError
from skilltest.flow.options import Observer
from skilltest.flow.plan import repetition_plan
from skilltest.flow.provenance import finish_provenance, start_provenance
from skilltest.flow.rescore import KeptRun, kept_runs, rescore_provenance, rescored_from
from skilltest.flow.results import save_results
from skilltest.scenarios.layer import ScenarioOptions, ScenarioResults, load_suites
from skilltest.scenarios.outcome import Arm, RunRecord
from skilltest.scenarios.report import RunContext, scenario_about
from skilltest.scenarios.runner import RunOutcome, RunRequest
from skilltest.scenarios.runs import Planned, judge_planned, plan, score_outcome
from skilltest.scenarios.verdict import ScenarioVerdict
from skilltest.transcript import AnsweredBy
from skilltest.transcript.stream_json import parse_stream_json, stream_events

TRANSCRIPT_KINDS = frozenset({"final_answer", "trace_matches", "tool_used", "tool_order"})
"""Checks that read only the run's transcript: evaluated again on the kept one."""

NOT_KEPT = {
    "file_exists": "it reads the run's workspace, which an output folder does not keep",
    "file_matches": "it reads the run's workspace, which an output folder does not keep",
    "files_match": "it reads the files the run changed, which an output folder does not keep",
    "command": "it runs a command in the run's workspace, which an output folder does not keep",
    "judge": "it asks a model, and a rescore asks none",
    "mock_calls_match": "it reads the calls the run made to its mocks, which an output folder "
    "does not keep",
}
"""Why each kind of check that needs more than the transcript cannot be rescored."""

KEPT_KINDS = frozenset({"mock_abort"})
"""Results the run's own process decided (a mock aborting the run), kept as the run had them."""

REFUSED_OPTIONS = (
    ("against", "--against"),
    ("record", "--record"),
    ("replay", "--replay"),
    ("record_missing", "--record-missing"),
)
"""Options that need runs, which a rescore does not make."""


def check_rescore_options(options: object, layer: str) -> None:
    """Refuses the options that make no sense without runs.

    Raises:
        InputError: ``--against``, ``--record``, ``--replay`` or ``--record-missing`` with
            ``--rescore``.
    """
    for name, flag in REFUSED_OPTIONS:
        if getattr(options, name, None):
            raise InputError(
                f"{flag} needs runs, and --rescore runs nothing: it scores the transcripts "
                "an output folder keeps",
                location=flag,
                fix=f"drop {flag} to rescore, or drop --rescore to run skilltest {layer}",
            )


def rescore(
    options: ScenarioOptions, directory: Path, *, observer: Observer | None = None
) -> ScenarioResults:
    """Scores the runs kept under ``directory`` against the suites ``options`` name, as they
    are now, and writes the outputs ``options.outputs`` asks for; nothing is run.

    Raises:
        InputError: bad input (a suite, an option that needs runs), or ``directory`` keeps no
            run of the scenario layer (missing, or an older layout without traces).
    """
    observer = observer or Observer()
    check_rescore_options(options, "scenarios")
    paths, suites, shard = load_suites(options)
    kept = kept_runs(directory, layer="scenarios")
    planned = plan(suites, repetition_plan(options))
    by_place: dict[tuple[str, str, str], dict[int, KeptRun]] = {}
    for run in kept:
        place = (str(run.header["skill"]), str(run.header["scenario"]), str(run.header["arm"]))
        rep = run.header["rep"]
        by_place.setdefault(place, {})[int(rep) if isinstance(rep, int) else 0] = run
    known = {(p.scenario.label, p.scenario.id) for p in planned}
    skipped = [
        run
        for run in kept
        if (str(run.header["skill"]), str(run.header["scenario"])) not in known
        and _named(str(run.header["scenario"]), options)
    ]
    for run in skipped:
        observer.notice(
            f"skilltest: {run.trace}: scenario {run.header['skill']}/{run.header['scenario']} "
            "is not in the suites given; its kept run is skipped"
        )
    used: list[KeptRun] = []
    verdicts: list[ScenarioVerdict] = []
    observer.started(sum(p.run_count for p in planned))
    for entry in planned:
        scenario = entry.scenario
        records: list[RunRecord] = []
        for arm in () if scenario.skip else entry.arms:
            reps = by_place.get((scenario.label, scenario.id, arm.value), {})
            if not reps:
                records.append(_not_kept(entry, arm, directory))
                observer.run_finished(error=True)
            for rep in sorted(reps):
                used.append(reps[rep])
                record = rescore_run(entry, arm, rep, reps[rep])
                records.append(record)
                observer.run_finished(error=not record.scored)
        verdicts.append(judge_planned(entry, records))
    observer.stopped()
    origin = rescored_from(directory, used, paths)
    origin["skipped"] = [str(run.trace) for run in skipped]
    provenance = start_provenance(
        options, entry="skilltest.scenarios.rescore", backend="rescore", suites=paths
    )
    provenance = finish_provenance(rescore_provenance(provenance, origin))
    base = ScenarioResults(
        verdicts=(),
        context=RunContext(
            backend=provenance.backend or "not recorded",
            claude_version=provenance.claude_version,
            claude_path=None,
            suites=tuple(str(p) for p in paths),
            jobs=options.jobs,
            skill_only=options.skill_only,
        ),
        planned=len(planned),
        canaries=frozenset((p.scenario.label, p.scenario.id) for p in planned if p.scenario.canary),
        allow_inconclusive=options.allow_inconclusive,
        output_dir=directory,
        shard=shard,
        about={(p.scenario.label, p.scenario.id): scenario_about(p.scenario) for p in planned},
    )
    return save_results(
        base,
        options.outputs,
        complete=True,
        interrupted=False,
        budget=None,
        recorder=None,
        verdicts=tuple(verdicts),
        provenance=provenance,
    )


def _named(scenario_id: str, options: ScenarioOptions) -> bool:
    """Whether a kept run's scenario is one the user asked for (``--only``, ``--shard`` leave
    the others out without a word)."""
    if options.shard is not None:
        return False
    return not options.only or any(fnmatch.fnmatchcase(scenario_id, g) for g in options.only)


def _not_kept(entry: Planned, arm: Arm, directory: Path) -> RunRecord:
    scenario = entry.scenario
    return RunRecord(
        scenario_id=scenario.id,
        skill=scenario.label,
        arm=arm,
        rep=0,
        score=None,
        error=f"not rescored: {directory} keeps no {arm.label} run of this scenario; run it "
        f"(skilltest scenarios {entry.suite.path} --only {scenario.id})",
    )


def rescore_run(entry: Planned, arm: Arm, rep: int, run: KeptRun) -> RunRecord:
    """One kept run, scored again with its scenario as the suite now gives it."""
    scenario = entry.scenario
    stdout = run.stdout
    stderr_path = run.stderr_path
    stderr = stderr_path.read_text(encoding="utf-8", errors="replace") if stderr_path else None
    kept = run.outcome
    transcript = parse_stream_json(
        stdout, stderr=stderr, source=run.text("backend") or "claude-cli", prompt=scenario.prompt
    )
    # Why the run was unscored or cut short is its process's: a time limit, an outage, a stale
    # cassette, a stop. The trace keeps it as the run decided it.
    transcript = replace(
        transcript,
        error=kept.get("error") if isinstance(kept.get("error"), str) else None,
        ended=kept.get("ended") if isinstance(kept.get("ended"), str) else None,
        hung=kept.get("hung") if isinstance(kept.get("hung"), str) else None,
        recorded_with=run.text("recorded_with"),
        answered_by=AnsweredBy.from_dict(run.header.get("answered_by")),
    )
    request = RunRequest(scenario, arm, rep, suite_path=entry.suite.path)
    duration = kept.get("duration_s")
    outcome = RunOutcome(
        transcript,
        transcript_path=run.transcript,
        stderr_path=stderr_path,
        duration_s=float(duration) if isinstance(duration, int | float) else 0.0,
        warnings=tuple(str(w) for w in kept.get("warnings") or ()),
        loaded=loaded(init_event(stdout.splitlines())),
        checks=() if transcript.error is not None else _checks(entry, arm, run, stdout),
    )
    record = score_outcome(request, outcome)
    world = kept.get("world")
    return replace(
        record, world=dict(world) if isinstance(world, dict) else None, trace=str(run.trace)
    )


def _checks(entry: Planned, arm: Arm, run: KeptRun, stdout: str) -> tuple[CheckResult, ...]:
    """The scenario's checks on the kept run: those that read the transcript evaluated again,
    the others unscored with why, and a mock's abort as the run had it."""
    from skilltest.checks.evaluate import RunView, evaluate

    scenario = entry.scenario
    expected = scenario.expected
    kept = tuple(
        CheckResult(
            name=str(c.get("name")),
            kind=str(c.get("kind")),
            passed=bool(c.get("passed")),
            evidence=str(c.get("evidence") or ""),
            veto=bool(c.get("veto")),
            weight=float(c.get("weight") or 1.0),
        )
        for c in run.outcome.get("checks") or ()
        if isinstance(c, dict) and c.get("kind") in KEPT_KINDS
    )
    if not expected.checks:
        return kept
    # As the runner decides it: an arm without the skill gets `arm: with` checks only when
    # nothing else scores the scenario.
    with_skill = arm != Arm.WITHOUT_SKILL or (
        not expected.defined and all(check.arm == "with" for check in expected.checks)
    )
    applying = [check for check in expected.checks if check.arm != "with" or with_skill]
    again = [check for check in applying if check.kind in TRANSCRIPT_KINDS]
    evaluated: dict[int, CheckResult] = {}
    if again:
        view = RunView(
            workdir=run.transcript.parent,
            transcript=parse_stream_json(stdout, prompt=scenario.prompt),
            events=tuple(stream_events(stdout)),
        )
        results = asyncio.run(evaluate(again, view, with_skill=with_skill))
        evaluated = {id(check): result for check, result in zip(again, results, strict=True)}
    return kept + tuple(evaluated.get(id(check)) or _cannot(check, entry) for check in applying)


def _cannot(check: Check, entry: Planned) -> CheckResult:
    why = NOT_KEPT.get(check.kind, "it needs more than the run's transcript")
    return CheckResult(
        name=check.name,
        kind=check.kind,
        passed=False,
        evidence="",
        veto=check.veto,
        weight=check.weight,
        error=f"cannot be rescored: {why}; run the scenario again "
        f"(skilltest scenarios {entry.suite.path} --only {entry.scenario.id})",
        scored=check.scored,
    )


def rescored_summary(results: ScenarioResults) -> str:
    """The line a rescore prints first: where the transcripts came from, and that nothing ran."""
    from skilltest.report.provenance import rescored_text

    origin = results.provenance.rescored_from if results.provenance is not None else None
    runs = sum(len(v.runs) for v in results.verdicts)
    return (
        f"rescored {runs} run(s) of {len(results.verdicts)} scenario(s) from "
        f"{rescored_text(origin or {})}: no claude started, no model asked"
    )
