"""What a person sees of a ``--batch`` run while its batches are processed: on a terminal, the
progress bar says what the runs wait for; elsewhere, a line when a round's status changes."""

from __future__ import annotations

import io

import pytest

from skilltest.cli.display import Display
from skilltest.flow.options import BatchProgress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def progress(status: str, polls: int, elapsed_s: float, **counts: int) -> BatchProgress:
    return BatchProgress(
        round=2,
        batches=("msgbatch_01a",),
        status=status,
        requests=6,
        counts={"processing": 0, **counts},
        polls=polls,
        elapsed_s=elapsed_s,
    )


def test_on_a_terminal_the_bar_says_what_the_runs_wait_for(monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    display = Display("pressure")
    display.started(6)

    display.batch_polled(progress("in_progress", 3, 185.0, processing=6))
    waiting = terminal.getvalue().split("\r")[-1]
    display.batch_polled(progress("ended", 4, 190.0, succeeded=5, expired=1))
    after = terminal.getvalue().split("\r")[-1]

    assert waiting.startswith("pressure [------------------------------] 0/6 runs")
    assert waiting.endswith(
        "  batch round 2: 1 batch(es), 6 requests, in_progress, 3 poll(s), 3m05s"
    )
    # Once the round has ended the bar counts runs again; the longer line leaves no tail.
    assert "batch round" not in after
    assert len(after) == len(waiting)


@pytest.mark.parametrize("elapsed", [4.2, 7300.0])
def test_off_a_terminal_a_line_when_the_status_changes(capsys, elapsed):
    display = Display("pressure")
    display.started(6)

    display.batch_polled(progress("in_progress", 1, elapsed, processing=6))
    display.batch_polled(progress("in_progress", 2, elapsed, processing=6))
    display.batch_polled(progress("ended", 3, elapsed, succeeded=5, errored=1))

    shown = "4.2s" if elapsed < 60 else "2h01m"
    assert capsys.readouterr().err.splitlines() == [
        f"skilltest: batch round 2: 1 batch(es), 6 requests, in_progress, 1 poll(s), {shown}",
        f"skilltest: batch round 2: 1 batch(es), 6 requests, ended (5 succeeded, 1 errored), "
        f"3 poll(s), {shown}",
    ]
