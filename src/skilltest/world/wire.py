"""HTTP/1.1 on a socket, as narrow as the world's proxy needs: request heads and bodies read
within limits, answers written with their framing.

Only what clients send to an API is read: a request line, header lines, and a body framed by
``Content-Length`` or ``Transfer-Encoding: chunked`` (both at once is refused, as RFC 9112
asks, because that is how requests are smuggled). Everything the proxy cannot read is a
:class:`BadRequest` with the status to answer it with.
"""

from __future__ import annotations

import datetime
import email.utils
import http
import socket
from dataclasses import dataclass

from skilltest.world.http import HttpResponse

MAX_HEAD_BYTES = 64 * 1024
"""The longest request head (request line and headers) read; longer is refused with 431."""
MAX_HEADERS = 100
"""The most header lines in one request head."""

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
    }
)
"""Headers about one connection, never passed on (``Content-Length`` is recomputed)."""


class BadRequest(Exception):
    """A request that cannot be read; answered with ``status`` and the connection closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class RequestHead:
    """A request line and its headers."""

    method: str
    """Upper case."""
    target: str
    """As sent: ``/path?q`` (origin-form), ``http://host/path`` (absolute-form) or
    ``host:443`` (a CONNECT's authority)."""
    version: str
    """``HTTP/1.1`` or ``HTTP/1.0``."""
    headers: tuple[tuple[str, str], ...]
    """Names in lower case, in the order sent."""

    def get(self, name: str) -> str | None:
        """A header's value (repeated ones joined with ``, ``), ``None`` when absent."""
        values = [value for key, value in self.headers if key == name]
        return ", ".join(values) if values else None

    @property
    def keep_alive(self) -> bool:
        """Whether the client expects the connection to stay open after the answer."""
        return self.version == "HTTP/1.1" and (self.get("connection") or "").lower() != "close"


class SocketReader:
    """Reads a socket (plain or TLS) by lines and exact amounts.

    With ``buffered`` off it never reads past what it is asked for, so the bytes after a
    ``CONNECT`` head stay in the socket for the TLS handshake.
    """

    def __init__(self, sock: socket.socket, *, buffered: bool = True) -> None:
        self.sock = sock
        self.buffered = buffered
        self._buffer = b""

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536 if self.buffered else 1)
        self._buffer += chunk
        return bool(chunk)

    def read_line(self, limit: int) -> bytes:
        """One line with its ending; what is left when the peer closes; 431 past ``limit``."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line, self._buffer = self._buffer[: end + 1], self._buffer[end + 1 :]
                return line
            if len(self._buffer) > limit:
                raise BadRequest(431, "request head too large")
            if not self._fill():
                line, self._buffer = self._buffer, b""
                return line

    def read_exact(self, size: int) -> bytes:
        """Exactly ``size`` bytes; 400 when the peer closes first."""
        while len(self._buffer) < size:
            if not self._fill():
                raise BadRequest(400, "connection closed inside the request")
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def read_head(self) -> RequestHead | None:
        """The next request head, or ``None`` when the client closed the connection first."""
        line = self.read_line(MAX_HEAD_BYTES)
        while line in (b"\r\n", b"\n"):  # RFC 9112 2.2: empty lines before a request are ignored
            line = self.read_line(MAX_HEAD_BYTES)
        if not line:
            return None
        used = len(line)
        parts = line.decode("latin-1").strip().split(" ")
        if len(parts) != 3 or parts[2] not in ("HTTP/1.1", "HTTP/1.0"):
            raise BadRequest(400, "not an HTTP/1.1 request line")
        headers: list[tuple[str, str]] = []
        while True:
            line = self.read_line(MAX_HEAD_BYTES - used)
            used += len(line)
            if used > MAX_HEAD_BYTES:
                raise BadRequest(431, "request head too large")
            if line in (b"\r\n", b"\n"):
                break
            if not line:
                raise BadRequest(400, "connection closed inside the request head")
            text = line.decode("latin-1").rstrip("\r\n")
            name, colon, value = text.partition(":")
            # A name with spaces around it or a folded line (obs-fold) is refused, not guessed.
            if not colon or not name or name != name.strip() or text[0] in " \t":
                raise BadRequest(400, f"malformed header line {text[:80]!r}")
            headers.append((name.lower(), value.strip()))
            if len(headers) > MAX_HEADERS:
                raise BadRequest(431, "too many header lines")
        return RequestHead(parts[0].upper(), parts[1], parts[2], tuple(headers))

    def read_body(self, head: RequestHead, max_bytes: int) -> bytes:
        """The body ``head`` announces, at most ``max_bytes`` (413 beyond), chunks joined.

        Answers ``100 Continue`` first when the client waits for it.
        """
        coding = (head.get("transfer-encoding") or "").lower()
        length_text = head.get("content-length")
        if coding and length_text is not None:
            raise BadRequest(400, "both Transfer-Encoding and Content-Length")
        if coding and coding != "chunked":
            raise BadRequest(501, f"transfer coding {coding!r} is not supported")
        length = 0
        if length_text is not None:
            if not length_text.isascii() or not length_text.isdigit():
                raise BadRequest(400, f"bad Content-Length {length_text[:40]!r}")
            length = int(length_text)
            if length > max_bytes:
                raise BadRequest(413, f"request body over {max_bytes} bytes")
        if (head.get("expect") or "").lower() == "100-continue":
            self.sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        if not coding:
            return self.read_exact(length) if length else b""
        parts: list[bytes] = []
        total = 0
        while True:
            size_text = self.read_line(1024).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise BadRequest(400, "bad chunk size") from None
            if size == 0:
                while self.read_line(8192) not in (b"\r\n", b"\n", b""):
                    pass  # trailer fields: not kept
                return b"".join(parts)
            total += size
            if total > max_bytes:
                raise BadRequest(413, f"request body over {max_bytes} bytes")
            parts.append(self.read_exact(size))
            self.read_line(16)


def split_authority(authority: str, default_port: int) -> tuple[str, int | None]:
    """``host:port`` or ``[v6]:port`` into host and port; the port is ``None`` when it is not
    a number (the policy refuses such a destination anyway)."""
    host, port_text = authority, ""
    if authority.startswith("["):
        end = authority.find("]")
        if end > 0:
            host, port_text = authority[1:end], authority[end + 1 :].removeprefix(":")
    elif authority.count(":") == 1:
        host, port_text = authority.split(":")
    if not port_text:
        return host, default_port
    valid = port_text.isascii() and port_text.isdigit() and int(port_text) <= 65535
    return host, int(port_text) if valid else None


def reason_phrase(status: int) -> str:
    """``Not Found`` for 404; a neutral phrase for a status HTTP does not name."""
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Status"


def encode_response(response: HttpResponse, *, head_only: bool, keep_alive: bool) -> bytes:
    """A fake's answer on the wire: its headers (not those about the connection), ``Date``
    unless given, ``Content-Length`` and, when the connection ends, ``Connection: close``."""
    lines = [f"HTTP/1.1 {response.status} {reason_phrase(response.status)}"]
    names = set()
    for name, value in response.headers.items():
        if name.lower() in HOP_BY_HOP or "\n" in value or "\r" in value:
            continue
        names.add(name.lower())
        lines.append(f"{name}: {value}")
    if "date" not in names:
        now = datetime.datetime.now(datetime.UTC)
        lines.append(f"Date: {email.utils.format_datetime(now, usegmt=True)}")
    bodiless = response.status in (204, 304) or 100 <= response.status < 200
    if not bodiless:
        lines.append(f"Content-Length: {len(response.body)}")
    if not keep_alive:
        lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", errors="replace")
    return head if head_only or bodiless else head + response.body


def encode_error(status: int, message: str) -> bytes:
    """An answer of the proxy itself: plain text, and the connection closes."""
    body = (message + "\n").encode("utf-8", errors="replace")
    head = (
        f"HTTP/1.1 {status} {reason_phrase(status)}\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body
