"""OpenAI requests read as Messages requests, so that one set of rules reads every API.

The emulator's :class:`~skilltest.emulator.request_view.RequestView`, its prompt cache and its
token estimates read a request in the Messages API's shape. A Responses or Chat Completions
request is rewritten into that shape at the boundary, keeping what rules match on:

==========================  =====================================  ==============================
Messages                    Responses (``/v1/responses``)          Chat (``/v1/chat/completions``)
==========================  =====================================  ==============================
``system``                  ``instructions``; ``system`` and       ``system`` and ``developer``
                            ``developer`` messages                 messages
user text                   ``user`` messages (``input_text``)     ``user`` messages
assistant text              ``assistant`` messages                 ``assistant`` ``content``
                            (``output_text``), ``reasoning``
``tool_use``                ``function_call``, ``custom_tool_      ``assistant`` ``tool_calls``
                            call``, ``local_shell_call``
``tool_result``             ``*_call_output``                      ``tool`` messages
``tools[].name``            ``tools[].name`` (a namespace's        ``tools[].function.name``
                            tools by their own names; a built-in
                            tool by its ``type``)
==========================  =====================================  ==============================

Consecutive assistant items (a message and the calls after it) make one assistant message, as
one Messages response would, so ``turn`` counts model responses alike in every API; consecutive
tool outputs make one user message. A Gemini API request is read by
:func:`skilltest.emulator.gemini_wire.as_messages_request`. Pure functions; no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from skilltest.model_apis import ApiFamily

_SYSTEM_ROLES = ("system", "developer")
_TEXT_PARTS = ("input_text", "output_text", "text", "refusal", "summary_text", "reasoning_text")


def as_messages_request(api: ApiFamily, body: Mapping[str, Any]) -> Mapping[str, Any]:
    """``body`` of ``api`` as a Messages request (the body itself for ``anthropic``)."""
    if api == "responses":
        return _from_responses(body)
    if api == "chat":
        return _from_chat(body)
    if api == "gemini":
        from skilltest.emulator.gemini_wire import as_messages_request as from_gemini

        return from_gemini(body)
    return body


def _text(content: object) -> str:
    """The text of an OpenAI content value: a string, or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text") or part.get("refusal") or "")
            for part in content
            if isinstance(part, Mapping) and part.get("type", "text") in _TEXT_PARTS
        )
    return ""


def _arguments(raw: object) -> Any:
    """A call's arguments as JSON when they parse, else as the text they are."""
    if not isinstance(raw, str):
        return raw if isinstance(raw, Mapping) else {}
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):
        return {"input": raw}
    return parsed if isinstance(parsed, Mapping) else {"input": parsed}


class _Conversation:
    """Messages built item by item: blocks of one role in a row join one message."""

    def __init__(self) -> None:
        self.system: list[str] = []
        self.messages: list[dict[str, Any]] = []

    def add(self, role: str, block: dict[str, Any], *, join: bool) -> None:
        last = self.messages[-1] if self.messages else None
        if join and last is not None and last["role"] == role and last["joins"]:
            last["content"].append(block)
        else:
            self.messages.append({"role": role, "content": [block], "joins": join})

    def text(self, role: str, text: str) -> None:
        if role in _SYSTEM_ROLES:
            self.system.append(text)
        elif role == "assistant":
            self.add("assistant", {"type": "text", "text": text}, join=True)
        else:
            self.add("user", {"type": "text", "text": text}, join=False)

    def call(self, call_id: object, name: object, arguments: object) -> None:
        block = {"type": "tool_use", "id": str(call_id), "name": str(name), "input": arguments}
        self.add("assistant", block, join=True)

    def result(self, call_id: object, output: object) -> None:
        block = {"type": "tool_result", "tool_use_id": str(call_id), "content": _text(output)}
        self.add("user", block, join=True)

    def request(self, body: Mapping[str, Any], tools: Iterable[str]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": body.get("model"),
            "system": "\n".join(self.system),
            "messages": [{"role": m["role"], "content": m["content"]} for m in self.messages],
            "tools": [{"name": name} for name in tools],
        }
        if isinstance(body.get("metadata"), Mapping):
            request["metadata"] = body["metadata"]
        return request


def _from_responses(body: Mapping[str, Any]) -> dict[str, Any]:
    conversation = _Conversation()
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        conversation.system.append(body["instructions"])
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            conversation.text(str(item.get("role") or "user"), _text(item.get("content")))
        elif kind == "reasoning":
            text = _text(item.get("summary")) or _text(item.get("content"))
            if text:
                conversation.add("assistant", {"type": "thinking", "thinking": text}, join=True)
        elif kind == "function_call":
            conversation.call(
                item.get("call_id"), item.get("name"), _arguments(item.get("arguments"))
            )
        elif kind == "custom_tool_call":
            conversation.call(item.get("call_id"), item.get("name"), {"input": item.get("input")})
        elif kind == "local_shell_call":
            action = item.get("action")
            given = dict(action) if isinstance(action, Mapping) else {}
            conversation.call(item.get("call_id") or item.get("id"), "local_shell", given)
        elif kind.endswith("_call_output"):
            conversation.result(item.get("call_id") or item.get("id"), item.get("output"))
    return conversation.request(body, _responses_tools(body.get("tools")))


def _responses_tools(tools: object) -> Iterable[str]:
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, Mapping):
            continue
        if tool.get("type") == "namespace":
            yield from _responses_tools(tool.get("tools"))
        elif isinstance(tool.get("name"), str):
            yield tool["name"]
        elif isinstance(tool.get("type"), str):
            yield tool["type"]  # a built-in tool: web_search, local_shell, ...


def _from_chat(body: Mapping[str, Any]) -> dict[str, Any]:
    conversation = _Conversation()
    for message in body.get("messages") or []:
        if not isinstance(message, Mapping):
            continue
        role = str(message.get("role") or "user")
        if role == "tool":
            conversation.result(message.get("tool_call_id"), message.get("content"))
            continue
        text = _text(message.get("content"))
        if text or role != "assistant":
            conversation.text(role, text)
        for call in message.get("tool_calls") or [] if role == "assistant" else []:
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping):
                arguments = _arguments(function.get("arguments"))
                conversation.call(call.get("id"), function.get("name"), arguments)
    names = (
        tool["function"]["name"]
        for tool in body.get("tools") or []
        if isinstance(tool, Mapping)
        and isinstance(tool.get("function"), Mapping)
        and isinstance(tool["function"].get("name"), str)
    )
    return conversation.request(body, names)
