"""One life for every server the toolkit runs on loopback: listen, serve, close.

A :class:`LocalServer` owns one or more :class:`Listener` sockets (the world proxy has two: HTTP
and SOCKS5). :meth:`LocalServer.start` runs each listener's accept loop in a daemon thread, and
every accepted connection gets a daemon thread of its own, so a slow or hanging answer never
holds up another.

:meth:`LocalServer.close` is what makes the servers safe to stop at any moment, from a ``with``
block that Ctrl-C unwinds or from a coroutine the interpreter closes on its way out:

1. :attr:`LocalServer.closing` is set, which wakes answers that wait on it (a delay, a hang);
2. the accept loops stop at their next poll and the listening sockets close;
3. every open connection is shut down, which wakes a handler blocked reading from or streaming
   to its client;
4. the accept and connection threads are joined, all within one bounded grace
   (:attr:`LocalServer.close_grace_s`). A thread still running after it is left behind (it is a
   daemon) and logged at INFO: no handler can make ``close`` block for ever. At interpreter exit the
   threads are not waited for at all, since daemon threads no longer run then.

``close`` is idempotent and safe from any thread, including a connection's own.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Iterator
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

LOOPBACK = "127.0.0.1"
"""The address every local server listens on unless told otherwise."""
POLL_INTERVAL_S = 0.05
"""How often an accept loop looks whether it should stop."""
CLOSE_GRACE_S = 1.0
"""How long :meth:`LocalServer.close` waits, in all, for the server's threads to end."""
READY_TIMEOUT_S = 5.0
"""How long :meth:`LocalServer.start` waits for an accept loop to run."""

logger = logging.getLogger(__name__)

Owner = TypeVar("Owner", bound="LocalServer")


class _Stopped(Exception):
    """Ends an accept loop from inside (raised by :meth:`Listener.service_actions`)."""


