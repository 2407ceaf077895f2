"""Reading a request body in the loopback HTTP servers (the emulator, the recording and replaying
proxy), whichever framing the client chose."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler


def read_request_body(handler: BaseHTTPRequestHandler) -> bytes:
    """The body of the request ``handler`` is serving: ``Transfer-Encoding: chunked`` (the chunks
    joined, the trailer read past) or ``Content-Length`` (empty when absent)."""
    if handler.headers.get("transfer-encoding", "").lower() == "chunked":
        parts: list[bytes] = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                handler.rfile.readline()
                return b"".join(parts)
            parts.append(handler.rfile.read(size))
            handler.rfile.readline()
    length = int(handler.headers.get("content-length") or 0)
    return handler.rfile.read(length) if length else b""
