"""Traces of trigger runs: did the skill fire on this query, and what did the model do first.

A trigger run is a with-skill scenario run of one query, stopped as soon as it is known whether
the skill fired. Its trace is written beside the kept transcript like a scenario run's: the
header names the layer (``triggers``), the suite, the query and whether it should trigger, the
description it ran with (and its checksum, so two runs can be told apart by description without
repeating it), the variant (``current``, ``candidate`` or ``previous``) and the repetition; the
events are the transcript's; the outcome says how the run ended (``fired``, ``not-fired``,
``budget``, ``timeout``, ``error``), what ended it, the first tool calls, tokens and cost.
"""

from __future__ import annotations

from pathlib import Path

from skilltest.report.provenance import Provenance
from skilltest.scenarios.runner import RunOutcome
from skilltest.trace.record import (
    build_trace,
    origin_header,
    text_checksum,
    trace_path,
    write_trace,
)
from skilltest.triggers.suite import TriggerQuery, TriggerSuite
from skilltest.triggers.verdict import TriggerRun


def write_trigger_trace(
    suite: TriggerSuite,
    query: TriggerQuery,
    *,
    description: str | None,
    variant: str,
    run: TriggerRun,
    outcome: RunOutcome,
    backend: str | None = None,
    provenance: Provenance | None = None,
) -> Path | None:
    """Writes the run's trace beside its kept transcript; ``None`` when none was kept.
    ``backend`` and ``provenance`` say what produced the run."""
    if outcome.transcript_path is None:
        return None
    origin = origin_header(
        outcome.transcript,
        backend=backend or outcome.transcript.source,
        provenance=provenance,
        suite=suite.path,
        place=("triggers", suite.skill.name, variant, query.id, run.rep),
    )
    lines = build_trace(
        header={
            "layer": "triggers",
            "suite": suite.path.stem,
            "suite_path": str(suite.path),
            "query": query.id,
            "should_trigger": query.should_trigger,
            "skill": suite.skill.name,
            "variant": variant,
            "description": description,
            "description_checksum": text_checksum(description),
            "rep": run.rep,
            "transcript": str(outcome.transcript_path),
        },
        transcript=outcome.transcript,
        transcript_path=outcome.transcript_path,
        prompts=(query.query,),
        world=None,
        origin=origin,
        outcome={"duration_s": round(run.duration_s, 3), "requests": run.requests},
    )
    # The run's ending is the trigger watch's, not the CLI's (which the outcome keeps too).
    lines[-1] = {
        **lines[-1],
        "cli_ended": lines[-1].get("ended"),
        "ended": run.ended,
        "reason": run.reason,
        "first_tool_calls": [{"name": c.name, "input": dict(c.input)} for c in run.first_calls],
        "warnings": list(run.warnings),
    }
    return write_trace(trace_path(outcome.transcript_path), lines, outcome.redact)
