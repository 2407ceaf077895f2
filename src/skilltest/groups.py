"""Stopping a child's whole process group, with a grace unless the run is being interrupted.

A child (a ``claude`` process, an outcome check's command) runs in a session of its own, so the
tools it started go with it. Stopping it sends SIGTERM to the group, waits :data:`KILL_GRACE_S`
for it to exit, then sends SIGKILL. Once a stop signal reached the run (Ctrl-C, SIGTERM: see
:func:`interrupt`), there is no grace any more: a group stopped after that is killed at once, so
that one Ctrl-C ends the command promptly even while workers are still winding down.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

KILL_GRACE_S = 2.0
"""How long a process group has to exit after SIGTERM before SIGKILL."""

_interrupted = False


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
    signal_group(process, signal.SIGKILL)
    # The wait for a killed group is short, and bounded all the same.
    with contextlib.suppress(TimeoutError, asyncio.CancelledError):
        await asyncio.wait_for(process.wait(), KILL_GRACE_S)
