"""The world's proxy on loopback: declared hosts answered by their fakes, everything else refused.

Clients reach it three ways, and each ends in the same decision by the
:class:`~skilltest.world.policy.DestinationPolicy`:

* ``CONNECT host:443`` (HTTPS through ``HTTPS_PROXY``, and every HTTPS request of a command in
  Claude Code's sandbox): for a declared host the proxy answers ``200``, terminates TLS with a
  certificate for that host from the run's :class:`~skilltest.world.tls.CertificateAuthority`,
  and hands each HTTP/1.1 request inside to ``dispatch`` (the host's fake). A tunnel whose first
  byte is not a TLS handshake is read as plain HTTP (``curl --proxytunnel http://...``).
* absolute-form ``GET http://host/path`` (plain HTTP through ``HTTP_PROXY``): dispatched the same.
* SOCKS5 on a second port (what Claude Code's sandbox uses for what is not HTTP, with
  ``sandbox.network.socksProxyPort``): a ``CONNECT`` to a declared host is then served like an
  HTTP ``CONNECT``.

A destination the policy allows as *pass-through* (the model API, when a run talks
to the live API through this proxy) is tunnelled untouched: the proxy never sees inside. Every
other destination is refused (``403`` for HTTP and for ``CONNECT``, SOCKS reply 2 "not allowed by
ruleset") and recorded through ``on_violation`` as an
:class:`~skilltest.world.calls.EgressViolation`, without the proxy ever opening a connection to
it. The proxy follows no redirect: a fake's redirect reaches the client, whose next request comes
back here and is checked again.

Limits keep a misbehaving client or fault from holding the proxy: request heads of 64 KiB and
bodies of ``max_body_bytes`` (``431``/``413``), a fault's delay and a hanging answer end after
``answer_timeout_s``, and an idle connection after ``idle_timeout_s``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import select
import socket
import socketserver
import ssl
import threading
import time
from collections.abc import Callable
from typing import Self
from urllib.parse import urlsplit

from skilltest.loopback import Listener, LocalServer
from skilltest.world.calls import EgressViolation
from skilltest.world.http import HttpRequest, HttpResponse, parse_query
from skilltest.world.policy import DestinationPolicy
from skilltest.world.tls import CertificateAuthority
from skilltest.world.wire import (
    HOP_BY_HOP,
    BadRequest,
    RequestHead,
    SocketReader,
    encode_error,
    encode_response,
    split_authority,
)

DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
"""The largest request body a fake is given; larger is refused with 413."""
DEFAULT_ANSWER_TIMEOUT_S = 120.0
"""The longest a fault may delay an answer or hold one back (``hang``) before the proxy closes
the connection; Claude Code's Bash tool gives a command two minutes by default."""
DEFAULT_IDLE_TIMEOUT_S = 60.0
"""How long a connection may sit without a request or tunnelled byte before it is closed."""
LINGER_S = 1.0
"""How long a refused request's unread bytes are drained before its connection closes."""
TLS_HANDSHAKE_BYTE = 0x16
"""The first byte of a TLS record carrying a handshake (a ClientHello)."""

Dispatch = Callable[[HttpRequest, float], "HttpResponse | None"]
"""Answers one request to a declared host at a ``time.monotonic()`` instant; ``None`` when no
fake serves that host."""
OpenUpstream = Callable[[str, int, float], socket.socket]
"""Opens a TCP connection to a pass-through host (host, port, timeout)."""


class _HttpHandler(socketserver.BaseRequestHandler):
    server: Listener[WorldProxy]

    def handle(self) -> None:
        self.server.owner._serve_http(self.request)


class _SocksHandler(socketserver.BaseRequestHandler):
    server: Listener[WorldProxy]

    def handle(self) -> None:
        self.server.owner._serve_socks(self.request)


