"""The recording point, and the replaying one: an HTTP proxy on loopback in front of the model API.

Both the Anthropic SDK and the claude CLI honour ``ANTHROPIC_BASE_URL`` (the OpenAI SDK, Codex
and OpenCode a provider's base URL), so one proxy in front of
the upstream (the live API, a gateway, or the emulator) sees every model exchange of a run,
whoever sends it: the main conversation, the CLI's side requests, ``count_tokens``. Each request
is forwarded as it came (credentials included, never stored), the answer is passed back as it
comes (a stream chunk by chunk, so the client sees the upstream's own framing and timing), and
the exchange is handed to ``on_exchange``: the request body and the response as status, a few
headers, and either the JSON body or the server-sent events in order. The proxy also notes
whether an answer carried the skilltest emulator's mark (:meth:`RecordingProxy.answered_by`):
what answered, whatever the run was told it talks to.

A proxy serves one run (``run``), or several when clients name theirs in an
``x-skilltest-run`` header, which is stripped before forwarding.

A request is only ever sent to the upstream's own host: a target that is not a path (an
absolute URL, ``@host``) is refused with HTTP 400. Given ``authorise``, the proxy is a
credential point (:mod:`skilltest.credentials`): the headers of each request pass through it
first, and a request it refuses is answered with HTTP 401 and never forwarded.

**Replaying.** Given a :class:`~skilltest.replay.match.Player` (one repetition of a cassette),
the proxy answers from it instead: a recorded JSON answer as it was, a recorded stream as its
events with the same framing. A request the cassette does not hold is a *miss*: without an
upstream it is refused with HTTP 400 and the miss's explanation (the CLI does not retry a 400),
and the miss is kept for the run's result; with an upstream (``--record-missing``) that request
and every later one of the run go to the upstream and are recorded, after the replayed ones.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from skilltest.loopback import Listener, LocalServer, read_request_body
from skilltest.transcript.origin import (
    CASSETTE,
    EMULATOR_HEADER,
    RULE_HEADER,
    AnsweredBy,
    ScriptRule,
    emulator_mark,
    first_each,
    script_rule,
)

RUN_HEADER = "x-skilltest-run"
"""The header naming the run a request belongs to (stripped before forwarding)."""

DEFAULT_UPSTREAM = "https://api.anthropic.com"
"""Where the model API is when ``ANTHROPIC_BASE_URL`` says nothing else."""

KEPT_HEADERS = (
    "content-type",
    "retry-after",
    "retry-after-ms",
    "request-id",
    "x-should-retry",
    EMULATOR_HEADER,
    RULE_HEADER,
)
"""Response headers a cassette keeps (never a credential, never a cookie): the emulator's mark
among them, so that a replay shows what answered the recording."""

_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
    }
)


@dataclass(frozen=True)
class RecordedExchange:
    """One request through the proxy and what the upstream answered."""

    run: str | None
    """The run it belongs to: the proxy's own, or the client's ``x-skilltest-run``."""
    method: str
    """HTTP method."""
    path: str
    """Path without the query string (``/v1/messages``)."""
    body: Any
    """The request's JSON body, or ``None``."""
    response: dict[str, Any]
    """``{"status", "headers", "body"}`` for a JSON answer, ``{"status", "headers", "events"}``
    (``[[event, data], ...]``) for a stream; ``status`` 0 when the upstream could not be reached
    (``error`` says why)."""
    replayed: bool = False
    """Whether the answer came from the cassette rather than the upstream."""


def sse_events(chunks: Iterator[bytes]) -> Iterator[tuple[bytes, list[tuple[str, str]]]]:
    """Passes each chunk through and, with it, the server-sent events it completed."""
    pending = b""
    for chunk in chunks:
        pending += chunk
        done: list[tuple[str, str]] = []
        while True:
            cut = _event_end(pending)
            if cut is None:
                break
            block, pending = pending[: cut[0]], pending[cut[1] :]
            event = _parse_event(block.decode("utf-8", errors="replace"))
            if event is not None:
                done.append(event)
        yield chunk, done


def _event_end(buffer: bytes) -> tuple[int, int] | None:
    ends = [(i, i + len(sep)) for sep in (b"\n\n", b"\r\n\r\n") if (i := buffer.find(sep)) >= 0]
    return min(ends) if ends else None


