"""MCP server declarations: a plugin's ``.mcp.json`` and ``mcpServers``, a suite's
``config.mcp_servers``, and the ``--mcp-config`` document Claude Code reads."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from skilltest.errors import InputError, PluginError
from skilltest.names import NAME_RULE, check_name
from skilltest.suite.loader import json_pointer

PLUGIN_ROOT_VARIABLE = "${CLAUDE_PLUGIN_ROOT}"
"""Stands for the plugin's folder in its MCP server and hook declarations."""

Transport = Literal["stdio", "http", "sse", "ws"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "http", "sse", "ws")
"""The ``type`` values of an MCP server in Claude Code 2.1.328 (``stdio`` when left out)."""


@dataclass(frozen=True)
class McpServer:
    """One MCP server as Claude Code would start it."""

    name: str
    """The server's name (its key in ``mcpServers``); tools are ``mcp__<name>__<tool>``."""
    command: str
    """The program to run, ``${CLAUDE_PLUGIN_ROOT}`` already expanded; empty for a remote
    server."""
    args: tuple[str, ...] = ()
    """Its arguments, ``${CLAUDE_PLUGIN_ROOT}`` already expanded."""
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Variables added to the environment it starts with."""
    origin: str = ""
    """Where it was declared, as ``file#/json/pointer`` (``.../.mcp.json#/mcpServers/x``,
    ``.../plugin.json#/mcpServers/x``, ``suite.yaml#/config/mcp_servers/x``)."""
    transport: Transport = "stdio"
    """``stdio`` for a local process; ``http``, ``sse`` or ``ws`` for a remote server."""
    url: str = ""
    """A remote server's address."""
    headers: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Headers sent to a remote server."""
    always_load: bool | None = None
    """Claude Code's ``alwaysLoad``: ``True`` puts the server's tools in every request instead
    of deferring them behind the ToolSearch tool (2.1.328 defers MCP tools by default, so a
    model sees them only after searching); ``None`` leaves the CLI's default."""

    @property
    def is_local(self) -> bool:
        """Whether skilltest can start it (a stdio server) to check it."""
        return self.transport == "stdio"

    def to_config(self) -> dict[str, Any]:
        """The server's entry in a ``--mcp-config`` document."""
        config: dict[str, Any]
        if self.is_local:
            config = {"command": self.command, "args": list(self.args), "env": dict(self.env)}
        else:
            config = {"type": self.transport, "url": self.url}
            if self.headers:
                config["headers"] = dict(self.headers)
        if self.always_load is not None:
            config["alwaysLoad"] = self.always_load
        return config


def mcp_config(servers: Iterable[McpServer]) -> dict[str, Any]:
    """The ``--mcp-config`` document for ``servers`` (a later server of the same name wins)."""
    return {"mcpServers": {server.name: server.to_config() for server in servers}}


def _expand(value: str, base: Path) -> str:
    return value.replace(PLUGIN_ROOT_VARIABLE, str(base))


def _place(origin: str, *parts: object) -> str:
    pointer = json_pointer(parts)
    return f"{origin}{pointer}" if "#" in origin else f"{origin}#{pointer}"


SERVER_SHAPE = (
    '{"command": "...", "args": ["..."], "env": {"NAME": "value"}} for a local (stdio) server, '
    'or {"type": "http", "url": "..."} for a remote one'
)


def _strings(
    value: object, where: str, what: str, error: type[InputError]
) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise error(f"{what} must be a list of strings", location=where, fix=f"write {what}: [...]")
    _texts(enumerate(value), where, "every argument is passed to the program as text", error)
    return tuple(value)


