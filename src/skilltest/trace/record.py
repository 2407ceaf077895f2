"""Building a run's trace from its parsed transcript, raw output and score, and writing it."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from skilltest import __version__
from skilltest.redact import known_redactor, map_strings
from skilltest.report.files import write_text_atomic
from skilltest.report.provenance import Provenance, run_id
from skilltest.trace import SCHEMA_VERSION
from skilltest.transcript import Transcript, Usage

LONG_RESULT = 4000
"""Tool results longer than this are cut in the trace (the raw transcript keeps them whole)."""


def trace_path(transcript_path: Path) -> Path:
    """Where the trace of a run whose raw output is ``transcript_path`` goes."""
    return transcript_path.with_name(transcript_path.stem + ".trace.jsonl")


def fixture_checksum(
    workspace: Path | None,
    world_files: Sequence[Path],
    workspace_files: Sequence[tuple[Path, str]] = (),
) -> str | None:
    """A SHA-256 over the scenario's workspace folder, workspace files and world files, ``None``
    without any.

    Every file's relative path and bytes go in, in sorted order, so a fixture edit (a renamed
    file, a changed record) changes the checksum and a reviewer sees that the world moved.
    """
    files: list[tuple[str, Path]] = []
    if workspace is not None and workspace.is_dir():
        files += [
            (f"workspace/{p.relative_to(workspace).as_posix()}", p)
            for p in workspace.rglob("*")
            if p.is_file()
        ]
    for source, to in workspace_files:
        below = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
        files += [
            (
                f"workspace/{to}/{p.relative_to(source).as_posix()}"
                if p != source
                else f"workspace/{to}",
                p,
            )
            for p in below
        ]
    files += [(f"world/{p.name}", p) for p in world_files if p.is_file()]
    if not files:
        return None
    digest = hashlib.sha256()
    for name, path in sorted(files):
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()


def text_checksum(text: str | None) -> str | None:
    """A SHA-256 of a text a run was given (a pressure run's system prompt, a trigger run's
    description), ``None`` for a run given none.

    The checksum rather than the text: a reviewer sees whether two runs had the same text
    without the trace repeating a long skill in every run.
    """
    if text is None:
        return None
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _cut(text: str | None, limit: int = LONG_RESULT) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} more characters]"


def _raw_events(transcript_path: Path | None) -> list[dict[str, Any]]:
    if transcript_path is None or not transcript_path.is_file():
        return []
    events = []
    for line in transcript_path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def conversation_events(
    transcript: Transcript, transcript_path: Path | None, prompts: Sequence[str]
) -> list[dict[str, Any]]:
    """The run's timeline: user turns, model responses, assistant text, tool calls with their
    results, API retries and results, in the order the CLI printed them."""
    results = {call.id: call for call in transcript.tool_calls}
    events: list[dict[str, Any]] = []
    turn = 0
    if prompts:
        events.append({"type": "user", "turn": 1, "text": prompts[0]})
    seen_messages: set[str | None] = set()
    for event in _raw_events(transcript_path):
        kind = event.get("type")
        if kind == "assistant":
            message = event.get("message") or {}
            message_id = message.get("id")
            if message_id not in seen_messages:
                seen_messages.add(message_id)
                events.append(
                    {
                        "type": "model_response",
                        "message_id": message_id,
                        "model": message.get("model"),
                        "stop_reason": message.get("stop_reason"),
                        "usage": message.get("usage"),
                        "subagent": event.get("parent_tool_use_id"),
                    }
                )
            for block in message.get("content") or []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text":
                    events.append({"type": "assistant_text", "text": block.get("text", "")})
                elif block.get("type") == "tool_use":
                    call = results.get(block.get("id", ""))
                    events.append(
                        {
                            "type": "tool_call",
                            "id": block.get("id"),
                            "name": block.get("name"),
                            "input": block.get("input"),
                            "result": _cut(call.result) if call is not None else None,
                            "is_error": call.is_error if call is not None else False,
                            "subagent": event.get("parent_tool_use_id"),
                        }
                    )
        elif kind == "system" and event.get("subtype") == "api_retry":
            events.append(
                {
                    "type": "api_retry",
                    "attempt": event.get("attempt"),
                    "status": event.get("error_status"),
                    "error": event.get("error"),
                }
            )
        elif kind == "result":
            turn += 1
            events.append(
                {
                    "type": "result",
                    "subtype": event.get("subtype"),
                    "is_error": event.get("is_error"),
                    "num_turns": event.get("num_turns"),
                    "cost_usd": event.get("total_cost_usd"),
                    "duration_ms": event.get("duration_ms"),
                }
            )
            if turn < len(prompts):
                events.append({"type": "user", "turn": turn + 1, "text": prompts[turn]})
    for message in transcript.api_errors:
        events.append({"type": "error", "text": message})
    if transcript.error:
        events.append({"type": "error", "text": transcript.error})
    return events


def http_events(world: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The HTTP calls the world's fakes received, in the order they received them."""
    if world is None:
        return []
    return [
        {
            "type": "http",
            "service": call.get("service"),
            "method": call.get("method"),
            "host": call.get("host"),
            "path": call.get("path"),
            "query": call.get("query"),
            "status": call.get("status"),
            "turn": call.get("turn"),
            "write": call.get("write"),
            "body": call.get("body"),
        }
        for call in world.get("calls") or []
    ]