class WorldProxy(LocalServer):
    """HTTP(S) and SOCKS5 proxy on 127.0.0.1 in front of a world's fakes (two listeners of one
    :class:`~skilltest.loopback.LocalServer`, which ``close`` stops together).

    Args:
        dispatch: Answers a request to a declared host (see :data:`Dispatch`).
        policy: Decides which destinations are allowed: the world's hosts and the pass-through
            hosts, nothing else.
        ca: The run's CA, for the certificates of declared hosts.
        on_violation: Told about every refused destination.
        host: The address to listen on; loopback unless something else must reach it.
        port: The HTTP proxy's port; 0 picks a free one.
        socks_port: The SOCKS5 port; 0 picks a free one.
        max_body_bytes: The largest request body accepted.
        answer_timeout_s: The longest a delayed or hanging answer holds a connection.
        idle_timeout_s: The longest a connection may sit idle.
        open_upstream: Opens connections to pass-through hosts (``socket.create_connection``
            unless given); never called for any other destination.
    """

    name = "skilltest world proxy"

    def __init__(
        self,
        *,
        dispatch: Dispatch,
        policy: DestinationPolicy,
        ca: CertificateAuthority,
        on_violation: Callable[[EgressViolation], None],
        host: str = "127.0.0.1",
        port: int = 0,
        socks_port: int = 0,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        answer_timeout_s: float = DEFAULT_ANSWER_TIMEOUT_S,
        idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
        open_upstream: OpenUpstream | None = None,
    ) -> None:
        super().__init__()
        self.dispatch = dispatch
        self.policy = policy
        self.ca = ca
        self.on_violation = on_violation
        self.max_body_bytes = max_body_bytes
        self.answer_timeout_s = answer_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self._open_upstream = open_upstream or (
            lambda h, p, t: socket.create_connection((h, p), timeout=t)
        )
        self.errors: list[str] = []
        """What went wrong inside the proxy, for diagnostics: a TLS handshake with a declared
        host that failed (a client that does not trust the run's CA shows up here as
        ``TLS with api.tickets.example.com failed: ... unknown ca``), a fake that raised."""
        self._address = (host, port, socks_port)
        self._errors_lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------------

    # The HTTP proxy listens first: ``port`` is its port (after :meth:`start`).

    @property
    def socks_port(self) -> int:
        """The SOCKS5 port (after :meth:`start`)."""
        return self.listeners[1].port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``, for ``HTTPS_PROXY`` and ``HTTP_PROXY``."""
        host = self._address[0]
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}"

    def start(self) -> Self:
        """Listens on both ports and serves in background threads.

        Raises:
            OSError: a port is taken or the address is not this machine's.
            RuntimeError: started already.
        """
        if self.listeners:
            raise RuntimeError("the world proxy is started already")
        host, port, socks_port = self._address
        try:
            self.listen(_HttpHandler, host, port)
            self.listen(_SocksHandler, host, socks_port)
        except OSError:
            self.close()  # the port that was bound is let go
            raise
        return super().start()

    def handle_error(self, request: object, client_address: object) -> None:
        """Quiet: a client that goes away mid-answer is not the proxy's error."""

    # -- the decision ------------------------------------------------------------------------

    def _refuse(
        self, host: str, port: int | None, scheme: str, reason: str, url: str
    ) -> EgressViolation:
        if host.count(":") == 1:  # a refusal may name "host:port": the record keeps the host
            host = split_authority(host, 0)[0]
        violation = EgressViolation(
            host=host, port=port, scheme=scheme, reason=reason, at=time.monotonic(), url=url
        )
        self.on_violation(violation)
        return violation

    # -- HTTP proxy --------------------------------------------------------------------------

    def _serve_http(self, sock: socket.socket) -> None:
        sock.settimeout(self.idle_timeout_s)
        stream = SocketReader(sock, buffered=False)
        try:
            head = stream.read_head()
            if head is None:
                return
            if head.method == "CONNECT":
                self._connect(sock, head)
                return
            # A client may send requests for several hosts on one connection to a proxy:
            # each is decided on its own.
            stream.buffered = True
            while self._proxy_request(sock, stream, head):
                head = stream.read_head()
                if head is None:
                    return
                if head.method == "CONNECT":
                    raise BadRequest(400, "CONNECT after other requests: open a connection")
        except BadRequest as exc:
            self._send_error(sock, exc.status, str(exc))
        except (OSError, ssl.SSLError):
            return

    def _connect(self, sock: socket.socket, head: RequestHead) -> None:
        host, port = split_authority(head.target, 443)
        scheme = "http" if port == 80 else "https"
        decision = self.policy.check(head.target, scheme=scheme)
        url = f"{scheme}://{head.target}/"
        if not decision.allowed or port is None:
            violation = self._refuse(
                decision.host or host, port, scheme, decision.reason or "refused port", url
            )
            self._send_error(sock, 403, self._refusal_text(violation))
            return
        if decision.pass_through:
            upstream = self._open_pass_through(decision.host, port)
            if upstream is None:
                self._send_error(sock, 502, f"cannot reach {decision.host}:{port}")
                return
            sock.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self._splice(sock, upstream)
            return
        sock.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        self._serve_tunnel(sock, decision.host, port)

    def _serve_tunnel(self, sock: socket.socket, host: str, port: int) -> None:
        """Serves the requests inside an opened tunnel to a declared host."""
        try:
            first = sock.recv(1, socket.MSG_PEEK)
        except OSError:
            return
        if not first:
            return
        if first[0] != TLS_HANDSHAKE_BYTE:
            self._serve_requests(sock, SocketReader(sock), "http", host, port)
            return
        try:
            tls = self.ca.server_context(host).wrap_socket(sock, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            with self._errors_lock:
                self.errors.append(f"TLS with {host} failed: {exc}")
            return
        with self.tracked(tls):
            self._serve_requests(tls, SocketReader(tls), "https", host, port)

    def _proxy_request(self, sock: socket.socket, stream: SocketReader, head: RequestHead) -> bool:
        """One absolute-form request (``GET http://host/path``); whether the connection stays
        open for the next one."""
        target = head.target
        if not target.lower().startswith(("http://", "https://")):
            if "://" not in target:
                raise BadRequest(
                    400,
                    "this is the skilltest world proxy: send absolute-form requests "
                    "(GET http://host/path) or CONNECT host:443",
                )
            # ftp://, gopher://, file://... asked of the proxy: refused by the policy
            scheme, port = target.split("://", 1)[0].lower(), None
            host = ""
        else:
            parts = urlsplit(target)
            scheme, host = parts.scheme.lower(), parts.hostname or ""
            try:
                port = parts.port or (443 if scheme == "https" else 80)
            except ValueError:
                port = None
        decision = self.policy.check(target)
        if not decision.allowed or port is None:
            violation = self._refuse(decision.host or host, port, scheme, decision.reason, target)
            self._send_error(sock, 403, self._refusal_text(violation))
            return False
        if decision.pass_through:
            self._forward_plain(sock, stream, head, decision.host, port)
            return False
        return self._dispatch_one(sock, stream, head, scheme, decision.host, port)

    # -- requests to a declared host ---------------------------------------------------------

    def _serve_requests(
        self, sock: socket.socket, stream: SocketReader, scheme: str, host: str, port: int
    ) -> None:
        """Answers the requests inside a tunnel to one declared host, each from its fake, until
        the client closes, asks to close, or a limit is hit."""
        while not self.closing.is_set():
            try:
                head = stream.read_head()
                if head is None or not self._dispatch_one(sock, stream, head, scheme, host, port):
                    return
            except BadRequest as exc:
                self._send_error(sock, exc.status, str(exc))
                return
            except (OSError, ssl.SSLError):
                return

    def _dispatch_one(
        self,
        sock: socket.socket,
        stream: SocketReader,
        head: RequestHead,
        scheme: str,
        host: str,
        port: int,
    ) -> bool:
        """Reads one request's body, has the fake answer it and sends the answer; whether the
        connection stays open."""
        received = time.monotonic()
        request = self._request(stream, head, scheme, host, port)
        try:
            response = self.dispatch(request, received)
        except Exception as exc:  # a fake's bug must not look like a network failure
            with self._errors_lock:
                self.errors.append(f"{request.method} {host}{request.path}: {exc!r}")
            self._send_error(sock, 500, f"skilltest world: the fake for {host} failed: {exc!r}")
            return False
        if response is None:
            violation = self._refuse(
                host, port, scheme, "no fake serves this host", f"{scheme}://{host}/"
            )
            self._send_error(sock, 502, self._refusal_text(violation))
            return False
        return self._answer(sock, request, response, head.keep_alive) and head.keep_alive

    def _request(
        self,
        stream: SocketReader,
        head: RequestHead,
        scheme: str,
        host: str,
        port: int,
    ) -> HttpRequest:
        target = head.target
        if "://" in target:  # absolute-form: the destination was decided already
            parts = urlsplit(target)
            path, query = parts.path or "/", parts.query
        else:
            path, _, query = target.partition("?")
        body = stream.read_body(head, self.max_body_bytes)
        headers: dict[str, str] = {}
        for name, value in head.headers:
            if name.startswith("proxy-"):
                continue  # meant for the proxy, never for the service
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        return HttpRequest(
            method=head.method,
            scheme=scheme,
            host=host,
            port=port,
            path=path.split("#", 1)[0] or "/",
            query=parse_query(query),
            headers=headers,
            body=body,
            raw_query=query,
        )

    def _answer(
        self, sock: socket.socket, request: HttpRequest, response: HttpResponse, keep: bool
    ) -> bool:
        """Sends ``response`` after its delay; ``False`` when the connection must end
        (a hang, the proxy closing, the client gone)."""
        if response.hang:
            self._hold(sock, self.answer_timeout_s)
            return False
        if response.delay_s > 0:
            if response.delay_s > self.answer_timeout_s:
                self._hold(sock, self.answer_timeout_s)
                return False
            if self.closing.wait(response.delay_s):
                return False
        data = encode_response(response, head_only=request.method == "HEAD", keep_alive=keep)
        try:
            sock.sendall(data)
        except (OSError, ssl.SSLError):
            return False
        return True

    def _hold(self, sock: socket.socket, limit: float) -> None:
        """Holds a connection without answering until the client gives up, the proxy closes,
        or ``limit`` seconds pass."""
        deadline = time.monotonic() + limit
        while not self.closing.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:
                readable, _, _ = select.select([sock], [], [], min(left, 0.5))
                if readable and not sock.recv(65536):
                    return  # the client closed its side
            except ssl.SSLWantReadError:
                continue  # a TLS record that carried no data (a ticket, a key update)
            except (OSError, ValueError, ssl.SSLError):
                return

    # -- pass-through ------------------------------------------------------------------------

    def _open_pass_through(self, host: str, port: int) -> socket.socket | None:
        try:
            return self._open_upstream(host, port, self.idle_timeout_s)
        except OSError:
            return None

    def _forward_plain(
        self, sock: socket.socket, stream: SocketReader, head: RequestHead, host: str, port: int
    ) -> None:
        """One plain-HTTP request to a pass-through host, relayed as it came."""
        parts = urlsplit(head.target)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        body = stream.read_body(head, self.max_body_bytes)
        upstream = self._open_pass_through(host, port)
        if upstream is None:
            self._send_error(sock, 502, f"cannot reach {host}:{port}")
            return
        lines = [f"{head.method} {path} HTTP/1.1"]
        lines += [
            f"{name}: {value}"
            for name, value in head.headers
            if name not in HOP_BY_HOP and name != "expect"
        ]
        lines += [f"Content-Length: {len(body)}", "Connection: close"]
        try:
            upstream.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        except OSError:
            upstream.close()
            self._send_error(sock, 502, f"cannot reach {host}:{port}")
            return
        self._splice(sock, upstream)

    def _splice(self, client: socket.socket, upstream: socket.socket) -> None:
        """Copies bytes both ways until either side closes or both sit idle too long."""
        with self.tracked(upstream):
            sockets = [client, upstream]
            while not self.closing.is_set():
                try:
                    readable, _, _ = select.select(sockets, [], [], self.idle_timeout_s)
                except (OSError, ValueError):
                    return
                if not readable:
                    return
                for source in readable:
                    target = upstream if source is client else client
                    try:
                        data = source.recv(65536)
                        if not data:
                            return
                        target.sendall(data)
                    except OSError:
                        return

    # -- SOCKS5 ------------------------------------------------------------------------------

    def _serve_socks(self, sock: socket.socket) -> None:
        """RFC 1928, no authentication, CONNECT only."""
        sock.settimeout(self.idle_timeout_s)
        stream = SocketReader(sock, buffered=False)
        try:
            version, count = stream.read_exact(2)
            methods = stream.read_exact(count)
            if version != 5 or 0 not in methods:
                sock.sendall(b"\x05\xff")
                return
            sock.sendall(b"\x05\x00")
            version, command, _, kind = stream.read_exact(4)
            if kind == 1:
                host = str(ipaddress.IPv4Address(stream.read_exact(4)))
            elif kind == 4:
                host = str(ipaddress.IPv6Address(stream.read_exact(16)))
            elif kind == 3:
                host = stream.read_exact(stream.read_exact(1)[0]).decode("latin-1")
            else:
                self._socks_reply(sock, 8)
                return
            port = int.from_bytes(stream.read_exact(2), "big")
            if version != 5 or command != 1:
                self._socks_reply(sock, 7)
                return
            authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            scheme = "http" if port == 80 else "https"
            decision = self.policy.check(authority, scheme=scheme)
            if not decision.allowed:
                self._refuse(
                    decision.host or host,
                    port,
                    scheme,
                    decision.reason,
                    f"{scheme}://{authority}/",
                )
                self._socks_reply(sock, 2)
                return
            if decision.pass_through:
                upstream = self._open_pass_through(decision.host, port)
                if upstream is None:
                    self._socks_reply(sock, 5)
                    return
                self._socks_reply(sock, 0)
                self._splice(sock, upstream)
                return
            self._socks_reply(sock, 0)
            self._serve_tunnel(sock, decision.host, port)
        except (BadRequest, OSError, ssl.SSLError, ValueError):
            return

    @staticmethod
    def _socks_reply(sock: socket.socket, code: int) -> None:
        sock.sendall(bytes([5, code, 0, 1, 0, 0, 0, 0, 0, 0]))

    # -- answers of the proxy itself ---------------------------------------------------------

    @staticmethod
    def _refusal_text(violation: EgressViolation) -> str:
        return (
            f"skilltest world: {violation.host} is refused ({violation.reason}); "
            "only the world's declared hosts can be reached from this run"
        )

    @staticmethod
    def _send_error(sock: socket.socket, status: int, message: str) -> None:
        with contextlib.suppress(OSError, ssl.SSLError):
            sock.sendall(encode_error(status, message))
            # Closing with unread request bytes would reset the connection, which can destroy
            # the answer before the client reads it: stop sending, then drain for a moment.
            sock.shutdown(socket.SHUT_WR)
            sock.settimeout(LINGER_S)
            deadline, drained = time.monotonic() + LINGER_S, 0
            while time.monotonic() < deadline and drained < DEFAULT_MAX_BODY_BYTES:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                drained += len(chunk)
