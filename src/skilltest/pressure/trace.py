"""Traces of pressure runs: one request, one answer, the patterns' judgement.

A pressure run is a single model request, so its trace holds the header (versions, suite,
scenario, arm, repetition, the system prompt's checksum and the prompt), one ``user`` event, one
``model_response`` event with the answer, its usage, stop reason and latency, and an outcome
holding the judgement (patterns matched and missing, anti-patterns hit, pass), tokens and cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skilltest import __version__
from skilltest.names import child
from skilltest.pressure.suite import PressureSuite
from skilltest.pressure.verdict import PressureRun
from skilltest.report.provenance import Provenance
from skilltest.runners.base import TurnRequest
from skilltest.trace import SCHEMA_VERSION
from skilltest.trace.record import origin_header, text_checksum, tokens, write_trace


def pressure_trace_path(directory: Path, scenario_id: str, arm: str, rep: int) -> Path:
    """``<directory>/<scenario>/<arm>-<rep>.trace.jsonl``, the arm spelled with hyphens.

    ``directory`` is the skill's folder under ``--output-dir``, as scenario runs keep theirs:
    two skills may both have a scenario of the same id.
    """
    folder = child(directory, scenario_id, what="the scenario id")
    return folder / f"{arm.replace('_', '-')}-{rep}.trace.jsonl"


def build_pressure_trace(
    run: PressureRun,
    *,
    suite: str,
    skill: str,
    prompt: str,
    system: str | None,
    backend: str,
    origin: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Every line of a pressure run's trace: the header, the two events, the outcome;
    ``origin`` is what produced the run (:func:`skilltest.trace.record.origin_header`)."""
    transcript = run.transcript
    judgement = run.judgement
    usage = transcript.usage
    head = {
        "schema_version": SCHEMA_VERSION,
        "kind": "header",
        "layer": "pressure",
        "toolkit_version": __version__,
        "cli_version": transcript.cli_version,
        "model": transcript.api_models[0] if transcript.api_models else None,
        "backend": backend,
        **(origin or {}),
        "suite": suite,
        "scenario": run.scenario_id,
        "skill": skill,
        "arm": run.arm,
        "rep": run.rep,
        "system_checksum": text_checksum(system),
        "prompts": [prompt],
    }
    events: list[dict[str, Any]] = [{"type": "user", "turn": 1, "text": prompt}]
    if transcript.error is None or transcript.text:
        events.append(
            {
                "type": "model_response",
                "model": transcript.model,
                "stop_reason": transcript.stop_reason,
                "usage": usage.to_dict(),
                "latency_ms": transcript.latency_ms,
            }
        )
        events.append({"type": "assistant_text", "text": transcript.text})
    if run.error is not None:
        events.append({"type": "error", "text": run.error})
    tail = {
        "kind": "outcome",
        "score": None if judgement is None else (1.0 if judgement.passed else 0.0),
        "unscored_reason": run.error if judgement is None else None,
        "judgement": (
            None
            if judgement is None
            else {
                "passed": judgement.passed,
                "matched": list(judgement.matched),
                "missing": list(judgement.missing),
                "anti_matched": list(judgement.anti_matched),
                "expected_matched": judgement.expected_matched,
                "red": run.red,
            }
        ),
        "tokens": tokens(usage),
        "cost_usd": transcript.cost_usd,
        "latency_ms": transcript.latency_ms,
        "duration_s": None if transcript.latency_ms is None else transcript.latency_ms / 1000,
        "retries": len(transcript.api_retries),
        "error": run.error,
    }
    return [
        head,
        *({"kind": "event", "n": n, **event} for n, event in enumerate(events, start=1)),
        tail,
    ]


def write_pressure_trace(
    directory: Path,
    run: PressureRun,
    request: TurnRequest,
    *,
    suite: PressureSuite,
    backend: str,
    provenance: Provenance | None = None,
) -> Path:
    """Writes the trace of ``run`` (of ``suite``, made by ``request``) under ``directory``,
    secrets of the environment redacted; ``provenance`` says what produced the run."""
    path = pressure_trace_path(directory, run.scenario_id, run.arm, run.rep)
    path.parent.mkdir(parents=True, exist_ok=True)
    origin = origin_header(
        run.transcript,
        backend=backend,
        provenance=provenance,
        suite=suite.path,
        place=("pressure", suite.skill.name, run.scenario_id, run.arm, run.rep),
    )
    lines = build_pressure_trace(
        run,
        suite=suite.path.stem,
        skill=suite.skill.name,
        prompt=request.prompt,
        system=request.system,
        backend=backend,
        origin=origin,
    )
    return write_trace(path, lines)
