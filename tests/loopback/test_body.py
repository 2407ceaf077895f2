"""The request body the loopback HTTP servers read, whichever framing the client chose."""

from __future__ import annotations

import io
from http.server import BaseHTTPRequestHandler

import pytest

from skilltest.loopback import read_request_body


class Reading(BaseHTTPRequestHandler):
    """A handler over bytes: the request head parsed, the body left in ``rfile``."""

    def __init__(self, raw: bytes) -> None:  # no socket, no server
        self.rfile = io.BytesIO(raw)
        self.raw_requestline = self.rfile.readline()
        self.parse_request()


@pytest.mark.parametrize(
    ("request_bytes", "body", "left"),
    [
        (b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloNEXT", b"hello", b"NEXT"),
        (b"POST / HTTP/1.1\r\n\r\nNEXT", b"", b"NEXT"),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\n\r\nNEXT",
            b"hello world",
            b"NEXT",
        ),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\nNEXT",
            b"",
            b"NEXT",
        ),
    ],
    ids=["content-length", "no-body", "chunked", "empty-chunked"],
)
def test_the_body_is_read_whole_and_nothing_past_it(request_bytes, body, left):
    handler = Reading(request_bytes)
    assert read_request_body(handler) == body
    assert handler.rfile.read() == left  # the next request on the connection is untouched
