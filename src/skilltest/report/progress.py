"""A progress bar on stderr while runs complete; silent when stderr is not a terminal."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


class Progress:
    """Counts finished runs and redraws one line on a terminal."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self.total = total
        self.label = label
        self.done = 0
        self.errors = 0
        stream = stream if stream is not None else sys.stderr
        # The bar redraws its line with a carriage return: it writes past the command line's
        # escaping of control characters (cli.terminal), which its own text needs none of.
        self.stream: TextIO = getattr(stream, "unescaped", stream)
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.status = ""
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._width = 0

    def advance(self, *, error: bool = False) -> None:
        """One more run finished."""
        with self._lock:
            self.done += 1
            self.errors += int(error)
            self._draw()

    def show(self, status: str) -> None:
        """Says what the runs wait for after the count (a batch being processed); ``""``
        says nothing more."""
        with self._lock:
            self.status = status
            self._draw()

    def _draw(self) -> None:
        if not self.enabled or self.total <= 0:
            return
        width = 30
        filled = int(width * self.done / self.total)
        bar = "#" * filled + "-" * (width - filled)
        elapsed = time.monotonic() - self._started
        errors = f", {self.errors} errors" if self.errors else ""
        status = f"  {self.status}" if self.status else ""
        line = f"{self.label} [{bar}] {self.done}/{self.total} runs{errors} {elapsed:5.1f}s{status}"
        # A shorter line than the last one leaves no tail of it behind.
        self.stream.write("\r" + line.ljust(self._width))
        self._width = len(line)
        self.stream.flush()

    def close(self) -> None:
        """Ends the line so that the table starts on a fresh one."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
