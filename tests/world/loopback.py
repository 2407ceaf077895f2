"""A TCP server on a free loopback port, for what a world must never reach or must pass through
untouched."""

from __future__ import annotations

import socket
import threading


class LoopbackServer:
    """Accepts connections on a thread and hands each to :meth:`handle`, then closes it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            with connection:
                self.handle(connection)

    def handle(self, connection: socket.socket) -> None:
        raise NotImplementedError
