"""The stand-in model's replies as OpenAI Responses API answers: a response object and its events.

Pure functions from the emulator's one reply form, an assistant
:class:`~skilltest.emulator.sse.Message` (its thinking, text and tool calls, ids and usage), to
what ``POST /v1/responses`` sends, as the ``openai`` SDK types it and as Codex 0.171.0 reads it:

* JSON: a ``response`` object whose ``output`` holds a ``reasoning`` item (the thinking, as a
  summary), a ``message`` item (``output_text``) and a ``function_call`` item per tool call;
* SSE: ``response.created``, ``response.in_progress``, then per item
  ``response.output_item.added``, its content (``response.content_part.added``,
  ``response.output_text.delta``..., ``.done``; ``response.function_call_arguments.delta``...,
  ``.done``; ``response.reasoning_summary_part.added``, ``response.reasoning_summary_text.delta``
  ..., ``.done``) and ``response.output_item.done``; last ``response.completed`` (or
  ``response.incomplete`` when the reply stopped at ``max_tokens``). Every event carries its
  ``sequence_number``.

Ids keep the message's own random part: ``msg_01X`` answers as ``resp_01X``, and a tool call
``toolu_01Y`` as ``call_01Y``, so a conversation's ids stay stable for a given script seed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from skilltest.emulator.sse import JSON_CHUNK, TEXT_CHUNK, Message, pieces

Event = tuple[str, dict[str, Any]]


def _suffix(anthropic_id: str) -> str:
    return anthropic_id.split("_", 1)[-1]


def namespaced_tools(request: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """The functions the request declares inside a ``namespace`` tool (Codex 0.171.0 declares
    an MCP server's tools so: namespace ``mcp__tracker``, function ``create_issue``), each under
    the name a script may call it by: ``mcp__tracker__create_issue``, and its bare name when no
    other namespace has it. A call is answered with its ``namespace`` and bare ``name``."""
    found: dict[str, tuple[str, str]] = {}
    bare: dict[str, list[str]] = {}
    tools = request.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, Mapping) or tool.get("type") != "namespace":
            continue
        namespace = str(tool.get("name") or "")
        inner = tool.get("tools")
        for function in inner if isinstance(inner, list) else []:
            name = function.get("name") if isinstance(function, Mapping) else None
            if namespace and isinstance(name, str):
                found[f"{namespace}__{name}"] = (namespace, name)
                bare.setdefault(name, []).append(namespace)
    for name, namespaces in bare.items():
        if len(namespaces) == 1:
            found.setdefault(name, (namespaces[0], name))
    return found


def _items(
    message: Message, namespaced: Mapping[str, tuple[str, str]] | None = None
) -> list[dict[str, Any]]:
    """The response's output items, complete; a call of a namespaced function names its
    namespace (:func:`namespaced_tools`)."""
    suffix = _suffix(message.data["id"])
    items: list[dict[str, Any]] = []
    for index, block in enumerate(message.data["content"]):
        kind = block["type"]
        if kind == "thinking":
            items.append(
                {
                    "id": f"rs_{suffix}{index}",
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": block["thinking"]}],
                }
            )
        elif kind == "text":
            part = {"type": "output_text", "text": block["text"], "annotations": [], "logprobs": []}
            items.append(
                {
                    "id": f"msg_{suffix}{index}",
                    "type": "message",
                    "status": "completed",
                    "role": "assistant",
                    "content": [part],
                }
            )
        elif kind == "tool_use":
            call = {
                "id": f"fc_{_suffix(block['id'])}",
                "type": "function_call",
                "status": "completed",
                "call_id": f"call_{_suffix(block['id'])}",
                "name": block["name"],
                "arguments": json.dumps(block["input"], ensure_ascii=False),
            }
            if namespaced and block["name"] in namespaced:
                call["namespace"], call["name"] = namespaced[block["name"]]
            items.append(call)
    return items


def _usage(message: Message) -> dict[str, Any]:
    usage = message.data["usage"]
    cached = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    total_in = int(usage["input_tokens"]) + cached + written
    out = int(usage["output_tokens"])
    return {
        "input_tokens": total_in,
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": written},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": total_in + out,
    }


def build_response(
    message: Message, request: Mapping[str, Any], *, created_at: int | None = None
) -> dict[str, Any]:
    """The ``response`` object answering ``request`` with ``message``, complete."""
    incomplete = message.data["stop_reason"] == "max_tokens"
    return {
        "id": f"resp_{_suffix(message.data['id'])}",
        "object": "response",
        "created_at": int(time.time()) if created_at is None else created_at,
        "status": "incomplete" if incomplete else "completed",
        "background": False,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "model": message.data["model"],
        "output": _items(message, namespaced_tools(request)),
        "parallel_tool_calls": bool(request.get("parallel_tool_calls", True)),
        "previous_response_id": request.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": bool(request.get("store", True)),
        "temperature": request.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": list(request.get("tools") or []),
        "top_p": request.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": _usage(message),
        "user": None,
        "metadata": dict(request.get("metadata") or {}),
    }


def _started(item: dict[str, Any]) -> dict[str, Any]:
    """An output item as ``response.output_item.added`` shows it: nothing produced yet."""
    if item["type"] == "message":
        return {**item, "status": "in_progress", "content": []}
    if item["type"] == "function_call":
        return {**item, "status": "in_progress", "arguments": ""}
    return {**item, "summary": []}


def response_events(response: Mapping[str, Any]) -> list[Event]:
    """Every SSE event of a streamed ``response``, in the order the API sends them, as
    ``(event name, data)``; the data's ``type`` is the event name."""
    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    pending["incomplete_details"] = None
    raw: list[dict[str, Any]] = [
        {"type": "response.created", "response": pending},
        {"type": "response.in_progress", "response": pending},
    ]
    for index, item in enumerate(response["output"]):
        at = {"item_id": item["id"], "output_index": index}
        raw.append(
            {"type": "response.output_item.added", "output_index": index, "item": _started(item)}
        )
        if item["type"] == "message":
            part = item["content"][0]
            text = part["text"]
            empty = {**part, "text": ""}
            raw.append(
                {"type": "response.content_part.added", **at, "content_index": 0, "part": empty}
            )
            raw.extend(
                {
                    "type": "response.output_text.delta",
                    **at,
                    "content_index": 0,
                    "delta": piece,
                    "logprobs": [],
                }
                for piece in pieces(text, TEXT_CHUNK)
            )
            raw.append(
                {
                    "type": "response.output_text.done",
                    **at,
                    "content_index": 0,
                    "text": text,
                    "logprobs": [],
                }
            )
            raw.append(
                {"type": "response.content_part.done", **at, "content_index": 0, "part": part}
            )
        elif item["type"] == "function_call":
            arguments = item["arguments"]
            raw.extend(
                {"type": "response.function_call_arguments.delta", **at, "delta": piece}
                for piece in pieces(arguments, JSON_CHUNK)
            )
            raw.append(
                {
                    "type": "response.function_call_arguments.done",
                    **at,
                    "name": item["name"],
                    "arguments": arguments,
                }
            )
        else:
            summary = item["summary"][0]
            at_part = {**at, "summary_index": 0}
            raw.append(
                {
                    "type": "response.reasoning_summary_part.added",
                    **at_part,
                    "part": {"type": "summary_text", "text": ""},
                }
            )
            raw.extend(
                {"type": "response.reasoning_summary_text.delta", **at_part, "delta": piece}
                for piece in pieces(summary["text"], TEXT_CHUNK)
            )
            raw.append(
                {"type": "response.reasoning_summary_text.done", **at_part, "text": summary["text"]}
            )
            raw.append({"type": "response.reasoning_summary_part.done", **at_part, "part": summary})
        raw.append({"type": "response.output_item.done", "output_index": index, "item": item})
    ending = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
    raw.append({"type": ending, "response": dict(response)})
    return [(event["type"], {**event, "sequence_number": n}) for n, event in enumerate(raw)]


def failed_events(response: Mapping[str, Any], message: str) -> list[Event]:
    """The events of a stream that fails after it started: ``response.created``, an ``error``
    event and ``response.failed`` (the way the API reports a server error mid-stream)."""
    created = response_events(response)[0]
    failed = {
        **response,
        "status": "failed",
        "output": [],
        "usage": None,
        "incomplete_details": None,
        "error": {"code": "server_error", "message": message},
    }
    return [
        created,
        (
            "error",
            {
                "type": "error",
                "code": "server_error",
                "message": message,
                "param": None,
                "sequence_number": 1,
            },
        ),
        ("response.failed", {"type": "response.failed", "response": failed, "sequence_number": 2}),
    ]


MALFORMED_EVENT = ("response.created", '{"type": "response.created", "response": {')
"""The event a ``malformed`` fault sends: its data is cut in the middle of the JSON."""


def truncation_point(events: list[Event]) -> int:
    """How many events to send before cutting a stream: up to the first delta."""
    for index, (name, _) in enumerate(events):
        if name.endswith(".delta"):
            return index + 1
    return min(len(events), 2)
