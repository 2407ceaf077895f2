"""The mocks' stdio MCP server: what a client gets for each message, and that it ends at EOF."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

import pytest

from skilltest.mcp.stdio_server import PROTOCOL_VERSIONS, Tool, respond, serve

TOOLS = [Tool("search", "Search the logs", {"type": "object", "properties": {"q": {}}}), Tool("x")]


def call(tool: str, arguments: Any) -> tuple[str, bool]:
    return (f"{tool}:{json.dumps(arguments)}", tool == "fail")


def answer(message: Any) -> Any:
    return respond(message, name="eval-mock/logs", version="1", tools=TOOLS, call=call)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18"}},
            {"jsonrpc": "2.0", "id": 1, "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "eval-mock/logs", "version": "1"}}},
        ),
        (
            {"jsonrpc": "2.0", "id": "a", "method": "initialize",
             "params": {"protocolVersion": "1999-01-01"}},
            {"jsonrpc": "2.0", "id": "a", "result": {
                "protocolVersion": PROTOCOL_VERSIONS[-1],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "eval-mock/logs", "version": "1"}}},
        ),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, None),
        ({"jsonrpc": "2.0", "id": 7, "result": {}}, None),
        ({"jsonrpc": "2.0", "id": 2, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "result": {}}),
        (
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 3, "result": {"tools": [
                {"name": "search", "description": "Search the logs",
                 "inputSchema": {"type": "object", "properties": {"q": {}}}},
                {"name": "x", "inputSchema": {"type": "object"}}]}},
        ),
        (
            {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
             "params": {"name": "search", "arguments": {"q": "5xx"}}},
            {"jsonrpc": "2.0", "id": 4, "result": {
                "content": [{"type": "text", "text": 'search:{"q": "5xx"}'}], "isError": False}},
        ),
        (
            {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "fail"}},
            {"jsonrpc": "2.0", "id": 5, "result": {
                "content": [{"type": "text", "text": "fail:{}"}], "isError": True}},
        ),
        (
            {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {}},
            {"jsonrpc": "2.0", "id": 6, "error": {
                "code": -32602, "message": "invalid params: tools/call needs a tool name"}},
        ),
        (
            {"jsonrpc": "2.0", "id": 8, "method": "resources/list"},
            {"jsonrpc": "2.0", "id": 8, "error": {
                "code": -32601, "message": "method not found: resources/list"}},
        ),
        (
            [1, 2],
            {"jsonrpc": "2.0", "id": None, "error": {
                "code": -32600, "message": "invalid request: not a JSON-RPC 2.0 message"}},
        ),
    ],
)  # fmt: skip
def test_each_message_gets_the_answer_a_client_expects(message, expected):
    assert answer(message) == expected


def test_lines_are_answered_in_order_and_a_line_that_is_not_json_is_a_parse_error():
    lines = [
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n',
        b"\n",
        b"{not json\n",
        b'{"jsonrpc": "2.0", "method": "notifications/cancelled"}\n',
        b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x"}}\n',
    ]
    out = io.BytesIO()
    serve(name="m", version="1", tools=TOOLS, call=call, stdin=io.BytesIO(b"".join(lines)),
          stdout=out)  # fmt: skip
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error: not JSON"}},
        {"jsonrpc": "2.0", "id": 2, "result": {
            "content": [{"type": "text", "text": "x:{}"}], "isError": False}},
    ]  # fmt: skip


def test_a_mock_server_process_loads_no_mcp_sdk_nor_any_client_library():
    code = (
        "import sys, skilltest.evalcases.mock_server, skilltest.world.mcp_mock;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', "
        "'pydantic', 'anyio', 'anthropic', 'httpx')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
