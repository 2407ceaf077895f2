"""A small MCP server over stdio for the mocks a run starts: tools only, nothing imported.

A mock MCP server lives for one run and answers a handful of calls, so what it costs is its start:
the ``mcp`` SDK's server takes about 1.5 CPU-seconds to import (pydantic models of the whole
protocol), more than the calls it answers. This one speaks the part of the protocol a tools-only
server needs, in the standard library alone, over the stdio transport (one JSON-RPC message per
line, UTF-8):

* ``initialize``: the version the client asks for when it is one of :data:`PROTOCOL_VERSIONS`,
  else the newest of them; the ``tools`` capability; ``serverInfo``;
* ``tools/list``: the tools (``name``, ``description``, ``inputSchema``), in one page;
* ``tools/call``: what the server's ``call`` answers, as one text block (``isError`` when it says
  so);
* ``ping``: an empty result;
* notifications (``notifications/initialized``, ``notifications/cancelled``) and answers to
  requests it never sent are read and dropped; any other request gets JSON-RPC's "method not
  found" (-32601), a line that is not JSON "parse error" (-32700).

Requests are answered one at a time, in the order they came, so a mock's call log is in the
order of its answers. The server ends when the client closes stdin.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The protocol versions answered as asked; a client asking another gets the newest."""

Call = Callable[[str, Mapping[str, Any]], tuple[str, bool]]
"""A tool call's answer: ``(text, is_error)`` for a tool name and its arguments."""


@dataclass(frozen=True)
class Tool:
    """A tool as ``tools/list`` shows it."""

    name: str
    """The tool's name."""
    description: str = ""
    """What the tool does; left out of the listing when empty."""
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    """The JSON Schema of its arguments (an object schema)."""

    def listed(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "inputSchema": dict(self.input_schema)}
        if self.description:
            entry["description"] = self.description
        return entry


def _result(message_id: Any, result: Mapping[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message_id, "result": dict(result)}


def _error(message_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": message}}


def respond(
    message: Any, *, name: str, version: str, tools: Sequence[Tool], call: Call
) -> dict[str, Any] | None:
    """The answer to one message from the client, or ``None`` for a message that has none."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return _error(None, -32600, "invalid request: not a JSON-RPC 2.0 message")
    method = message.get("method")
    if "id" not in message or not isinstance(method, str):
        return None  # a notification, or the client's answer to a request never sent
    message_id = message["id"]
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        return _result(
            message_id,
            {
                "protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": name, "version": version},
            },
        )
    if method == "ping":
        return _result(message_id, {})
    if method == "tools/list":
        return _result(message_id, {"tools": [tool.listed() for tool in tools]})
    if method == "tools/call":
        tool = params.get("name")
        if not isinstance(tool, str):
            return _error(message_id, -32602, "invalid params: tools/call needs a tool name")
        arguments = params.get("arguments")
        text, is_error = call(tool, arguments if isinstance(arguments, dict) else {})
        return _result(
            message_id, {"content": [{"type": "text", "text": text}], "isError": is_error}
        )
    return _error(message_id, -32601, f"method not found: {method}")


def serve(
    *,
    name: str,
    version: str,
    tools: Sequence[Tool],
    call: Call,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> None:
    """Answers the client on ``stdin``/``stdout`` (the process's own by default) until the
    client closes ``stdin``."""
    source = stdin if stdin is not None else sys.stdin.buffer
    sink = stdout if stdout is not None else sys.stdout.buffer
    for line in source:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            answer: dict[str, Any] | None = _error(None, -32700, "parse error: not JSON")
        else:
            answer = respond(message, name=name, version=version, tools=tools, call=call)
        if answer is not None:
            sink.write(json.dumps(answer, ensure_ascii=False).encode("utf-8") + b"\n")
            sink.flush()
