"""One lifecycle for local servers: a free port, serving at once, and a close that cuts every
connection and never waits past its grace."""

from __future__ import annotations

import logging
import socket
import socketserver
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator

import pytest

from skilltest.loopback import Listener, LocalServer

GRACE_S = 0.5
"""The grace of the probe whose handler ignores the close: the test waits it out."""
WAIT_S = 60.0
"""The grace of every other probe, and twice the bound on its close: a close that woke its
handlers returns long before it, however loaded the machine; one that waited for a handler that
never woke would take all of it, and leave the handler behind."""

release = threading.Event()
"""What a stuck handler waits for; only the test sets it, after the server has closed."""


class Echo(socketserver.StreamRequestHandler):
    """Answers each line with itself."""

    def handle(self) -> None:
        while line := self.rfile.readline():
            self.wfile.write(line)


class ReadsARequest(socketserver.BaseRequestHandler):
    """Reads until the request's blank line: blocked while a client sends only part of it."""

    server: Listener[Probe]

    def handle(self) -> None:
        data = b""
        self.server.owner.entered.release()
        while b"\r\n\r\n" not in data:
            chunk = self.request.recv(1024)
            if not chunk:
                return
            data += chunk


class Streams(socketserver.BaseRequestHandler):
    """Streams an answer that never ends."""

    server: Listener[Probe]

    def handle(self) -> None:
        self.server.owner.entered.release()
        while True:
            self.request.sendall(b"data: more\n\n")
            time.sleep(0.01)


class Hangs(socketserver.BaseRequestHandler):
    """Holds the answer back until the server closes (a hang fault)."""

    server: Listener[Probe]

    def handle(self) -> None:
        self.server.owner.entered.release()
        self.server.owner.closing.wait()


class Stuck(socketserver.BaseRequestHandler):
    """Ignores the connection and the close alike."""

    server: Listener[Probe]

    def handle(self) -> None:
        self.server.owner.entered.release()
        release.wait(2 * WAIT_S)  # a close that waited for it would be late by this much


class TellsNoDelay(socketserver.BaseRequestHandler):
    """Answers whether its connection sends each write at once (``TCP_NODELAY``)."""

    def handle(self) -> None:
        flag = self.request.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        self.request.sendall(b"nodelay" if flag else b"nagle")


class Probe(LocalServer):
    name = "probe"

    def __init__(
        self,
        *handlers: type[socketserver.BaseRequestHandler],
        port: int = 0,
        grace: float = WAIT_S,
    ) -> None:
        super().__init__()
        self.close_grace_s = grace
        self.entered = threading.Semaphore(0)
        for handler in handlers:
            self.listen(handler, port=port)


@pytest.fixture
def stuck_released() -> Iterator[None]:
    release.clear()
    yield
    release.set()


def connect(server: LocalServer, index: int = 0) -> socket.socket:
    listener = server.listeners[index]
    return socket.create_connection((listener.host, listener.port), timeout=WAIT_S)


def echo(server: LocalServer, index: int = 0) -> bytes:
    with connect(server, index) as client:
        client.sendall(b"ping\n")
        return client.recv(64)


def closed_within(server: LocalServer, limit: float = WAIT_S / 2) -> float:
    started = time.monotonic()
    server.close()
    elapsed = time.monotonic() - started
    assert elapsed < limit
    return elapsed


def probe_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("probe:")]


def test_a_free_loopback_port_is_picked_and_a_given_one_is_used() -> None:
    with Probe(Echo) as first, Probe(Echo) as second:
        assert first.host == "127.0.0.1" and first.port > 0
        assert first.port != second.port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    with Probe(Echo, port=free) as given:
        assert given.port == free
        assert echo(given) == b"ping\n"


def test_a_taken_port_is_refused_when_listening() -> None:
    with Probe(Echo) as running, pytest.raises(OSError):
        Probe(Echo, port=running.port)


def test_start_returns_serving_and_starting_again_is_harmless() -> None:
    server = Probe(Echo)
    assert server.start() is server
    assert server.start() is server
    assert echo(server) == b"ping\n"
    server.close()


