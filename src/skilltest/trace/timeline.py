"""A trace as a readable timeline: header, numbered events, and the outcome."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from skilltest.repetitions import run_number
from skilltest.report.provenance import OFFLINE, STAND_IN

TRIM = 160
"""Texts, inputs and results longer than this are cut on their line (the trace keeps more)."""


def _trim(value: Any, limit: int = TRIM) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _number(value: Any, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _event(event: Mapping[str, Any]) -> str | None:
    kind = event.get("type")
    if kind == "user":
        return f"user (turn {event.get('turn')}): {_trim(event.get('text', ''))}"
    if kind == "model_response":
        usage = event.get("usage") or {}
        message = f" {event['message_id']}" if event.get("message_id") else ""
        extra = ""
        if "latency_ms" in event:
            # A pressure run's one request: its stop reason and latency are the run's.
            extra = f", stop {event.get('stop_reason') or 'unknown'}, latency " + (
                "unknown" if event["latency_ms"] is None else f"{event['latency_ms'] / 1000:.1f} s"
            )
        return (
            f"model response{message}"
            f" ({event.get('model') or 'model unknown'}):"
            f" {usage.get('input_tokens', 0)} in, {usage.get('output_tokens', 0)} out{extra}"
        )
    if kind == "assistant_text":
        return f"assistant: {_trim(event.get('text', ''))}"
    if kind == "tool_call":
        result = event.get("result")
        shown = "(no result)" if result is None else _trim(result, TRIM // 2)
        flag = " [error]" if event.get("is_error") else ""
        return f"tool {event.get('name')} {_trim(event.get('input'), TRIM // 2)} -> {shown}{flag}"
    if kind == "http":
        query = f"?{event['query']}" if event.get("query") else ""
        write = " (write)" if event.get("write") else ""
        return (
            f"http {event.get('method')} {event.get('host')}{event.get('path')}{query}"
            f" -> {event.get('status')}{write}"
        )
    if kind == "api_retry":
        return f"API retry {event.get('attempt')}: {event.get('status')} {event.get('error')}"
    if kind == "result":
        return f"result: {event.get('subtype')} after {event.get('num_turns')} turn(s)" + (
            " [error]" if event.get("is_error") else ""
        )
    if kind == "error":
        return f"ERROR: {_trim(event.get('text', ''), TRIM * 2)}"
    return None


def render(lines: Sequence[Mapping[str, Any]]) -> str:
    """The trace as text: a header, one numbered line per event, a footer with the outcome."""
    head = lines[0]
    events = [line for line in lines[1:] if line.get("kind") == "event"]
    outcome = next((line for line in lines if line.get("kind") == "outcome"), {})
    triggers = head.get("layer") == "triggers"
    if triggers:
        should = "should trigger" if head.get("should_trigger") else "should not trigger"
        title = f"{head.get('suite')}/{head.get('query')}  {head.get('variant')} ({should})"
    else:
        title = (
            f"{head.get('suite')}/{head.get('scenario')}  {str(head.get('arm')).replace('_', '-')}"
        )
    backend = str(head.get("backend"))
    if head.get("recorded_with"):
        backend += f" of a cassette recorded with {head['recorded_with']}"
    out = [
        f"{title} run {run_number(head.get('layer') or 'scenarios', head.get('rep'))}",
        f"model {head.get('model') or 'unknown'}, claude {head.get('cli_version') or 'unknown'}, "
        f"skilltest {head.get('toolkit_version')}, {backend} backend"
        + (f", {head['date']}" if head.get("date") else ""),
    ]
    if head.get("origin") == OFFLINE:
        out.append(
            f"offline: answered by {STAND_IN}, not a model; this run says nothing about how a "
            "real model behaves"
        )
    if head.get("description_checksum"):
        out.append(f"description {head['description_checksum']}")
    if head.get("fixture_checksum"):
        out.append(f"fixture {head['fixture_checksum']}")
    if head.get("profile"):
        out.append(f"profile {head['profile']}")
    out.append("")
    width = len(str(len(events)))
    for event in events:
        text = _event(event)
        if text is not None:
            out.append(f"{event.get('n', '?'):>{width}}. {text}")
    out.append("")
    score = outcome.get("score")
    if triggers:
        # A trigger run is not scored: it fired, did not, or ended before it was known.
        reason = outcome.get("reason")
        out.append(f"{outcome.get('ended')}" + (f": {reason}" if reason else ""))
        calls = [str(call.get("name")) for call in outcome.get("first_tool_calls") or []]
        out.append("first tool calls: " + (", ".join(calls) or "none"))
    elif score is None:
        out.append(f"unscored: {outcome.get('unscored_reason') or outcome.get('error')}")
    else:
        out.append(f"score {score:.2f}")
    components = outcome.get("components") or {}
    shown = [f"{name} {value:.2f}" for name, value in components.items() if value is not None]
    if shown:
        out.append("components: " + ", ".join(shown))
    judgement = outcome.get("judgement")
    if judgement:
        # A pressure run: its score is its patterns' judgement.
        out.append(
            ("passed" if judgement.get("passed") else "not passed")
            + f"; matched: {', '.join(judgement.get('matched') or []) or '-'}"
            + f"; missing: {', '.join(judgement.get('missing') or []) or '-'}"
            + f"; anti-patterns hit: {', '.join(judgement.get('anti_matched') or []) or '-'}"
            + (
                ""
                if judgement.get("red") is None
                else "; baseline RED"
                if judgement["red"]
                else "; baseline not RED"
            )
        )
    if head.get("system_checksum"):
        # After the header's lines on what produced the run.
        out.insert(
            3 if head.get("origin") == OFFLINE else 2, f"system prompt {head['system_checksum']}"
        )
    world = outcome.get("world")
    if world:
        violations = world.get("violations") or []
        scores = world.get("scores") or {}
        out.append(
            "world: "
            + ", ".join(f"{name} {_number(value)}" for name, value in scores.items())
            + (f"; violations: {'; '.join(violations)}" if violations else "; no violations")
        )
    tokens = outcome.get("tokens") or {}
    cost = outcome.get("cost_usd")
    out.append(
        f"tokens: {tokens.get('input', 0):,} in, {tokens.get('output', 0):,} out; "
        + ("cost unknown" if cost is None else f"cost ${cost:.4f}")
        + f"; duration {_number(outcome.get('duration_s'), 1)} s"
        + f"; {outcome.get('retries', 0)} retries"
    )
    return "\n".join(out)
