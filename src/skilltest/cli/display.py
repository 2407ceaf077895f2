"""What a person sees while a suite runs: notices on stderr and a progress bar on a terminal."""

from __future__ import annotations

import sys
from typing import Any

from skilltest.flow.options import Observer
from skilltest.report.progress import Progress


class Display(Observer):
    """The command line's observer of a run.

    Notices go to stderr as they come; the progress bar is drawn on stderr when it is a
    terminal. What had finished when a run was interrupted is kept in :attr:`partial` for the
    command to print.
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self.progress: Progress | None = None
        self.partial: Any = None

    def notice(self, text: str) -> None:
        print(text, file=sys.stderr)

    def started(self, runs: int) -> None:
        self.progress = Progress(runs, self.label)

    def run_finished(self, *, error: bool) -> None:
        if self.progress is not None:
            self.progress.advance(error=error)

    def stopped(self) -> None:
        if self.progress is not None:
            self.progress.close()
            self.progress = None

    def interrupted(self, results: Any) -> None:
        self.partial = results
