"""The Messages API as data, without the SDK: the body a single-turn run sends, and a transcript
from the message that answered it.

The SDK runner sends exactly :func:`wire_body`, and replay reads recorded answers back through
:func:`transcript_from_message` and :func:`api_error`, so a replayed run and a live one give the
same transcript; replay imports neither the SDK nor an HTTP client.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skilltest.runners.base import TurnRequest
from skilltest.transcript import Transcript, Usage

RETRIED_STATUSES = frozenset({408, 409, 429})
"""Statuses the SDK retries, besides every 5xx (529 included)."""


def wire_body(request: TurnRequest) -> dict[str, Any]:
    """The JSON body a single-turn request sends: the prompt as the only user message, the skill
    (with-skill arm) as a system block marked for prompt caching, no tools."""
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": [{"role": "user", "content": request.prompt}],
    }
    if request.system:
        body["system"] = [
            {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
        ]
    if request.temperature is not None:
        body["temperature"] = request.temperature
    return body


def retried(status: int) -> bool:
    """Whether the SDK retries an answer with this status."""
    return status in RETRIED_STATUSES or status >= 500


def error_message(body: object, fallback: str) -> str:
    """``type: message`` from an Anthropic error body, else ``fallback``."""
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping) and error.get("message"):
            return f"{error.get('type', 'error')}: {error['message']}"
    return fallback


def api_error(status: int, body: object, max_retries: int) -> str:
    """The error of a run whose final answer was an HTTP error, as the SDK runner words it."""
    after = f" (after {max_retries} retries)" if retried(status) else ""
    return f"API error {status}: {error_message(body, f'HTTP {status}')}{after}"


def transcript_from_message(
    message: Mapping[str, Any], *, source: str, latency_ms: float | None = None
) -> Transcript:
    """The transcript of one Messages API message (its text blocks, usage, model, stop reason).

    Raises:
        TypeError: ``message`` is not a message.
    """
    content = message.get("content")
    if not isinstance(content, list):
        raise TypeError("not a Messages API message: no content list")
    texts = tuple(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, Mapping) and block.get("type") == "text"
    )
    model = message.get("model") if isinstance(message.get("model"), str) else None
    return Transcript(
        source=source,
        assistant_text=texts,
        usage=Usage.from_mapping(message.get("usage")),
        model=model,
        api_models=(model,) if model else (),
        stop_reason=message.get("stop_reason")
        if isinstance(message.get("stop_reason"), str)
        else None,
        latency_ms=latency_ms,
    )