def _string_map(value: object, where: str, what: str, error: type[InputError]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise error(
            f"{what} must be an object of names to strings",
            location=where,
            fix=f'write {what}: {{"NAME": "value"}}',
        )
    _texts(value.items(), where, "environment variables and headers are text", error)
    return dict(value)


def _texts(
    entries: Iterable[tuple[object, object]], where: str, why: str, error: type[InputError]
) -> None:
    """Refuses the first entry (index or key, item) whose item is not a string."""
    for key, item in entries:
        if not isinstance(item, str):
            raise error(
                f"{item!r} is not a string", location=f"{where}/{key}", fix=f"quote it: {why}"
            )


def _server(name: str, spec: object, origin: str, base: Path, error: type[InputError]) -> McpServer:
    where = _place(origin, name)
    if not isinstance(spec, dict):
        raise error(
            f"the MCP server {name!r} is not an object", location=where, fix=f"write {SERVER_SHAPE}"
        )
    always_load = spec.get("alwaysLoad")
    if always_load is not None and not isinstance(always_load, bool):
        raise error(
            f"{always_load!r} is not true or false",
            location=f"{where}/alwaysLoad",
            fix="write alwaysLoad: true (tools in every request) or false (deferred)",
        )
    transport = spec.get("type", "stdio")
    if transport not in TRANSPORTS:
        raise error(
            f"unknown MCP server type {transport!r}",
            location=f"{where}/type",
            fix=f"one of {', '.join(TRANSPORTS)} (leave it out for a local server)",
        )
    if transport != "stdio":
        url = spec.get("url")
        if not isinstance(url, str) or not url:
            raise error(
                f"the {transport} server {name!r} has no url",
                location=where,
                fix='add "url": "https://..."',
            )
        headers = _string_map(spec.get("headers"), f"{where}/headers", "headers", error)
        return McpServer(
            name=name,
            command="",
            origin=where,
            transport=transport,
            url=url,
            headers=headers,
            always_load=always_load,
        )
    command = spec.get("command")
    if not isinstance(command, str) or not command.strip():
        raise error(
            f"the MCP server {name!r} has no command",
            location=where,
            fix=f"write {SERVER_SHAPE}",
        )
    args = _strings(spec.get("args"), f"{where}/args", "args", error) or ()
    env = _string_map(spec.get("env"), f"{where}/env", "env", error)
    return McpServer(
        name=name,
        command=_expand(command, base),
        args=tuple(_expand(arg, base) for arg in args),
        env={key: _expand(value, base) for key, value in env.items()},
        origin=where,
        always_load=always_load,
    )


def mcp_servers_from(
    mapping: object, origin: str, base: Path, *, error: type[InputError] = PluginError
) -> tuple[McpServer, ...]:
    """The servers of an ``{NAME: {command, args, env}}`` mapping.

    ``${CLAUDE_PLUGIN_ROOT}`` in a command, argument or variable becomes ``base``. Other
    relative commands and paths stay as written: they are resolved against the folder the
    server runs in.

    Args:
        mapping: The parsed mapping (``None`` for none).
        origin: Where the mapping is, as ``file#/pointer``; each server's origin adds its name.
        base: The folder ``${CLAUDE_PLUGIN_ROOT}`` stands for (a plugin's folder).
        error: The class of error raised (``SuiteError`` for a suite).

    Raises:
        InputError: (of class ``error``) a server that is not an object, has no command (or no
            url for a remote one), or has arguments or variables that are not strings.
    """
    if mapping is None:
        return ()
    if not isinstance(mapping, dict):
        raise error(
            "MCP servers must be an object of servers by name",
            location=_place(origin),
            fix=f'write {{"<name>": {SERVER_SHAPE}}}',
        )
    servers = []
    for name, spec in mapping.items():
        # A server's name becomes file names of a run (its recorded exchanges, its log).
        check_name(
            name,
            what="the MCP server name",
            location=_place(origin, name) if isinstance(name, str) else _place(origin),
            error=error,
            fix=f"name each server with {NAME_RULE}, e.g. my-server",
        )
        servers.append(_server(name, spec, origin, base, error))
    return tuple(servers)


def mcp_servers_in_document(
    data: object, path: Path, base: Path, *, error: type[InputError] = PluginError
) -> tuple[McpServer, ...]:
    """The servers of an MCP configuration file (``.mcp.json``, a ``--mcp-config`` file):
    ``{"mcpServers": {...}}``, or the mapping of servers itself as some plugins write it.

    Raises:
        InputError: (of class ``error``) as :func:`mcp_servers_from`.
    """
    if isinstance(data, dict) and isinstance(data.get("mcpServers"), dict):
        return mcp_servers_from(data["mcpServers"], f"{path}#/mcpServers", base, error=error)
    if isinstance(data, dict) and "mcpServers" not in data:
        return mcp_servers_from(data, f"{path}#", base, error=error)
    raise error(
        "expected an object of MCP servers",
        location=f"{path}#/mcpServers" if isinstance(data, dict) else f"{path}#",
        fix=f'write {{"mcpServers": {{"<name>": {SERVER_SHAPE}}}}}',
    )
