"""Encoding of the stand-in model's replies as Messages API responses: JSON and SSE events.

Pure functions from a :class:`~skilltest.emulator.script.Reply` to the exact shapes the
Anthropic API sends, so the real SDK and the real Claude Code CLI parse them unchanged.
Token counts are estimates (about four characters per token) but always the same for the
same request and reply.
"""

from __future__ import annotations

import json
import random
import string
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from skilltest.emulator.script import Reply

SIGNATURE = "c2tpbGx0ZXN0LWVtdWxhdG9yOiBub3QgYSByZWFsIHNpZ25hdHVyZQ=="
"""Placeholder signature of thinking blocks (base64 of a plain statement that it is fake)."""

TEXT_CHUNK = 48
"""Characters of text per streamed delta."""
JSON_CHUNK = 32
"""Characters of a tool call's JSON input per streamed delta."""
_ID_ALPHABET = string.ascii_letters + string.digits


def estimate_tokens(text: str) -> int:
    """About four characters per token, at least one."""
    return max(1, (len(text) + 3) // 4)


def input_tokens(body: Mapping[str, Any]) -> int:
    """Estimated input tokens of a request: its system prompt, messages and tool definitions."""
    counted = {key: body.get(key) for key in ("system", "messages", "tools")}
    return estimate_tokens(json.dumps(counted, ensure_ascii=False, sort_keys=True))


def output_tokens(reply: Reply) -> int:
    """Estimated output tokens of a reply."""
    parts = [reply.thinking or "", reply.text or ""]
    parts += [json.dumps(dict(call.input), ensure_ascii=False) for call in reply.tool_calls]
    return estimate_tokens("".join(parts))


class IdSource:
    """Seeded source of ``msg_...`` and ``toolu_...`` ids shaped like the real ones."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(f"{seed}:ids")
        self._lock = threading.Lock()

    def new(self, prefix: str) -> str:
        with self._lock:
            return prefix + "01" + "".join(self._random.choices(_ID_ALPHABET, k=22))


@dataclass(frozen=True)
class Message:
    """A complete assistant message, ready to be sent as JSON or as SSE events."""

    data: dict[str, Any]
    """The message object exactly as the non-streaming API returns it."""

    def to_json_bytes(self) -> bytes:
        return json.dumps(self.data, ensure_ascii=False).encode("utf-8")


def build_message(
    reply: Reply,
    *,
    model: str,
    ids: IdSource,
    request: Mapping[str, Any],
    usage: Mapping[str, int] | None = None,
) -> Message:
    """The assistant message for ``reply`` to ``request``.

    ``usage`` gives the input side of the usage (from the prompt cache); without it every input
    token is counted as uncached.
    """
    content: list[dict[str, Any]] = []
    if reply.thinking is not None:
        content.append({"type": "thinking", "thinking": reply.thinking, "signature": SIGNATURE})
    if reply.text is not None:
        content.append({"type": "text", "text": reply.text})
    for call in reply.tool_calls:
        content.append(
            {"type": "tool_use", "id": ids.new("toolu_"), "name": call.name, "input": call.input}
        )
    return Message(
        {
            "id": ids.new("msg_"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens(request),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                **(usage or {}),
                "output_tokens": output_tokens(reply),
            },
        }
    )


def encode_event(event: str, data: Mapping[str, Any] | str) -> bytes:
    """One SSE event; ``data`` may be a raw string (used to send malformed data on purpose)."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"event: {event}\ndata: {payload}\n\n".encode()


def pieces(text: str, size: int) -> Iterator[str]:
    """``text`` in pieces of ``size`` characters, as a stream sends it."""
    for start in range(0, len(text), size):
        yield text[start : start + size]


def message_start(message: Message) -> tuple[str, dict[str, Any]]:
    """The ``message_start`` event: the message without content, stop reason or output."""
    usage = dict(message.data["usage"], output_tokens=1)
    start = dict(message.data, content=[], stop_reason=None, usage=usage)
    return "message_start", {"type": "message_start", "message": start}


def stream_events(message: Message) -> list[tuple[str, dict[str, Any]]]:
    """Every SSE event of a streamed ``message``, in the order the API sends them."""
    events = [message_start(message), ("ping", {"type": "ping"})]
    for index, block in enumerate(message.data["content"]):
        kind = block["type"]
        start: dict[str, Any]
        deltas: list[dict[str, Any]]
        if kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": piece}
                for piece in pieces(block["thinking"], TEXT_CHUNK)
            ]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif kind == "text":
            start = {"type": "text", "text": ""}
            deltas = [
                {"type": "text_delta", "text": piece} for piece in pieces(block["text"], TEXT_CHUNK)
            ]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = json.dumps(block["input"], ensure_ascii=False)
            deltas = [
                {"type": "input_json_delta", "partial_json": piece}
                for piece in pieces(raw, JSON_CHUNK)
            ]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        events.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message.data["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": message.data["usage"]["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def truncation_point(events: list[tuple[str, dict[str, Any]]]) -> int:
    """How many events to send before cutting a stream: up to the first content delta."""
    for index, (name, _) in enumerate(events):
        if name == "content_block_delta":
            return index + 1
    return min(len(events), 2)
