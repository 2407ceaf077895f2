"""One ``mocks/<server>/`` folder served as a real MCP server over stdio, every call recorded.

Claude Code starts it from the run's ``--mcp-config``::

    python -m skilltest.evalcases.mock_server --spec SPEC.json

``SPEC.json`` (:func:`write_spec`) names the server, the tools it lists (``_tools.json``'s entries,
or a permissive schema), each tool's responder, the file calls are appended to and, when an agent
answers, the run's relay: a Unix socket in the run's folder where skilltest asks the model
(:mod:`skilltest.scenarios.mocks`). A call is answered as the CLI's stand-ins answer it, one at
a time:

* no responder for the tool: a tool error ``no mock for SERVER/TOOL``;
* a broken ``expect:`` guard: the run is aborted (``input violates expect: ...``);
* a fixed responder: its body with the templates filled in (a tool error with ``error: true``);
* an agent responder: what the relay's model answered (``ERROR:`` a tool error, ``ABORT:`` the
  run aborted).

An aborted call is answered with a tool error that starts ``eval aborted by mock NONCE``, which
the run watches for to stop the agent. Each call is appended to the calls file as one JSON line
(``seq``, ``server``, ``tool``, ``responder``, ``input``, ``verdict``, ``output``, ``ms``) before
it is answered.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skilltest.evalcases.mocks import MockServer

SPEC_VERSION = 1
ABORTED = "eval aborted by mock"
"""How an aborted call's answer starts (then the run's nonce): what stops the run."""
AGENT_FAILED = "mock agent responder failed"
OUTPUT_KEPT = 16_384
"""The most of an answer a call record keeps."""
_RESERVED = (ABORTED, 'MCP server "', "MCP error -32000: Connection closed")


def write_spec(
    server: MockServer,
    path: Path,
    *,
    registered: str,
    nonce: str,
    calls: Path,
    relay: Path | None,
    token: str,
) -> Path:
    """Writes the spec the server process reads and returns its path."""
    data = {
        "schema_version": SPEC_VERSION,
        "server": server.name,
        "registered": registered,
        "nonce": nonce,
        "calls": str(calls),
        "relay": str(relay) if relay is not None else None,
        "token": token,
        "tools": [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": dict(tool.input_schema),
            }
            for tool in server.tools
        ],
        "responders": {name: r.to_dict() for name, r in sorted(server.responders.items())},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def _append(path: Path, record: Mapping[str, Any]) -> None:
    # One write on an append-only file: servers side by side never interleave their lines.
    line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def _sent(text: str) -> str:
    """An answer as sent to the agent: one that could pass for the harness's own words gets a
    ``| `` in front (as the CLI does)."""
    stripped = text.lstrip()
    return f"| {stripped}" if stripped.startswith(_RESERVED) else text


def _ask_relay(spec: Mapping[str, Any], tool: str, arguments: Any) -> tuple[str, str]:
    """An agent responder's answer from the run's relay: ``(verdict, text)``."""
    import socket

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.connect(str(spec["relay"]))
            request = {"token": spec["token"], "server": spec["server"], "tool": tool}
            connection.sendall((json.dumps({**request, "input": arguments}) + "\n").encode())
            with connection.makefile("rb") as answers:
                line = answers.readline()
        answer = json.loads(line)
        return str(answer["verdict"]), str(answer["text"])
    except (OSError, ValueError, KeyError) as exc:
        sys.stderr.write(f"skilltest mock server: the agent relay failed: {exc}\n")
        return "abort", f"{AGENT_FAILED} (harness_unreachable) — see the run's stderr"


def answer(spec: Mapping[str, Any], tool: str, arguments: Any) -> tuple[str, str, str]:
    """``(responder kind, verdict, text)`` for one call."""
    responder = spec["responders"].get(tool)
    if responder is None:
        return "fixed", "tool_error", f"no mock for {spec['server']}/{tool}"
    kind = str(responder["kind"])
    guards = responder.get("expect")
    if guards:
        from skilltest.evalcases.expect import violation

        broken = violation(arguments if isinstance(arguments, dict) else {}, guards)
        if broken is not None:
            return kind, "abort", f"input violates expect: {broken}"
    if kind == "agent":
        if not spec.get("relay"):
            return kind, "tool_error", "agent mock responder called without a harness relay"
        verdict, text = _ask_relay(spec, tool, arguments)
        return kind, verdict, text
    from skilltest.evalcases.expect import render

    filled, problem = render(str(responder["text"]), arguments or {}, Path(responder["base_dir"]))
    if filled is None:
        return kind, "tool_error", problem
    return kind, ("tool_error" if responder.get("is_error") else "ok"), filled


def serve(spec: Mapping[str, Any]) -> None:
    """Serves the mock over stdin and stdout until the client closes stdin."""
    from skilltest.mcp.stdio_server import Tool
    from skilltest.mcp.stdio_server import serve as serve_stdio

    tools = [
        Tool(tool["name"], tool["description"] or "", {"type": "object", **tool["input_schema"]})
        for tool in spec["tools"]
    ]
    sequence = iter(range(1_000_000))

    def call(tool: str, arguments: Mapping[str, Any]) -> tuple[str, bool]:
        # Calls are answered one at a time, so an agent's history is in call order.
        started = time.monotonic()
        kind, verdict, text = answer(spec, tool, dict(arguments))
        output = text if len(text) <= OUTPUT_KEPT else text[:OUTPUT_KEPT] + "…[truncated]"
        _append(
            Path(spec["calls"]),
            {
                "nonce": spec["nonce"],
                "seq": next(sequence),
                "server": spec["server"],
                "registered": spec["registered"],
                "tool": tool,
                "responder": kind,
                "input": dict(arguments),
                "verdict": verdict,
                "output": output,
                "ms": round((time.monotonic() - started) * 1000),
            },
        )
        if verdict == "abort":
            return f"{ABORTED} {spec['nonce']}: {spec['server']}/{tool} — {text}", True
        return _sent(text), verdict != "ok"

    serve_stdio(name=f"eval-mock/{spec['server']}", version="1", tools=tools, call=call)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the mock server; 0 when the client closed the session, 2 for a bad spec."""
    parser = argparse.ArgumentParser(
        prog="python -m skilltest.evalcases.mock_server",
        description="Serve a mocks/<server>/ folder over stdio, recording every call.",
    )
    parser.add_argument("--spec", type=Path, required=True, help="the server's spec (JSON)")
    args = parser.parse_args(argv)
    try:
        spec = json.loads(args.spec.read_text(encoding="utf-8"))
        if spec.get("schema_version") != SPEC_VERSION:
            raise ValueError(f"schema_version {spec.get('schema_version')!r} is not {SPEC_VERSION}")
    except (OSError, ValueError) as exc:
        # stdout is the protocol's; the client logs what a server writes on stderr.
        sys.stderr.write(f"skilltest mock server: cannot read {args.spec}: {exc}\n")
        return 2
    serve(spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
