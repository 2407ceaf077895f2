"""A mock MCP server from a world file's ``mcp:`` section: canned answers, every call recorded.

Claude Code starts one per mock from the run's ``--mcp-config``
(:meth:`~skilltest.world.instance.WorldInstance.mcp_servers` writes the entries)::

    python -m skilltest.world.mcp_mock --spec SPEC.json --calls CALLS.jsonl

``SPEC.json`` is the mock as :func:`mock_to_dict` writes it. The server speaks MCP over stdio
(:mod:`skilltest.mcp.stdio_server`): ``tools/list`` answers the mock's tools (name,
description, input schema); ``tools/call`` answers the first response whose every ``match``
argument equals the call's (JSON equality: ``"7"`` is not ``7``, ``true`` is not ``1``), its
``result`` sent as text (a result that is not a string as JSON text). A call no response
matches, or a tool the mock does not have, is answered with a tool error (``isError``) worded
as a real server's; the run's warnings name the server, the tool and the arguments, and where in
the world file to add a response (:attr:`McpAnswer.hint`).

Every call, matched or not, is appended to ``CALLS.jsonl`` as one JSON line
(:meth:`~skilltest.world.calls.Call.to_dict`) before it is answered, so a run that ends right
after a call still has it. The world reads the file back (:func:`read_calls`) and judges these
calls with the fakes' HTTP calls:

* method ``mcp``, path ``SERVER/TOOL`` and host ``mcp:SERVER``, so a call is named
  ``mcp SERVER/TOOL`` as ``writes``, ``forbidden`` and ``claims`` write it
  (:mod:`skilltest.world.expect`);
* status 200 when a response matched, 404 when none did (the call did not take effect);
* ``write`` as the tool declares (``writes: true``), matched or not: a refused write was still
  attempted; ``body`` the arguments; ``route`` ``mcp SERVER/TOOL`` for a declared tool;
* ``at`` is ``time.monotonic()`` in the server's process, which is the clock the run's turn
  times use (system-wide on Linux and macOS).

Serving imports nothing beyond the standard library and the world's model, so a mock starts in
a fraction of a second.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skilltest.errors import WorldError, check_schema_version
from skilltest.world.calls import Call
from skilltest.world.model import McpMock, McpTool

SPEC_VERSION = 1
"""Version of the spec file :func:`mock_to_dict` writes."""

METHOD = "mcp"
"""The method of every MCP call record, as call names write it (``mcp SERVER/TOOL``)."""
MATCHED = 200
"""The status of a call a response answered."""
UNMATCHED = 404
"""The status of a call no response answered (or of a tool the mock does not have)."""

_SHOWN_CHARS = 300


# --- the spec file ----------------------------------------------------------------------------


def _json_ready(value: Any) -> Any:
    # YAML reads 2024-05-01 as a date; an agent sends it as the string it looks like.
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")


def mock_to_dict(mock: McpMock) -> dict[str, Any]:
    """The mock as JSON-ready data (the server's spec file)."""
    data = {
        "schema_version": SPEC_VERSION,
        "name": mock.name,
        "location": mock.location,
        "tools": [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": dict(tool.input_schema),
                "responses": [
                    {"match": dict(match), "result": result} for match, result in tool.responses
                ],
                "writes": tool.writes,
                "location": tool.location,
            }
            for tool in mock.tools
        ],
    }
    # A round trip through JSON text: dates become strings, keys become strings.
    loaded: dict[str, Any] = json.loads(json.dumps(data, default=_json_ready))
    return loaded


def mock_from_dict(data: Mapping[str, Any]) -> McpMock:
    """Reads what :func:`mock_to_dict` wrote.

    Raises:
        WorldError: the data was written by another version.
    """
    check_schema_version(
        data,
        SPEC_VERSION,
        "mock MCP spec",
        error=WorldError,
        fix="run the world with the skilltest that wrote the spec",
    )
    return McpMock(
        name=str(data["name"]),
        location=str(data.get("location", "")),
        tools=tuple(
            McpTool(
                name=str(tool["name"]),
                description=str(tool.get("description", "")),
                input_schema=dict(tool.get("input_schema") or {"type": "object"}),
                responses=tuple(
                    (dict(item.get("match") or {}), item.get("result"))
                    for item in tool.get("responses", ())
                ),
                writes=bool(tool.get("writes")),
                location=str(tool.get("location", "")),
            )
            for tool in data.get("tools", ())
        ),
    )


