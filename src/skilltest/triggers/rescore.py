"""Judging the trigger runs an output folder keeps against the trigger suites as they are now,
without running anything (``skilltest triggers --rescore DIR``).

Each kept run of the current description is matched to a query by the skill, query id and
repetition its trace records; its stream is read again by the trigger watch (the suite's skill
and ``max_tool_calls`` now) and the query judged with today's ``should_trigger`` and
``threshold``, its interval read under the plan ``-k`` (or the suite) gives, as a run reads it.
A run made with another description than the skill's (or the suite's) now says nothing about
it: it ends ``error`` with why. A query with no kept run is an ``error`` run that says so; a
kept run whose query is gone is named and skipped. Runs of ``--compare-description``'s
candidate and of ``--against``'s previous revision are not rescored.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from skilltest.flow.options import Observer
from skilltest.flow.plan import repetition_plan
from skilltest.flow.provenance import finish_provenance, start_provenance
from skilltest.flow.rescore import KeptRun, kept_runs, rescore_provenance, rescored_from
from skilltest.flow.results import save_results
from skilltest.scenarios.rescore import check_rescore_options
from skilltest.scenarios.runner import RunOutcome
from skilltest.trace.record import text_checksum
from skilltest.transcript import AnsweredBy
from skilltest.transcript.stream_json import parse_stream_json, stream_events
from skilltest.triggers.layer import TriggerOptions, TriggerResults, load_suites
from skilltest.triggers.runs import CURRENT, assemble, query_result, trigger_run
from skilltest.triggers.suite import TriggerQuery, TriggerSuite
from skilltest.triggers.verdict import QueryResult, TriggerRun
from skilltest.triggers.watch import TriggerWatch


def rescore(
    options: TriggerOptions, directory: Path, *, observer: Observer | None = None
) -> TriggerResults:
    """Judges the trigger runs kept under ``directory`` against the suites ``options`` name, as
    they are now, and writes the outputs asked for; nothing is run.

    Raises:
        InputError: bad input, an option that needs runs, or ``directory`` keeps no trigger run.
    """
    observer = observer or Observer()
    check_rescore_options(options, "triggers")
    plan = repetition_plan(options)
    paths, suites, shard = load_suites(options)
    kept = kept_runs(directory, layer="triggers")
    by_place: dict[tuple[str, str], dict[int, KeptRun]] = {}
    for run in kept:
        if run.header.get("variant") != CURRENT.label:
            continue
        rep = run.header["rep"]
        place = (str(run.header["skill"]), str(run.header["query"]))
        by_place.setdefault(place, {})[int(rep) if isinstance(rep, int) else 0] = run
    known = {(s.skill.name, q.id) for s in suites for q in s.queries}
    for (skill, gone), kept_reps in by_place.items():
        if (skill, gone) not in known and not options.only and options.shard is None:
            observer.notice(
                f"skilltest: {directory}: query {skill}/{gone} is not in the suites given; its "
                f"{len(kept_reps)} kept run(s) are skipped"
            )
    used: list[KeptRun] = []
    results: dict[tuple[int, int, int], QueryResult] = {}
    for s, suite in enumerate(suites):
        description = suite.description or suite.skill.description
        for q, query in enumerate(suite.queries):
            reps = by_place.get((suite.skill.name, query.id), {})
            runs = []
            for rep in sorted(reps):
                used.append(reps[rep])
                runs.append(_rescored(suite, query, rep, reps[rep], description))
            if not runs:
                runs.append(
                    TriggerRun(
                        rep=0,
                        ended="error",
                        reason=f"not rescored: {directory} keeps no run of this query; run it "
                        f"(skilltest triggers {suite.path} --only {query.id})",
                    )
                )
            results[s, 0, q] = query_result(suite, query, runs, plan(suite))
    origin = rescored_from(directory, used, paths)
    provenance = start_provenance(
        options, entry="skilltest.triggers.rescore", backend="rescore", suites=paths
    )
    provenance = finish_provenance(rescore_provenance(provenance, origin))
    base = TriggerResults(
        suites=(),
        context={
            "backend": provenance.backend or "not recorded",
            "claude_version": provenance.claude_version,
            "claude_path": None,
            "suite_files": [str(p) for p in paths],
            "jobs": options.jobs,
        },
        shard=shard,
        allow_inconclusive=options.allow_inconclusive,
    )
    return save_results(
        base,
        options.outputs,
        complete=True,
        interrupted=False,
        budget=None,
        recorder=None,
        suites=tuple(tuple(each) for each in assemble(suites, (CURRENT,), results)),
        finished_queries=len(results),
        provenance=provenance,
    )


def _rescored(
    suite: TriggerSuite, query: TriggerQuery, rep: int, run: KeptRun, description: str | None
) -> TriggerRun:
    kept = run.outcome
    ran_with = run.text("description_checksum")
    if ran_with is not None and ran_with != text_checksum(description):
        return TriggerRun(
            rep=rep,
            ended="error",
            reason="not rescored: the run was made with another description than the skill's "
            f"now; run the query again (skilltest triggers {suite.path} --only {query.id})",
            transcript=str(run.transcript),
            trace=str(run.trace),
        )
    stdout = run.stdout
    watch = TriggerWatch(suite.skill.name, suite.max_tool_calls, hooked=True)
    for event in stream_events(stdout):
        watch(event)
    transcript = parse_stream_json(stdout, prompt=query.query)
    transcript = replace(
        transcript,
        error=kept.get("error") if isinstance(kept.get("error"), str) else None,
        ended=kept.get("cli_ended") if isinstance(kept.get("cli_ended"), str) else None,
        answered_by=AnsweredBy.from_dict(run.header.get("answered_by")),
        hung=kept.get("hung") if isinstance(kept.get("hung"), str) else None,
    )
    duration = kept.get("duration_s")
    outcome = RunOutcome(
        transcript,
        transcript_path=run.transcript,
        duration_s=float(duration) if isinstance(duration, int | float) else 0.0,
        warnings=tuple(str(w) for w in kept.get("warnings") or ()),
    )
    result = trigger_run(rep, watch, outcome)
    requests = kept.get("requests")
    return replace(
        result,
        requests=requests if isinstance(requests, int) else None,
        warnings=outcome.warnings,
        trace=str(run.trace),
    )