def test_the_with_block_starts_and_closes() -> None:
    with Probe(Echo) as server:
        assert echo(server) == b"ping\n"
        port = server.port
    assert server.closed
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5)


@pytest.mark.parametrize(
    "handler", [ReadsARequest, Streams, Hangs], ids=["mid-request", "stream", "hang"]
)
def test_close_cuts_an_open_connection_and_returns_at_once(handler, caplog) -> None:
    caplog.set_level(logging.INFO, logger="skilltest.loopback")
    server = Probe(handler).start()
    client = connect(server)
    client.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n")  # half a request
    assert server.entered.acquire(timeout=WAIT_S)

    closed_within(server)

    # Every handler woke and ended: none waited for the grace to run out, none was left.
    assert probe_threads() == [] and "left behind" not in caplog.text
    client.settimeout(WAIT_S)
    with client:  # the client sees its connection end, not an answer that never comes
        while data := client.recv(65536):
            assert data.startswith(b"data:")  # what was streamed before the cut
    assert probe_threads() == []


def test_a_handler_that_ignores_the_close_is_left_behind_after_the_grace(
    stuck_released, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="skilltest.loopback")
    server = Probe(Stuck, grace=GRACE_S).start()
    client = connect(server)
    assert server.entered.acquire(timeout=WAIT_S)

    elapsed = closed_within(server)  # not the 2 x WAIT_S the handler waits

    assert elapsed >= GRACE_S * 0.9
    assert "probe: 1 thread(s) still running 0.5s after close, left behind: probe:" in caplog.text
    client.close()


def test_closing_twice_or_before_starting_is_fine() -> None:
    never_started = Probe(Echo)
    never_started.close()
    never_started.close()
    server = Probe(Echo).start()
    server.close()
    server.close()
    with pytest.raises(RuntimeError, match="probe is closed"):
        server.start()


def test_two_listeners_are_served_and_closed_together() -> None:
    server = Probe(Echo, Hangs).start()
    assert len({listener.port for listener in server.listeners}) == 2
    assert echo(server, 0) == b"ping\n"
    hanging = connect(server, 1)
    assert server.entered.acquire(timeout=WAIT_S)

    closed_within(server)

    for listener in server.listeners:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((listener.host, listener.port), timeout=5)
    hanging.settimeout(WAIT_S)
    assert hanging.recv(64) == b""
    hanging.close()


ABANDONED_AT_EXIT = """
import gc, types
gc.disable()  # the run is collected by the interpreter's last collection, at exit
{setup}

@types.coroutine
def pause():
    yield

async def run():
    with {server}:
        await pause()

class Run:  # a run nobody waits for any more: in a reference cycle, as an abandoned task is
    pass

abandoned = Run()
abandoned.cycle = abandoned
abandoned.coroutine = run()
abandoned.coroutine.send(None)
del abandoned
print("serving", flush=True)
"""


def exits_promptly(setup: str, server: str) -> None:
    """Runs a program whose last run is still inside ``with server:`` when it ends: the server
    is closed while the interpreter shuts down, when its threads can no longer run (a close
    that waited for them would never return)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", ABANDONED_AT_EXIT.format(setup=setup, server=server)],
            capture_output=True,
            text=True,
            timeout=2 * WAIT_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the program never exited: closing its server at exit blocked")
    assert (done.stdout, done.returncode) == ("serving\n", 0), done.stderr


def test_a_server_left_open_at_interpreter_exit_does_not_hold_the_exit() -> None:
    exits_promptly(
        textwrap.dedent(
            """
            import socketserver
            from skilltest.loopback import LocalServer

            class Server(LocalServer):
                def __init__(self):
                    super().__init__()
                    self.listen(socketserver.BaseRequestHandler)
            """
        ),
        "Server()",
    )


def test_a_connection_sends_each_write_at_once() -> None:
    """An answer written in pieces (a head, then each event) is not held back by Nagle's
    algorithm, which on a kept-alive connection waits for the client's delayed ACK: 40 ms a
    request through the credential point and the emulator."""
    with Probe(TellsNoDelay) as server, socket.create_connection(("127.0.0.1", server.port)) as c:
        assert c.recv(64) == b"nodelay"
