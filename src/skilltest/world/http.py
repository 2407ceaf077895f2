"""Plain HTTP requests and answers exchanged between the world's proxy and its fakes.

No sockets here: the proxy parses what arrives on the wire into an :class:`HttpRequest`, a
:class:`~skilltest.world.fake.FakeService` turns it into an :class:`HttpResponse`, and the proxy
writes that back (waiting ``delay_s`` first, or never answering when ``hang`` is set).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from types import MappingProxyType
from typing import Any
from urllib.parse import parse_qs, urlsplit

JSON_TYPE = "application/json"
"""The content type of every JSON answer a fake gives."""


def parse_query(raw: str) -> Mapping[str, tuple[str, ...]]:
    """``status=open&owner=ana&owner=bo`` -> ``{"status": ("open",), "owner": ("ana", "bo")}``.

    Blank values are kept (``?owner=`` filters on an empty owner), as a server would.
    """
    parsed = parse_qs(raw, keep_blank_values=True)
    return MappingProxyType({key: tuple(values) for key, values in parsed.items()})


@dataclass(frozen=True)
class HttpRequest:
    """One request as a fake sees it, whatever way it reached the proxy."""

    method: str
    """Upper case: ``GET``, ``PATCH``..."""
    scheme: str
    """``https`` (arrived through CONNECT) or ``http`` (an absolute-form request)."""
    host: str
    """The host the client asked for, lower case, without the port."""
    port: int
    """The port the client asked for (443 or 80 for anything the policy allows)."""
    path: str
    """The path without the query, still percent-encoded (``/tickets/INC-1042``)."""
    query: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Query parameters by name, each with every value given, in order."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Request headers by lower-case name (a repeated header joined with ``, ``)."""
    body: bytes = b""
    """The request body as sent."""
    raw_query: str = ""
    """The query string as sent (without ``?``), for the call record."""

    def header(self, name: str) -> str | None:
        """The value of a header, by name in any case."""
        return self.headers.get(name.lower())

    @classmethod
    def from_url(
        cls,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | str | Any = b"",
    ) -> HttpRequest:
        """A request for an absolute URL, as a client would send it.

        Args:
            method: The HTTP method, in any case.
            url: ``https://host[:port]/path?query``.
            headers: Header names in any case.
            body: Bytes as they are, text encoded as UTF-8, anything else sent as JSON.
        """
        parts = urlsplit(url)
        scheme = parts.scheme.lower() or "https"
        if isinstance(body, str):
            data = body.encode()
        elif isinstance(body, bytes):
            data = body
        else:
            data = json.dumps(body).encode()
        return cls(
            method=method.upper(),
            scheme=scheme,
            host=(parts.hostname or "").lower(),
            port=parts.port or (443 if scheme == "https" else 80),
            path=parts.path or "/",
            query=parse_query(parts.query),
            headers={name.lower(): value for name, value in (headers or {}).items()},
            body=data,
            raw_query=parts.query,
        )


@dataclass(frozen=True)
class HttpResponse:
    """One answer of a fake, for the proxy to send."""

    status: int
    """The HTTP status code."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Response headers (``Content-Length`` is the proxy's to add)."""
    body: bytes = b""
    """The response body."""
    delay_s: float = 0.0
    """Seconds to wait before answering (a profile's ``delay_ms``)."""
    hang: bool = False
    """Never answer: the client's own timeout decides what happens (a profile's ``timeout``)."""

    def json(self) -> Any:
        """The body parsed as JSON.

        Raises:
            ValueError: the body is not JSON (a ``malformed`` profile's answer).
        """
        return json.loads(self.body)


def json_response(
    status: int, payload: Any, headers: Mapping[str, str] | None = None
) -> HttpResponse:
    """An answer whose body is ``payload`` as JSON (no body at all when ``payload`` is None)."""
    merged = {"Content-Type": JSON_TYPE} if payload is not None else {}
    merged.update(headers or {})
    body = b"" if payload is None else json.dumps(payload, ensure_ascii=False).encode()
    return HttpResponse(status=status, headers=merged, body=body)


def error_phrase(status: int) -> str:
    """The reason phrase a fake answers in `{"error": ...}` when nothing better is given."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "error"
