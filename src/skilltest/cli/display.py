"""What a person sees while a suite runs: notices on stderr and a progress bar on a terminal."""

from __future__ import annotations

import sys
import time
from typing import Any

from skilltest.flow.options import BatchProgress, Observer
from skilltest.report.progress import Progress

BATCH_LINE_EVERY_S = 60.0
"""Off a terminal, a batch's progress line is printed when its status changes and at most this
often otherwise."""


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
        self._batch_said: tuple[int, str] | None = None
        self._batch_said_at = 0.0

    def notice(self, text: str) -> None:
        print(text, file=sys.stderr)

    def started(self, runs: int) -> None:
        self.progress = Progress(runs, self.label)

    def run_finished(self, *, error: bool) -> None:
        if self.progress is not None:
            self.progress.advance(error=error)

    def batch_polled(self, progress: BatchProgress) -> None:
        ended = ", ".join(
            f"{count} {kind}"
            for kind, count in progress.counts.items()
            if count and kind != "processing"
        )
        text = (
            f"batch round {progress.round}: {len(progress.batches)} batch(es), "
            f"{progress.requests} requests, {progress.status}"
            + (f" ({ended})" if ended else "")
            + f", {progress.polls} poll(s), {_duration(progress.elapsed_s)}"
        )
        if self.progress is not None and self.progress.enabled:
            self.progress.show("" if progress.status == "ended" else text)
            return
        now = time.monotonic()
        said = (progress.round, progress.status)
        if said != self._batch_said or now - self._batch_said_at >= BATCH_LINE_EVERY_S:
            print(f"skilltest: {text}", file=sys.stderr)
            self._batch_said, self._batch_said_at = said, now

    def stopped(self) -> None:
        if self.progress is not None:
            self.progress.close()
            self.progress = None

    def interrupted(self, results: Any) -> None:
        self.partial = results


def _duration(seconds: float) -> str:
    """``4.2s``, ``3m05s``, ``2h14m``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
