"""What the command line prints is text, never terminal commands.

A model's answer, an agent's tool input, a fake service's body or a string in a results file can
hold control characters: an escape sequence that clears the screen, retitles the window, moves
the cursor over earlier lines, or hides text (``\\x1b[2J``, ``\\x1b]0;T\\x07``, the 8-bit CSI
``\\x9b``), a carriage return that overwrites a verdict, bidirectional overrides that reorder
what is read. Every command's stdout and stderr go through :class:`SafeStream`, which writes
each such character as a visible ``\\uXXXX`` escape (valid inside a JSON string too, so
``--json`` output stays JSON): nothing a run saw can act on the terminal. Line feeds and tabs
pass; the progress bar, the only writer of a carriage return, writes to :attr:`unescaped`. The
same stream keeps out the secrets the process knows: the credentials of the environment and the
secrets the suites declare (:meth:`skilltest.redact.Redactor.for_environment`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from skilltest.redact import Redactor
from skilltest.report.text import escape_controls as terminal_text


class SafeStream:
    """A text stream that escapes control characters on their way to ``stream``; every other
    attribute is the stream's own."""

    def __init__(self, stream: TextIO) -> None:
        self.unescaped = stream
        """The stream itself, for a writer that draws on the terminal on purpose."""

    def write(self, text: str) -> int:
        # The secrets this process knows (credentials, what its suites declare) are kept out of
        # the terminal as out of every file.
        self.unescaped.write(terminal_text(Redactor.for_environment(os.environ)(text)))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unescaped, name)


@contextmanager
def safe_output() -> Iterator[None]:
    """While inside, ``sys.stdout`` and ``sys.stderr`` escape control characters."""
    saved = sys.stdout, sys.stderr
    sys.stdout = SafeStream(saved[0])
    sys.stderr = SafeStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
