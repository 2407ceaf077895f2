"""Health checks of stdio MCP servers: start each one, ask ``initialize`` and ``tools/list``,
stop it, and say plainly why one fails (with the end of its stderr).

The ``mcp`` SDK is imported inside the functions: commands that never talk to an MCP server do
not pay for importing it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shlex
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TextIO

from skilltest import __version__
from skilltest.errors import McpServerError
from skilltest.plugins.servers import McpServer
from skilltest.redact import known_redactor

STDERR_TAIL_LINES = 20
"""How many of a failing server's last stderr lines its error shows."""
STDERR_TAIL_CHARS = 2000


@dataclass(frozen=True)
class ServerTools:
    """What a server answered to ``initialize`` and ``tools/list``."""

    server: str
    """The server's name."""
    tools: tuple[str, ...]
    """The names of its tools, as ``tools/list`` gave them (every page)."""
    server_info: Mapping[str, Any] = field(hash=False)
    """``serverInfo`` from its ``initialize`` answer (``name``, ``version``, ...)."""
    protocol_version: str = ""
    """The MCP protocol version it agreed to."""
    listings: tuple[Mapping[str, Any], ...] = field(default=(), hash=False, compare=False)
    """Each tool as ``tools/list`` gave it (``name``, ``description``, ``inputSchema``, ...),
    in the same order as ``tools``."""


def _command_line(server: McpServer) -> str:
    if not server.is_local:
        return f"{server.transport} {server.url}"
    return shlex.join([server.command, *server.args])


def _tail(errlog: IO[str]) -> str:
    """The end of a server's stderr, with the secrets the process knows redacted (a server
    that echoes its environment when it fails must not print the caller's key)."""
    errlog.flush()
    errlog.seek(0)
    text = known_redactor()(errlog.read()).rstrip()
    return "\n".join(text.splitlines()[-STDERR_TAIL_LINES:])[-STDERR_TAIL_CHARS:]


def _error(
    server: McpServer, failure: str, stderr: str, fix: str, *, remote: bool = False
) -> McpServerError:
    lines = [f"MCP server {server.name!r} ({_command_line(server)}) {failure}"]
    if server.origin:
        lines.append(f"  declared at {server.origin}")
    if remote:
        pass  # a remote server has no stderr of ours to show
    elif stderr:
        lines.append("  its stderr ends with:")
        lines += [f"    {line}" for line in stderr.splitlines()]
    else:
        lines.append("  it wrote nothing to stderr")
    lines.append(f"  fix: {fix}")
    return McpServerError("\n".join(lines))


def _remote_error(
    server: McpServer, exc: BaseException, step: str, timeout_s: float
) -> McpServerError:
    """Why a remote server could not be used: it is unreachable, refuses, or does not answer."""
    if isinstance(exc, TimeoutError):
        failure = f"did not answer {step} within {timeout_s:g} s"
    else:
        reason = str(exc).strip() or type(exc).__name__
        failure = f"could not be reached for {step}: {reason[:300]}"
    return _error(
        server,
        failure,
        "",
        "the runs connect to it the same way: make it reachable from this machine (and its "
        "headers valid), or declare a local (stdio) server for the tests instead",
        remote=True,
    )


def _offending_line(exc: Exception) -> str:
    # pydantic names the line it could not read as input_value=...
    text = str(exc)
    found = re.search(r"input_value=(.*?), input_type=", text)
    shown = found.group(1) if found else (text.splitlines() or [repr(exc)])[0]
    return shown[:200]


