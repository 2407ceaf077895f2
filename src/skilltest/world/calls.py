"""What the world saw: every call a fake received and every destination the proxy refused.

These records are what a world scenario is judged on: the fake is asked which writes really
happened instead of trusting what the agent says it did. They hold the request body as parsed;
secrets are redacted where the records are written out, not here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skilltest.fields import field_dict
from skilltest.world.expect import READ_METHODS as READ_METHODS


def is_write(method: str) -> bool:
    """Whether a call with this method counts as a write (anything but GET, HEAD, OPTIONS)."""
    return method.upper() not in READ_METHODS


@dataclass(frozen=True)
class Call:
    """One request a fake received with the agent token (or on a host without auth)."""

    service: str
    """The name of the service whose fake answered."""
    method: str
    """The HTTP method, upper case."""
    host: str
    """The host the request named."""
    path: str
    """The path without the query, as sent but for one trailing ``/`` (``/tickets/INC-1042``)."""
    status: int
    """The status answered; 0 when the fake never answered (a ``timeout`` profile)."""
    at: float
    """``time.monotonic()`` when the fake received it (to tell which user turn it belongs to)."""
    write: bool
    """Whether the method is a write (not GET, HEAD or OPTIONS), whatever the answer was: a
    refused write was still attempted."""
    route: str | None
    """The declared route it matched (``PATCH /tickets/{id}``); ``None`` for an unknown route."""
    body: Any = None
    """The request body parsed as JSON (its text when it is not JSON; ``None`` when empty)."""
    query: str = ""
    """The query string as sent, without ``?`` (``status=open&owner=ana``)."""
    applied: bool = False
    """Whether the call changed the fake's state (a write answered 412 or 404 did not; a
    ``partial`` fault's write did, though it was answered with an error)."""

    def label(self) -> str:
        """``PATCH /tickets/INC-1042``: method and path, without the query."""
        return f"{self.method} {self.path}"

    def to_dict(self) -> dict[str, Any]:
        """The call as JSON-ready data (the control plane's ``/_skilltest/calls``)."""
        return {
            "service": self.service,
            "method": self.method,
            "host": self.host,
            "path": self.path,
            "query": self.query,
            "status": self.status,
            "at": self.at,
            "write": self.write,
            "applied": self.applied,
            "route": self.route,
            "body": self.body,
        }


@dataclass(frozen=True)
class EgressViolation:
    """A destination the world refused: not a declared host, nor the model API."""

    host: str
    """The host as the client named it (an IP literal stays as written)."""
    port: int | None
    """The port asked for, when there was one."""
    scheme: str
    """``https`` (CONNECT), ``http``, or the other scheme that was refused."""
    reason: str
    """Why it was refused, readable (``loopback address 127.0.0.1 (written 2130706433)``)."""
    at: float
    """``time.monotonic()`` when it was refused."""
    url: str = ""
    """The URL or CONNECT target as received, when known."""

    def to_dict(self) -> dict[str, Any]:
        """The violation as JSON-ready data."""
        return field_dict(self)


def mock_call_lines(calls: list[Call]) -> str:
    """The calls mock MCP servers received, one JSON object a line (``server``, ``tool``,
    ``input``): what a ``mock_calls_match`` check or a judge reads."""
    import json

    lines = [
        json.dumps(
            {
                "server": call.host.removeprefix("mcp:"),
                "tool": call.path.split("/", 1)[-1],
                "input": call.body,
            },
            ensure_ascii=False,
            default=str,
        )
        for call in calls
        if call.host.startswith("mcp:")
    ]
    return "\n".join(lines)
