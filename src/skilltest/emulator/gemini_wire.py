"""Google's Gemini API on the emulator: its requests read as Messages requests, and the stand-in
model's replies sent as ``GenerateContentResponse`` objects.

Gemini CLI 0.61.0 (through the ``@google/genai`` SDK) sends ``POST
/v1beta/models/MODEL:streamGenerateContent?alt=sse`` for each turn of its agent loop and ``POST
/v1beta/models/MODEL:generateContent`` for its helper requests (model routing, loop checks), the
model named in the path. A request reads as a Messages request (:func:`as_messages_request`):

==============================  ==================================================
Messages                        Gemini API
==============================  ==================================================
``system``                      ``systemInstruction.parts[].text``
user text                       ``contents[]`` of role ``user``, ``text`` parts
assistant text, thinking        ``contents[]`` of role ``model``, ``text`` parts
                                (``thought: true``: thinking)
``tool_use``                    ``functionCall`` parts (``{id?, name, args}``)
``tool_result``                 ``functionResponse`` parts (``{id?, name, response}``),
                                paired with their call by ``id``, else by name in order
``tools[].name``                ``tools[].functionDeclarations[].name``
==============================  ==================================================

A reply is one candidate whose ``content`` (role ``model``) holds a thought part, a text part
and a ``functionCall`` part per tool call, with its ``finishReason`` (``STOP``, ``MAX_TOKENS``)
and the ``usageMetadata``; streamed, it is the same object in pieces, each an SSE ``data:`` line:
the text in pieces, the calls whole, the last chunk with the finish reason and the usage.
Pure functions; no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from skilltest.emulator.sse import TEXT_CHUNK, Message, pieces

GEMINI_STATUSES: dict[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
    529: "UNAVAILABLE",
}
"""The ``status`` word of a Google API error for each HTTP status the emulator answers with."""

_MESSAGES: dict[int, str] = {
    429: "Resource has been exhausted (e.g. check quota).",
    500: "An internal error has occurred. Please retry.",
    503: "The model is overloaded. Please try again later.",
    529: "The model is overloaded. Please try again later.",
}

FINISH_REASONS = {
    "end_turn": "STOP",
    "tool_use": "STOP",
    "stop_sequence": "STOP",
    "max_tokens": "MAX_TOKENS",
    "refusal": "SAFETY",
    "pause_turn": "STOP",
}
"""A reply's stop reason as a Gemini ``finishReason`` (a function call also ends in ``STOP``)."""

MALFORMED_DATA = '{"candidates": [{"content": {"parts": [{"text": '
"""The data a ``malformed`` fault sends: cut in the middle of the JSON."""


def gemini_error_body(status: int, message: str | None = None) -> dict[str, Any]:
    """A Google API error (``{"error": {code, message, status}}``) for ``status``."""
    return {
        "error": {
            "code": status,
            "message": message or _MESSAGES.get(status, f"HTTP {status}"),
            "status": GEMINI_STATUSES.get(status, "UNKNOWN"),
        }
    }


# --- requests --------------------------------------------------------------------------------


def _parts(content: object) -> list[Mapping[str, Any]]:
    parts = content.get("parts") if isinstance(content, Mapping) else None
    return [part for part in parts or [] if isinstance(part, Mapping)]


def _response_text(response: object) -> tuple[str, bool]:
    """A ``functionResponse.response`` as a tool result's text, and whether it is an error."""
    if isinstance(response, Mapping):
        if "error" in response and "output" not in response:
            error = response["error"]
            return (error if isinstance(error, str) else json.dumps(error)), True
        output = response.get("output", response)
        if isinstance(output, str):
            return output, False
        return json.dumps(output, ensure_ascii=False), False
    return ("" if response is None else str(response)), False


def as_messages_request(body: Mapping[str, Any], model: str | None = None) -> dict[str, Any]:
    """A Gemini ``generateContent`` body as a Messages request (``model`` from the path)."""
    messages: list[dict[str, Any]] = []
    pending: dict[str, list[str]] = {}  # name -> ids of calls not yet answered, oldest first
    count = 0

    def add(role: str, block: dict[str, Any]) -> None:
        # A model content's parts make one assistant message; tool results in a row, one user
        # message; each user text is a message of its own.
        last = messages[-1] if messages else None
        if (
            last is not None
            and last["role"] == role
            and (role == "assistant" or _results(last, block))
        ):
            last["content"].append(block)
        else:
            messages.append({"role": role, "content": [block]})

    for content in body.get("contents") or []:
        if not isinstance(content, Mapping):
            continue
        role = "assistant" if content.get("role") == "model" else "user"
        for part in _parts(content):
            if isinstance(part.get("functionCall"), Mapping):
                call = part["functionCall"]
                name = str(call.get("name") or "")
                count += 1
                call_id = str(call.get("id") or f"gemini_call_{count}")
                pending.setdefault(name, []).append(call_id)
                given = call.get("args")
                block = {
                    "type": "tool_use",
                    "id": call_id,
                    "name": name,
                    "input": dict(given) if isinstance(given, Mapping) else {},
                }
                add("assistant", block)
            elif isinstance(part.get("functionResponse"), Mapping):
                answered = part["functionResponse"]
                name = str(answered.get("name") or "")
                waiting = pending.get(name) or []
                call_id = str(answered.get("id") or (waiting[0] if waiting else name))
                if call_id in waiting:
                    waiting.remove(call_id)
                text, failed = _response_text(answered.get("response"))
                result: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": text,
                }
                if failed:
                    result["is_error"] = True
                add("user", result)
            elif isinstance(part.get("text"), str):
                if part.get("thought") and role == "assistant":
                    add("assistant", {"type": "thinking", "thinking": part["text"]})
                else:
                    add(role, {"type": "text", "text": part["text"]})
    system = "\n".join(
        str(part.get("text"))
        for part in _parts(body.get("systemInstruction"))
        if isinstance(part.get("text"), str)
    )
    request: dict[str, Any] = {
        "model": model or body.get("model"),
        "system": system,
        "messages": messages,
        "tools": [{"name": name} for name in _declared(body.get("tools"))],
    }
    return request


