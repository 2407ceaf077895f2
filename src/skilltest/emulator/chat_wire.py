"""The stand-in model's replies as OpenAI Chat Completions answers: a completion and its chunks.

Pure functions from an assistant :class:`~skilltest.emulator.sse.Message` to what ``POST
/v1/chat/completions`` sends, as the ``openai`` SDK types it:

* JSON: a ``chat.completion`` whose one choice holds the text as ``message.content`` and each
  tool call as ``message.tool_calls[]`` (``{id, type: function, function: {name,
  arguments}}``), with ``finish_reason`` ``stop``, ``tool_calls`` or ``length``;
* SSE: ``chat.completion.chunk`` objects as bare ``data:`` lines (no event names): the role
  first, the text in ``delta.content`` pieces, each tool call opened with its id and name in
  ``delta.tool_calls`` and its arguments in pieces, then the ``finish_reason``; with
  ``stream_options: {include_usage: true}`` a last chunk of no choices and the usage; then
  ``data: [DONE]``.

Chat Completions has no place for thinking: a reply's ``thinking`` is left out.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from skilltest.emulator.sse import JSON_CHUNK, TEXT_CHUNK, Message, pieces

DONE = "[DONE]"
"""The data of the last event of a stream."""

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}
"""A reply's ``stop_reason`` as a choice's ``finish_reason``."""


def _usage(message: Message) -> dict[str, Any]:
    usage = message.data["usage"]
    cached = int(usage.get("cache_read_input_tokens") or 0)
    prompt = (
        int(usage["input_tokens"]) + cached + int(usage.get("cache_creation_input_tokens") or 0)
    )
    completion = int(usage["output_tokens"])
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _calls(message: Message) -> list[dict[str, Any]]:
    return [
        {
            "id": "call_" + block["id"].split("_", 1)[-1],
            "type": "function",
            "function": {
                "name": block["name"],
                "arguments": json.dumps(block["input"], ensure_ascii=False),
            },
        }
        for block in message.data["content"]
        if block["type"] == "tool_use"
    ]


def _text(message: Message) -> str | None:
    texts = [block["text"] for block in message.data["content"] if block["type"] == "text"]
    return "".join(texts) if texts else None


def build_completion(message: Message, *, created: int | None = None) -> dict[str, Any]:
    """The ``chat.completion`` answering with ``message``, complete."""
    answer: dict[str, Any] = {
        "role": "assistant",
        "content": _text(message),
        "refusal": None,
        "annotations": [],
    }
    calls = _calls(message)
    if calls:
        answer["tool_calls"] = calls
    return {
        "id": "chatcmpl-" + message.data["id"].split("_", 1)[-1],
        "object": "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": message.data["model"],
        "choices": [
            {
                "index": 0,
                "message": answer,
                "logprobs": None,
                "finish_reason": FINISH_REASONS.get(message.data["stop_reason"], "stop"),
            }
        ],
        "usage": _usage(message),
        "service_tier": "default",
        "system_fingerprint": None,
    }


def completion_chunks(
    completion: Mapping[str, Any], request: Mapping[str, Any]
) -> list[dict[str, Any] | str]:
    """Every SSE data item of a streamed ``completion``, in order: chunk objects, then
    :data:`DONE`."""
    options = request.get("stream_options")
    with_usage = isinstance(options, Mapping) and bool(options.get("include_usage"))
    head = {key: completion[key] for key in ("id", "created", "model", "service_tier")}
    head = {**head, "object": "chat.completion.chunk", "system_fingerprint": None}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        data = {
            **head,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if with_usage:
            data["usage"] = None
        return data

    choice = completion["choices"][0]
    message = choice["message"]
    items: list[dict[str, Any] | str] = [
        chunk({"role": "assistant", "content": "", "refusal": None})
    ]
    items.extend(
        chunk({"content": piece}) for piece in pieces(message["content"] or "", TEXT_CHUNK)
    )
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        opened = {"name": function["name"], "arguments": ""}
        items.append(
            chunk(
                {
                    "tool_calls": [
                        {"index": index, "id": call["id"], "type": "function", "function": opened}
                    ]
                }
            )
        )
        items.extend(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in pieces(function["arguments"], JSON_CHUNK)
        )
    items.append(chunk({}, choice["finish_reason"]))
    if with_usage:
        items.append({**head, "choices": [], "usage": completion["usage"]})
    items.append(DONE)
    return items


def encode_data(data: Mapping[str, Any] | str) -> bytes:
    """One SSE event of data only (Chat Completions names no events)."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {payload}\n\n".encode()


MALFORMED_DATA = '{"id": "chatcmpl-'
"""The data a ``malformed`` fault sends: cut in the middle of the JSON."""


def truncation_point(items: list[dict[str, Any] | str]) -> int:
    """How many items to send before cutting a stream: the role chunk and the first delta."""
    return min(len(items) - 1, 2)
