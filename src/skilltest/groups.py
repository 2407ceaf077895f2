"""Stopping a child's whole process group, with a grace unless the run is being interrupted.

A child (a ``claude`` process, an outcome check's command) runs in a session of its own, so the
tools it started go with it. Stopping it sends SIGTERM to the group, waits :data:`KILL_GRACE_S`
for it to exit, then sends SIGKILL. Once a stop signal reached the run (Ctrl-C, SIGTERM: see
:func:`interrupt`), there is no grace any more: a group stopped after that is killed at once, so
that one Ctrl-C ends the command promptly even while workers are still winding down.

A group is not the whole story: the ``claude`` CLI starts its Bash tool's commands in sessions
of their own, which a signal to its group never reaches and which outlive it. A run therefore
also marks its child's environment (:data:`MARK`, inherited by everything the child starts) and,
once the run is over, :func:`kill_marked` ends whatever still carries the mark.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

KILL_GRACE_S = 2.0
"""How long a process group has to exit after SIGTERM before SIGKILL."""

MARK = "SKILLTEST_RUN_MARK"
"""The environment variable that marks every process a run started, however deep."""

_PROC = Path("/proc")

_interrupted = False


def new_mark() -> str:
    """A value for :data:`MARK` that no other run shares."""
    import secrets  # a run's processes are marked; a command that starts none never needs it

    return secrets.token_hex(12)


def kill_marked(mark: str) -> int:
    """SIGKILL to every process whose environment holds ``MARK=mark``, and a wait (at most
    :data:`KILL_GRACE_S`) until they are gone, so that nothing writes into the run's folders
    once it returns; how many there were.

    Reads ``/proc`` (Linux); where there is none, processes cannot be found this way and nothing
    is done.
    """
    needle = f"\0{MARK}={mark}\0".encode()
    me = os.getpid()
    killed: list[int] = []
    try:
        entries = [entry for entry in os.listdir(_PROC) if entry.isdigit()]
    except OSError:
        return 0
    for entry in entries:
        pid = int(entry)
        if pid == me:
            continue
        try:
            environ = (_PROC / entry / "environ").read_bytes()
        except OSError:  # gone already, or not ours to read
            continue
        if needle in b"\0" + environ + b"\0":
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
    left, deadline = killed, time.monotonic() + KILL_GRACE_S
    while left and time.monotonic() < deadline:
        time.sleep(0.01)
        left = [pid for pid in left if _running(pid)]
    return len(killed)


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def interrupt() -> None:
    """Marks the run as interrupted: from now on, groups are killed without a grace."""
    global _interrupted
    _interrupted = True


def clear_interrupt() -> None:
    """Ends the interruption (the interrupted run has unwound)."""
    global _interrupted
    _interrupted = False


def interrupted() -> bool:
    """Whether a stop signal reached the run that is unwinding."""
    return _interrupted


def signal_group(process: asyncio.subprocess.Process, sig: int) -> None:
    """Sends ``sig`` to the process group ``process`` leads; nothing if it is gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


async def stop_group(process: asyncio.subprocess.Process) -> None:
    """SIGTERM to the process group, then SIGKILL if it lingers (at once when the run is
    interrupted, or when the wait itself is cancelled); always ends with SIGKILL to the group,
    since tools the child started may outlive it."""
    import asyncio  # here: a command that stops no process never imports the event loop

    if not _interrupted:
        signal_group(process, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), KILL_GRACE_S)
        except TimeoutError:
            pass
        except asyncio.CancelledError:
            await _kill(process)
            raise
    await _kill(process)


async def _kill(process: asyncio.subprocess.Process) -> None:
    import asyncio

    signal_group(process, signal.SIGKILL)
    # The wait for a killed group is short, and bounded all the same.
    with contextlib.suppress(TimeoutError, asyncio.CancelledError):
        await asyncio.wait_for(process.wait(), KILL_GRACE_S)