class Listener(socketserver.TCPServer, Generic[Owner]):
    """One listening socket of a :class:`LocalServer`, bound when created.

    Handlers reach the server they belong to as ``self.server.owner``.
    """

    allow_reuse_address = True
    request_queue_size = 128  # a benchmark opens many connections at once

    def __init__(
        self,
        owner: Owner,
        address: tuple[str, int],
        handler: type[socketserver.BaseRequestHandler],
    ) -> None:
        self.owner = owner
        super().__init__(address, handler)

    @property
    def host(self) -> str:
        """The address listened on."""
        return str(self.server_address[0])

    @property
    def port(self) -> int:
        """The port listened on (the one picked when bound to port 0)."""
        return int(self.server_address[1])

    def process_request(self, request: Any, client_address: Any) -> None:
        """Hands the connection to a thread of its own (the owner tracks both)."""
        # An answer goes out in several writes (a head, then each event or chunk): with Nagle's
        # algorithm on, each write waits for the client's delayed ACK of the one before, 40 ms
        # a request on a kept-alive connection.
        with contextlib.suppress(OSError):
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.owner._accepted(self, request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Lets the owner decide what a handler's exception is worth."""
        self.owner.handle_error(request, client_address)

    def service_actions(self) -> None:
        """Called by the accept loop after every poll: ends it once the owner is closing."""
        if self.owner.closing.is_set():
            raise _Stopped


class Lifecycle:
    """``start`` and ``close`` as a ``with`` block, for a local server and for what runs one
    (a world instance, whose proxy is its server)."""

    def start(self) -> Self:
        """Starts serving; returns ``self``."""
        return self

    def close(self) -> None:
        """Stops serving; idempotent."""

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class LocalServer(Lifecycle):
    """Threaded TCP listeners on loopback with one lifecycle; subclasses add the protocol.

    A subclass calls :meth:`listen` for each socket it serves (in ``__init__`` to fail on a
    taken port at once, or in its own ``start``), with a handler class whose
    ``self.server.owner`` is the subclass. Every accepted connection is tracked; sockets a
    handler opens or wraps itself (TLS, an upstream) can be tracked with :meth:`tracked`.

    Example::

        class Echo(LocalServer):
            name = "echo"

            def __init__(self) -> None:
                super().__init__()
                self.listen(EchoHandler)

        with Echo() as server:
            socket.create_connection((server.host, server.port))
    """

    name = "local server"
    """What the threads and the log call this server."""
    close_grace_s = CLOSE_GRACE_S
    """How long :meth:`close` waits, in all, for the threads to end."""

    def __init__(self) -> None:
        self.closing = threading.Event()
        """Set when :meth:`close` begins: answers that wait (a delay, a hang) wait on it."""
        self._listeners: list[Listener[Self]] = []
        self._accept_threads: list[threading.Thread] = []
        self._connections: dict[socket.socket, int] = {}
        self._connection_threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._closed = False

    # -- listening ---------------------------------------------------------------------------

    def listen(
        self,
        handler: type[socketserver.BaseRequestHandler],
        host: str = LOOPBACK,
        port: int = 0,
    ) -> Listener[Self]:
        """Binds and listens now (``port=0`` picks a free port); served from :meth:`start`.

        Raises:
            OSError: the port is taken, or ``host`` is not an address of this machine.
            RuntimeError: the server is started or closed already.
        """
        with self._lock:
            if self._accept_threads or self._closed:
                raise RuntimeError(f"{self.name}: listen before start")
        listener: Listener[Self] = Listener(self, (host, port), handler)
        self._listeners.append(listener)
        return listener

    @property
    def listeners(self) -> tuple[Listener[Self], ...]:
        """The listening sockets, in the order they were added."""
        return tuple(self._listeners)

    @property
    def host(self) -> str:
        """The first listener's address."""
        return self._listeners[0].host

    @property
    def port(self) -> int:
        """The first listener's port."""
        return self._listeners[0].port

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> Self:
        """Runs every listener's accept loop in a daemon thread; returns ``self``.

        Starting twice is harmless; returns once each loop is running.

        Raises:
            RuntimeError: the server is closed, or an accept loop did not start.
        """
        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self.name} is closed")
            if self._accept_threads:
                return self
            loops = []
            for listener in self._listeners:
                ready = threading.Event()
                thread = threading.Thread(
                    target=self._accept_loop,
                    args=(listener, ready),
                    name=f"{self.name}:{listener.port}",
                    daemon=True,
                )
                self._accept_threads.append(thread)
                loops.append((thread, ready))
        for thread, ready in loops:
            thread.start()
            if not ready.wait(READY_TIMEOUT_S):
                raise RuntimeError(f"{self.name}: {thread.name} did not start serving")
        return self

    def close(self) -> None:
        """Stops accepting, cuts every connection and waits a bounded grace for the threads.

        Idempotent; never blocks longer than :attr:`close_grace_s` (plus the socket calls).
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self.closing.set()
        # At interpreter exit daemon threads never run again: waiting for them would be for ever.
        grace = 0.0 if sys.is_finalizing() else self.close_grace_s
        deadline = time.monotonic() + grace
        for thread in self._accept_threads:
            _join(thread, deadline)
        for listener in self._listeners:
            listener.server_close()
        with self._lock:
            connections = list(self._connections)
            threads = list(self._connection_threads)
        for connection in connections:
            # Shut down, not closed: its handler still holds it, and a closed descriptor could
            # be reused by another socket while a stuck handler writes to it.
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            _join(thread, deadline)
        left = [t.name for t in (*self._accept_threads, *threads) if t.is_alive()]
        if left and grace:
            # Not a warning: a handler waiting on an upstream that holds its answer back (the
            # recording proxy in front of a hanging emulator) wakes only when that upstream ends.
            logger.info(
                "%s: %d thread(s) still running %.1fs after close, left behind: %s",
                self.name,
                len(left),
                grace,
                ", ".join(left),
            )

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._closed

    # -- connections -------------------------------------------------------------------------

    @contextlib.contextmanager
    def tracked(self, sock: socket.socket) -> Iterator[socket.socket]:
        """Tracks a socket a handler opened or wrapped itself, so :meth:`close` cuts it too;
        closes it on the way out."""
        with self._lock:
            refused = self._closed
            if not refused:
                self._connections[sock] = self._connections.get(sock, 0) + 1
        if refused:  # closing already: nothing new is served
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        try:
            yield sock
        finally:
            if not refused:
                self._untrack(sock)
            with contextlib.suppress(OSError):
                sock.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Called in a connection's thread when its handler raised: a client that went away
        (a timeout, a cut stream) is ignored, anything else logged with its traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            logger.exception("%s: serving %s failed", self.name, _peer(client_address))

    def _accepted(self, listener: Listener[Self], request: socket.socket, address: Any) -> None:
        thread = threading.Thread(
            target=self._serve_connection,
            args=(listener, request, address),
            name=f"{self.name}:{listener.port} {_peer(address)}",
            daemon=True,
        )
        with self._lock:
            if not self._closed:
                # Tracked and started under the lock: close() never sees a connection without
                # its thread, nor a thread it cannot join.
                self._connections[request] = self._connections.get(request, 0) + 1
                self._connection_threads.add(thread)
                try:
                    thread.start()
                    return
                except RuntimeError:  # no thread to be had (interpreter exit): refused
                    self._connections.pop(request, None)
                    self._connection_threads.discard(thread)
        listener.shutdown_request(request)  # accepted while closing: refused

    def _serve_connection(
        self, listener: Listener[Self], request: socket.socket, address: Any
    ) -> None:
        try:
            listener.finish_request(request, address)
        except Exception:
            self.handle_error(request, address)
        finally:
            self._untrack(request)
            listener.shutdown_request(request)
            with self._lock:
                self._connection_threads.discard(threading.current_thread())

    def _untrack(self, sock: socket.socket) -> None:
        with self._lock:
            count = self._connections.pop(sock, 0) - 1
            if count > 0:
                self._connections[sock] = count

    def _accept_loop(self, listener: Listener[Self], ready: threading.Event) -> None:
        ready.set()
        with contextlib.suppress(_Stopped):
            listener.serve_forever(poll_interval=POLL_INTERVAL_S)


def _join(thread: threading.Thread, deadline: float) -> None:
    if thread is threading.current_thread() or thread.ident is None:
        return  # close() from a connection's own thread; or a thread never started
    thread.join(max(0.0, deadline - time.monotonic()))


def _peer(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address)