def _results(message: Mapping[str, Any], block: Mapping[str, Any]) -> bool:
    """Whether ``block`` joins ``message``: tool results in a row make one user message."""
    last = message["content"][-1] if message["content"] else {}
    return block.get("type") == "tool_result" and last.get("type") == "tool_result"


def _declared(tools: object) -> Iterable[str]:
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, Mapping):
            continue
        for function in tool.get("functionDeclarations") or []:
            if isinstance(function, Mapping) and isinstance(function.get("name"), str):
                yield function["name"]


# --- answers ---------------------------------------------------------------------------------


def _usage(message: Message) -> dict[str, Any]:
    usage = message.data["usage"]
    cached = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    prompt = int(usage["input_tokens"]) + cached + written
    out = int(usage["output_tokens"])
    counted: dict[str, Any] = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": out,
        "totalTokenCount": prompt + out,
    }
    if cached:
        counted["cachedContentTokenCount"] = cached
    return counted


def _answer_parts(message: Message) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in message.data["content"]:
        if block["type"] == "thinking":
            parts.append({"text": block["thinking"], "thought": True})
        elif block["type"] == "text":
            parts.append({"text": block["text"]})
        elif block["type"] == "tool_use":
            parts.append({"functionCall": {"name": block["name"], "args": dict(block["input"])}})
    return parts


def build_generate_response(message: Message) -> dict[str, Any]:
    """The ``GenerateContentResponse`` answering with ``message``, whole."""
    parts = _answer_parts(message) or [{"text": ""}]
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": FINISH_REASONS.get(message.data["stop_reason"], "STOP"),
                "index": 0,
            }
        ],
        "usageMetadata": _usage(message),
        "modelVersion": message.data["model"],
        "responseId": message.data["id"][4:],
    }


def stream_chunks(response: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The chunks of a streamed ``response``: each text part in pieces, each other part whole,
    the finish reason and the usage on the last chunk (one more when the last part is text)."""
    candidate = response["candidates"][0]
    head = {"modelVersion": response["modelVersion"], "responseId": response["responseId"]}

    def chunk(parts: list[dict[str, Any]]) -> dict[str, Any]:
        content = {"role": "model", "parts": parts}
        return {"candidates": [{"content": content, "index": 0}], **head}

    chunks: list[dict[str, Any]] = []
    for part in candidate["content"]["parts"]:
        if isinstance(part.get("text"), str) and part["text"]:
            chunks.extend(
                chunk([{**part, "text": piece}]) for piece in pieces(part["text"], TEXT_CHUNK)
            )
        elif "functionCall" in part:
            chunks.append(chunk([part]))
    last = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": ""}]},
                "finishReason": candidate["finishReason"],
                "index": 0,
            }
        ],
        "usageMetadata": response["usageMetadata"],
        **head,
    }
    if chunks and "functionCall" in chunks[-1]["candidates"][0]["content"]["parts"][0]:
        # The API sends a call's chunk with the finish reason and the usage.
        ending = chunks[-1]["candidates"][0]
        ending["finishReason"] = candidate["finishReason"]
        chunks[-1]["usageMetadata"] = response["usageMetadata"]
    else:
        chunks.append(last)
    return chunks


def encode_chunk(data: Mapping[str, Any] | str) -> bytes:
    """One SSE event of the stream (``alt=sse``): a ``data:`` line and a blank line."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {payload}\r\n\r\n".encode()


def truncation_point(chunks: list[dict[str, Any]]) -> int:
    """How many chunks to send before cutting a stream: the first one."""
    return min(len(chunks) - 1, 1) if len(chunks) > 1 else 0


def count_tokens(request: Mapping[str, Any]) -> int:
    """The ``countTokens`` answer's ``totalTokens``: the emulator's estimate of the request."""
    from skilltest.emulator.sse import input_tokens

    return input_tokens(request)
