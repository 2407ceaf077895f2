"""What the MCP tests share: a remote (streamable HTTP) server on loopback."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HTTP_SERVER = Path(__file__).with_name("http_server.py")


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """The URL of a streamable-HTTP MCP server on loopback (tests/mcp/http_server.py)."""
    port = closed_port()
    with subprocess.Popen(
        [sys.executable, str(HTTP_SERVER), str(port)], stdout=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None and process.stdout.readline() == "ready\n"
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()
            process.wait(timeout=60)