def _leaf(exc: BaseException) -> BaseException:
    """The first exception inside task-group exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


_quiet_lock = threading.Lock()
_quiet_depth = 0
_SDK_LOGGERS = ("mcp", "client")
"""The SDK logs a server's protocol errors itself (``client`` is its session's logger); they
are part of our error instead, and only the CLI prints."""


@contextlib.contextmanager
def _quiet_sdk_logs() -> Iterator[None]:
    global _quiet_depth
    handler = logging.NullHandler()
    with _quiet_lock:
        _quiet_depth += 1
        if _quiet_depth == 1:
            for name in _SDK_LOGGERS:
                logger = logging.getLogger(name)
                logger.addHandler(handler)
                logger.propagate = False
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet_depth -= 1
            if _quiet_depth == 0:
                for name in _SDK_LOGGERS:
                    logger = logging.getLogger(name)
                    for added in [h for h in logger.handlers if isinstance(h, logging.NullHandler)]:
                        logger.removeHandler(added)
                    logger.propagate = True


async def list_tools(
    server: McpServer, *, timeout_s: float = 30.0, cwd: Path | None = None
) -> ServerTools:
    """Asks a server ``initialize`` and ``tools/list``: a stdio server is started and stopped,
    a remote one (``http``: streamable HTTP, ``sse``) is connected to at its ``url`` with its
    ``headers``.

    A stdio server gets this process's environment plus its own ``env``, and runs in ``cwd``
    (this process's working directory when ``None``). It is started in a process group of its
    own, which is stopped (SIGTERM, then SIGKILL) when it does not exit by itself once its stdin
    closes, also after a timeout.

    Raises:
        McpServerError: the server cannot be started or reached, exits or closes its stdout
            before answering, writes what is not JSON-RPC, speaks another protocol version,
            does not answer both requests within ``timeout_s``, or is a WebSocket server;
            with the end of a stdio server's stderr.
    """
    if server.transport == "ws":
        raise _error(
            server,
            "is a WebSocket server, which skilltest cannot connect to",
            "",
            "serve it over http (streamable HTTP) or stdio for the tests, or leave it out of "
            "the suite",
            remote=True,
        )
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.shared.exceptions import MCPError
    from mcp_types import Implementation, PaginatedRequestParams

    not_json: list[str] = []

    async def on_message(message: object) -> None:
        # A line on stdout that is not JSON-RPC reaches the session as an exception.
        if isinstance(message, Exception) and not not_json:
            not_json.append(_offending_line(message))

    @contextlib.asynccontextmanager
    async def transport(errlog: TextIO) -> AsyncIterator[Any]:
        """The client side of the server's transport: a process it starts, or a connection."""
        if server.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            # The transport leaves a client it was given open: this one closes with it.
            async with (
                create_mcp_http_client(headers=dict(server.headers) or None) as client,
                streamable_http_client(server.url, http_client=client) as streams,
            ):
                yield streams
        elif server.transport == "sse":
            from mcp.client.sse import sse_client

            async with sse_client(server.url, headers=dict(server.headers) or None) as streams:
                yield streams
        else:
            params = StdioServerParameters(
                command=server.command,
                args=list(server.args),
                env={**os.environ, **server.env},
                cwd=cwd,
            )
            async with stdio_client(params, errlog=errlog) as streams:
                yield streams

    step = "initialize"
    with (
        tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog,
        _quiet_sdk_logs(),
    ):
        try:
            with anyio.fail_after(timeout_s):
                async with (
                    transport(errlog) as (read, write, *_),
                    ClientSession(
                        read,
                        write,
                        message_handler=on_message,
                        client_info=Implementation(name="skilltest", version=__version__),
                    ) as session,
                ):
                    initialized = await session.initialize()
                    step = "tools/list"
                    listed: list[dict[str, Any]] = []
                    cursor: str | None = None
                    while True:
                        page = await session.list_tools(
                            params=PaginatedRequestParams(cursor=cursor) if cursor else None
                        )
                        listed += [
                            tool.model_dump(mode="json", by_alias=True, exclude_none=True)
                            for tool in page.tools
                        ]
                        cursor = page.next_cursor
                        if not cursor:
                            break
        except Exception as caught:
            exc = _leaf(caught)
            if not server.is_local:
                raise _remote_error(server, exc, step, timeout_s) from None
            stderr = _tail(errlog)
            run_it = f"run `{_command_line(server)}` yourself and make it start"
            if isinstance(exc, TimeoutError):
                failure = f"did not answer {step} within {timeout_s:g} s (stopped)"
                fix = f"{run_it}; a stdio server reads JSON-RPC on stdin and answers on stdout"
                if not_json:
                    failure += f"; it wrote what is not JSON-RPC to stdout: {not_json[0]}"
                    fix = "write only JSON-RPC messages to stdout; log to stderr"
            elif isinstance(exc, OSError):
                failure = f"could not be started: {exc.strerror or exc}"
                fix = (
                    f"check the command {server.command!r}: install it or give its full path "
                    "(it is looked up on PATH)"
                )
            elif isinstance(exc, MCPError):
                failure = f"exited or closed its stdout before answering {step} ({exc})"
                fix = run_it
                if not_json:
                    failure += f"; it wrote what is not JSON-RPC to stdout: {not_json[0]}"
                    fix = "write only JSON-RPC messages to stdout; log to stderr"
            else:
                failure = f"does not speak the MCP protocol skilltest does ({step}: {exc})"
                fix = "use an MCP SDK that supports protocol version 2025-06-18 or later"
            raise _error(server, failure, stderr, fix) from None
    return ServerTools(
        server=server.name,
        tools=tuple(str(tool["name"]) for tool in listed),
        server_info=initialized.server_info.model_dump(mode="json", exclude_none=True),
        protocol_version=initialized.protocol_version,
        listings=tuple(listed),
    )


def probe_servers(
    servers: Sequence[McpServer],
    *,
    timeout_s: float = 30.0,
    cwd: Path | None = None,
    remote: bool = False,
) -> dict[str, ServerTools | McpServerError]:
    """Checks every server at once; each gets its tools or the error that says why not.

    Args:
        remote: Also connect to remote (http, sse, ws) servers; without it they are left out.
    """
    import anyio

    results: dict[str, ServerTools | McpServerError] = {}

    async def probe(server: McpServer) -> None:
        try:
            results[server.name] = await list_tools(server, timeout_s=timeout_s, cwd=cwd)
        except McpServerError as exc:
            results[server.name] = exc

    async def probe_all() -> None:
        async with anyio.create_task_group() as group:
            for server in servers:
                if server.is_local or remote:
                    group.start_soon(probe, server)

    anyio.run(probe_all)
    return {s.name: results[s.name] for s in servers if s.name in results}


def check_servers(
    servers: Sequence[McpServer], *, timeout_s: float = 30.0, cwd: Path | None = None
) -> dict[str, ServerTools]:
    """Starts each local server (or connects to each remote one), asks ``initialize`` and
    ``tools/list``, and stops it: what the runs will need, before the first run.

    Returns:
        The tools of each server, by name.

    Raises:
        McpServerError: for the first server (in the given order) that fails: cannot be started
            or reached, does not answer, exits, or speaks another protocol; with its stderr.
    """
    results = probe_servers(servers, timeout_s=timeout_s, cwd=cwd, remote=True)
    checked: dict[str, ServerTools] = {}
    for name, result in results.items():
        if isinstance(result, McpServerError):
            raise result
        checked[name] = result
    return checked