def _parse_event(block: str) -> tuple[str, str] | None:
    name, data = "message", []
    for line in block.splitlines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
    return (name, "\n".join(data)) if data or name != "message" else None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Listener[RecordingProxy]

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: exchanges are recorded, not logged."""

    def do_POST(self) -> None:
        self._forward()

    do_GET = do_HEAD = do_PUT = do_PATCH = do_DELETE = do_POST

    def _forward(self) -> None:
        proxy = self.server.owner
        raw = read_request_body(self)
        run = self.headers.get(RUN_HEADER) or proxy.run
        if proxy.player is not None and not proxy.live:
            if self._replay(raw, run):
                return
            if proxy.upstream is None:
                return
        headers = {
            key: value
            for key, value in self.headers.items()
            if key.lower() not in _HOP_BY_HOP and key.lower() != RUN_HEADER
        }
        headers["accept-encoding"] = "identity"  # the recording must see what the client sees
        assert proxy.upstream is not None
        url = proxy.upstream.rstrip("/") + self.path
        if not _same_origin(url, proxy.upstream):
            self._send_json(400, _error(400, f"{proxy.name}: not a path: {self.path[:80]!r}"))
            return
        if proxy.authorise is not None:
            authorised = proxy.authorise(headers)
            if authorised is None:
                message = f"{proxy.name}: the request does not carry this run's placeholder key"
                self._send_json(401, _error(401, message))
                return
            headers = authorised
        try:
            body = json.loads(raw) if raw else None
        except (ValueError, RecursionError):
            body = None
        path = urlsplit(self.path).path
        recorded = False

        def record(response: dict[str, Any]) -> None:
            # Called before the client has the end of its answer: a run whose last answer
            # has arrived has all its exchanges recorded, and its repetition can be written.
            nonlocal recorded
            recorded = True
            proxy.record(RecordedExchange(run, self.command, path, body, response))

        try:
            with proxy.client.stream(
                self.command, url, headers=headers, content=raw or None
            ) as upstream:
                self._relay(upstream, record)
        except Exception as exc:  # any transport failure is the client's 502
            if recorded:  # the client went away after its answer was recorded
                return
            message = f"skilltest recording proxy: cannot reach {proxy.upstream}: {exc}"
            error = {"type": "error", "error": {"type": "api_error", "message": message}}
            data = json.dumps(error).encode()
            record({"status": 0, "headers": {}, "body": None, "error": str(exc)})
            with contextlib.suppress(OSError):
                self.send_response(502)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

    def _replay(self, raw: bytes, run: str | None) -> bool:
        """Answers from the cassette; ``False`` when the run goes live from here on."""
        proxy = self.server.owner
        path = urlsplit(self.path).path
        if self.command in ("HEAD", "GET"):
            # The CLI's connectivity check and other reads: nothing a model answers.
            status = 200 if path in ("/", "/api/hello", "/health") else 404
            self._send_json(status, {} if status == 200 else _error(404, f"no route {path}"))
            return True
        try:
            body = json.loads(raw) if raw else None
        except (ValueError, RecursionError):
            body = None
        assert proxy.player is not None
        answer = proxy.player.answer(proxy.channel_of(path), proxy.normalise(body, path))
        if isinstance(answer, proxy.exchange_type):
            response: dict[str, Any] = answer.response  # type: ignore[attr-defined]
            proxy.record(RecordedExchange(run, self.command, path, body, response, replayed=True))
            self._send_recorded(response)
            return True
        proxy.misses.append(answer)
        if proxy.upstream is not None:
            proxy.live = True
            return False
        self._send_json(400, _error(400, answer.message))
        return True

    def _send_recorded(self, response: Mapping[str, Any]) -> None:
        status = int(response.get("status") or 200)
        headers = dict(response.get("headers") or {})
        events = response.get("events")
        self.send_response(status)
        for key, value in headers.items():
            if key.lower() != "content-length":
                self.send_header(key, str(value))
        if events is not None:
            if "content-type" not in {k.lower() for k in headers}:
                self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for name, data in events:
                # "message" is the name of an event sent without one (Chat Completions' chunks).
                head = "" if name == "message" else f"event: {name}\n"
                chunk = f"{head}data: {data}\n\n".encode()
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            return
        body = response.get("body")
        data = (
            body.encode()
            if isinstance(body, str)
            else json.dumps(body, ensure_ascii=False).encode()
            if body is not None
            else b""
        )
        if "content-type" not in {k.lower() for k in headers}:
            self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_json(self, status: int, payload: Mapping[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _relay(self, upstream: Any, record: Callable[[dict[str, Any]], None]) -> None:
        """Passes the upstream's answer on; ``record`` gets it before the client has its end."""
        status = upstream.status_code
        kept = {k: v for k, v in upstream.headers.items() if k.lower() in KEPT_HEADERS}
        streaming = "text/event-stream" in upstream.headers.get("content-type", "")
        self.send_response(status)
        for key, value in upstream.headers.items():
            if key.lower() not in _HOP_BY_HOP and key.lower() != "content-encoding":
                self.send_header(key, value)
        if self.command == "HEAD":
            self.send_header("content-length", upstream.headers.get("content-length", "0"))
            record({"status": status, "headers": kept, "body": None})
            self.end_headers()
            return
        if streaming:
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            events: list[list[str]] = []
            for chunk, done in sse_events(upstream.iter_raw()):
                events.extend([name, data] for name, data in done)
                if chunk:
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
            record({"status": status, "headers": kept, "events": events})
            self.wfile.write(b"0\r\n\r\n")
            return
        data = upstream.read()
        try:
            parsed: Any = json.loads(data) if data else None
        except (ValueError, RecursionError):
            parsed = data.decode("utf-8", errors="replace")
        record({"status": status, "headers": kept, "body": parsed})
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class RecordingProxy(LocalServer):
    """Forwards to ``upstream`` and hands every exchange to ``on_exchange`` (see
    :class:`~skilltest.loopback.LocalServer` for ``start``, ``close`` and ``with``).

    Example::

        with RecordingProxy("https://api.anthropic.com", on_exchange=cassettes.add) as proxy:
            env["ANTHROPIC_BASE_URL"] = proxy.base_url
    """

    name = "skilltest recording proxy"

    def __init__(
        self,
        upstream: str | None,
        *,
        on_exchange: Callable[[RecordedExchange], None],
        run: str | None = None,
        timeout_s: float = 600.0,
        player: Any = None,
        normalise: Callable[[Any, str], Mapping[str, Any]] | None = None,
        authorise: Callable[[dict[str, str]], dict[str, str] | None] | None = None,
    ) -> None:
        """
        Args:
            upstream: The model API's base URL; ``None`` when replaying only.
            on_exchange: Called with every exchange (from a server thread).
            run: The run this proxy serves when clients do not name theirs.
            timeout_s: Time limit of one upstream request.
            player: Answers from a cassette first (replay; a
                :class:`~skilltest.replay.match.Player`); ``None`` to record only.
            normalise: What a request body sent to a path is matched by (the replay
                normaliser, with the run's paths and the suite's rules).
            authorise: The headers a request is forwarded with, from the headers it came with;
                ``None`` refuses it (HTTP 401). Not given: forwarded as they came.
        """
        super().__init__()
        self.upstream = upstream
        self.run = run
        self.player = player
        self.misses: list[Any] = []
        self.live = False
        self._normalise = normalise
        self.authorise = authorise
        self._on_exchange = on_exchange
        self._exchange_lock = threading.Lock()
        self._marks: set[str] = set()
        self._rules: list[ScriptRule] = []
        if upstream is not None:
            # The anthropic SDK's own HTTP client (httpx2); imported only when a request goes out.
            import httpx2

            from skilltest.tls import client_context

            # A redirect is never followed: it would carry the request's credential elsewhere.
            self.client = httpx2.Client(
                timeout=timeout_s, follow_redirects=False, verify=client_context()
            )
        if player is not None:
            from skilltest.replay.cassette import Exchange

            self.exchange_type: type = Exchange
        self.listen(_Handler)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``, for ``ANTHROPIC_BASE_URL``."""
        return f"http://{self.host}:{self.port}"

    def record(self, exchange: RecordedExchange) -> None:
        mark = emulator_mark(exchange.response.get("headers"))
        with self._exchange_lock:
            if mark is not None:
                self._marks.add(mark)
            rule = script_rule(exchange.response.get("headers"))
            if rule is not None:
                self._rules.append(rule)
            self._on_exchange(exchange)

    def answered_by(self) -> AnsweredBy:
        """What answered the requests through this proxy so far: its upstream (the cassette
        while it replays), with the emulator's mark when an answer carried it."""
        with self._exchange_lock:
            mark = min(self._marks) if self._marks else None
        if self.upstream is None or (self.player is not None and not self.live):
            return AnsweredBy(CASSETTE, None, mark)
        return AnsweredBy.at(self.upstream, mark)

    def emulator_rules(self) -> tuple[ScriptRule, ...]:
        """The rules of an emulator's model script that answered through this proxy so far,
        each once, as the emulator named them in its answers."""
        with self._exchange_lock:
            return first_each(self._rules, os.getcwd())

    def normalise(self, body: Any, path: str) -> Mapping[str, Any]:
        """The identity of a request body (sent to ``path``) for the player."""
        if self._normalise is None:
            return body if isinstance(body, Mapping) else {}
        return self._normalise(body, path)

    @staticmethod
    def channel_of(path: str) -> str:
        """The cassette channel of a model API path (count_tokens has its own answers)."""
        return "model:count_tokens" if path.endswith("/count_tokens") else "model"

    def close(self) -> None:
        """Stops serving (every connection cut), then closes the client to the upstream."""
        super().close()
        if self.upstream is not None:
            self.client.close()


def _same_origin(url: str, upstream: str) -> bool:
    """Whether ``url`` (the upstream and a request's target) still goes to the upstream's host:
    a target that is not a path could name another (``@evil.example``, an absolute URL)."""
    target, base = urlsplit(url), urlsplit(upstream)
    return (target.scheme, target.netloc) == (base.scheme, base.netloc) and url.startswith(
        upstream.rstrip("/") + "/"
    )


def _error(status: int, message: str) -> dict[str, Any]:
    kind = {400: "invalid_request_error", 401: "authentication_error"}.get(
        status, "not_found_error"
    )
    return {"type": "error", "error": {"type": kind, "message": message}}


def upstream_of(env: Mapping[str, str]) -> str:
    """Where a client with this environment would send its requests."""
    return env.get("ANTHROPIC_BASE_URL") or DEFAULT_UPSTREAM