def write_spec(mock: McpMock, path: Path) -> Path:
    """Writes the mock's spec file (creating its folder) and returns its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(mock_to_dict(mock), indent=2), encoding="utf-8")
    return path


# --- answering a call (pure) ------------------------------------------------------------------


def same(expected: Any, actual: Any) -> bool:
    """JSON equality: ``True`` is not ``1`` and ``"7"`` is not ``7``; ``1`` is ``1.0``."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return expected == actual
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return expected.keys() == actual.keys() and all(
            same(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(map(same, expected, actual))
    return type(expected) is type(actual) and bool(expected == actual)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _shown(arguments: Mapping[str, Any]) -> str:
    text = json.dumps(dict(arguments), ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


@dataclass(frozen=True)
class McpAnswer:
    """What the mock answers one ``tools/call`` and how the call is recorded."""

    text: str
    """The text content sent back: the matched result, or an error worded as a real server's
    (the agent is not told it talks to a mock)."""
    is_error: bool
    """Whether it is a tool error (no response matched, or no such tool)."""
    call: Call
    """The call as the world records it."""
    hint: str = ""
    """For the suite's author, when no response answered: the server, the tool, the arguments
    and where in the world file to add a response (a run warning, never sent to the agent)."""


def answer(mock: McpMock, name: str, arguments: Mapping[str, Any], at: float) -> McpAnswer:
    """Answers a call of tool ``name`` with ``arguments`` received at ``at``.

    Args:
        mock: The mock server.
        name: The tool called (without the ``mcp__SERVER__`` prefix the agent sees).
        arguments: The call's arguments.
        at: ``time.monotonic()`` when it was received.
    """
    tool = next((tool for tool in mock.tools if tool.name == name), None)
    label = f"{mock.name}/{name}"
    shown = _shown(arguments)
    if tool is None:
        known = ", ".join(tool.name for tool in mock.tools) or "none"
        hint = (
            f"mock MCP server {mock.name!r} has no tool {name!r} (called with {shown}); its "
            f"tools: {known}; declare it under {mock.location}/tools"
        )
        text = f"Unknown tool: {name}"
        matched: Any = None
        status = UNMATCHED
    else:
        found = next(
            (
                (result,)
                for match, result in tool.responses
                if all(
                    key in arguments and same(value, arguments[key]) for key, value in match.items()
                )
            ),
            None,
        )
        if found is None:
            matches = "; ".join(_shown(match) for match, _ in tool.responses) or "none"
            hint = (
                f"no response of mock MCP server {mock.name!r} matches the call of tool "
                f"{name!r} with arguments {shown} (the responses match: {matches}); add a "
                f"response whose match these arguments meet under {tool.location}/responses"
            )
            text = f"Not found: {name} has no result for {shown}"
            status = UNMATCHED
        else:
            matched = found[0]
            text, hint = _text(matched), ""
            status = MATCHED
    call = Call(
        service=mock.name,
        method=METHOD,
        host=f"mcp:{mock.name}",
        path=label,
        status=status,
        at=at,
        write=tool.writes if tool is not None else False,
        route=f"{METHOD} {mock.name}/{tool.name}" if tool is not None else None,
        body=dict(arguments),
    )
    return McpAnswer(text=text, is_error=status != MATCHED, call=call, hint=hint)


# --- the call record --------------------------------------------------------------------------


def append_call(path: Path, call: Call) -> None:
    """Appends one call as a JSON line (one ``write`` on an append-only file, so servers side
    by side never interleave their lines)."""
    line = json.dumps(call.to_dict(), ensure_ascii=False, default=str) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def read_calls(path: Path) -> list[Call]:
    """The calls a mock recorded in ``path``; none when it does not exist.

    A line cut short (a server stopped mid-write) is left out: that call was never answered.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    calls = []
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            continue
        try:
            data = json.loads(line)
            calls.append(Call(**data))
        except (ValueError, TypeError, RecursionError):
            continue
    return calls


# --- serving ----------------------------------------------------------------------------------


def serve(mock: McpMock, calls: Path) -> None:
    """Serves ``mock`` over stdin and stdout until the client closes stdin, recording each call
    into ``calls``."""
    from skilltest.mcp.stdio_server import Tool
    from skilltest.mcp.stdio_server import serve as serve_stdio

    def call(tool: str, arguments: Mapping[str, Any]) -> tuple[str, bool]:
        answered = answer(mock, tool, dict(arguments), time.monotonic())
        append_call(calls, answered.call)
        return answered.text, answered.is_error

    tools = [
        Tool(tool.name, tool.description or "", dict(tool.input_schema)) for tool in mock.tools
    ]
    serve_stdio(name=mock.name, version="1", tools=tools, call=call)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m skilltest.world.mcp_mock",
        description="Serve a world's mock MCP server over stdio, recording every call.",
    )
    parser.add_argument("--spec", type=Path, required=True, help="the mock's spec (JSON)")
    parser.add_argument("--calls", type=Path, required=True, help="where calls are appended")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the mock server; 0 when the client closed the session, 2 for a bad spec."""
    args = _parser().parse_args(argv)
    try:
        mock = mock_from_dict(json.loads(args.spec.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, WorldError) as exc:
        # stdout is the protocol's; the client logs what a server writes on stderr.
        sys.stderr.write(f"skilltest mock MCP server: cannot read {args.spec}: {exc}\n")
        return 2
    serve(mock, args.calls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