def origin_header(
    transcript: Transcript,
    *,
    backend: str,
    provenance: Provenance | None,
    suite: Path,
    place: Sequence[object],
) -> dict[str, Any]:
    """What produced one run, for its trace's header: the backend (for a replayed run, what its
    cassette was recorded with), what answered (where its requests went, the emulator's mark),
    whether that was the scripted stand-in (``origin``), the model
    as the API named it in its answers, the versions, the date, the suite file's checksum, the
    command line and the run's ``id`` in the results file, made of ``place`` (layer, skill,
    scenario or query, arm, repetition); ``None`` without ``provenance``."""
    recorded = (transcript.recorded_with,) if transcript.recorded_with else ()
    answered = transcript.answered_by
    origin = Provenance(
        run_id="",
        backend=backend,
        recorded_with=recorded,
        models=transcript.api_models,
        answered_by=(answered,) if answered is not None else (),
    ).origin
    checksum = (
        next((s.sha256 for s in provenance.suites if s.path == str(suite)), None)
        if provenance is not None
        else None
    )
    return {
        "toolkit_version": __version__,
        "cli_version": transcript.cli_version,
        "backend": backend,
        "recorded_with": transcript.recorded_with,
        "answered_by": None if answered is None else answered.to_dict(),
        "origin": origin,
        "model": transcript.api_models[0] if transcript.api_models else None,
        "models": list(transcript.api_models),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "suite_checksum": checksum,
        "trees": [
            {"path": tree.path, "kind": tree.kind, "sha256": tree.sha256}
            for tree in (provenance.trees if provenance is not None else ())
        ],
        "command": list(provenance.command) if provenance is not None else None,
        "run_id": None if provenance is None else run_id(provenance.run_id, *place),
    }


def build_trace(
    *,
    header: Mapping[str, Any],
    transcript: Transcript,
    transcript_path: Path | None,
    prompts: Sequence[str],
    world: Mapping[str, Any] | None,
    outcome: Mapping[str, Any],
    origin: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Every line of a run's trace: the header, the numbered events, the outcome.

    ``origin`` is what produced the run (:func:`origin_header`); without it, what the
    transcript says."""
    usage = transcript.usage
    head = {
        "schema_version": SCHEMA_VERSION,
        "kind": "header",
        "toolkit_version": __version__,
        "cli_version": transcript.cli_version,
        "model": transcript.api_models[0] if transcript.api_models else None,
        "backend": transcript.source,
        **(origin or {}),
        **header,
        "prompts": list(prompts),
        "profile": world.get("profile") if world is not None else None,
    }
    events = [
        *conversation_events(transcript, transcript_path, prompts),
        *http_events(world),
    ]
    tail = {
        "kind": "outcome",
        **outcome,
        "world": (
            {
                "mode": world.get("mode"),
                "profile": world.get("profile"),
                "scores": world.get("scores"),
                "violations": world.get("violations"),
                "authority_violation": world.get("authority_violation"),
                "state_diff": world.get("state_diff"),
                "answer_failures": world.get("answer_failures"),
            }
            if world is not None
            else None
        ),
        "tokens": tokens(usage),
        "cost_usd": transcript.cost_usd,
        "latency_ms": transcript.latency_ms,
        "retries": len(transcript.api_retries),
        "ended": transcript.ended,
        "hung": transcript.hung,
        "error": transcript.error,
    }
    return [
        head,
        *({"kind": "event", "n": n, **event} for n, event in enumerate(events, start=1)),
        tail,
    ]


def tokens(usage: Usage) -> dict[str, int]:
    """A run's tokens as its trace's outcome gives them."""
    return {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "cache_read": usage.cache_read_input_tokens,
        "cache_write": usage.cache_creation_input_tokens,
    }


def write_trace(
    path: Path, lines: Sequence[Mapping[str, Any]], redact: Callable[[str], str] | None = None
) -> Path:
    """Writes the trace, every string through ``redact`` first.

    The transcript a trace is built from is redacted already; this is the second line of
    defence for what the trace adds (world request bodies, the environment's credentials),
    by :func:`~skilltest.redact.known_redactor`.
    """
    environment = known_redactor()

    def rule(text: str) -> str:
        return environment(redact(text) if redact is not None else text)

    text = "".join(
        json.dumps(map_strings(dict(line), rule), ensure_ascii=False, default=str) + "\n"
        for line in lines
    )
    write_text_atomic(path, text)
    return path
