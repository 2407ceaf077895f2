"""One stop signal ends a run of the toolkit's own suite within 10 s, and leaves no process behind.

A slice of the suite whose tests drive the real ``claude`` CLI is run by a ``pytest`` of its own
(on two xdist workers, or serially); once a ``claude`` process runs under it, a stop signal goes
to that ``pytest`` alone (as ``kill`` sends it) or to its whole process group (as Ctrl-C in a
terminal sends it). It ends within 10 s, says it was interrupted, and nothing it started is
left: this process adopts the orphans of what it starts (see ``tests/conftest.py``), so whatever
outlives the ``pytest`` shows up among this process's children.

The slice's ``claude`` is a wrapper that says through a named pipe when it starts, then runs
the real one: the signal goes out on that event, not after polling for the process.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import REPO_ROOT

SLICE = (
    "tests/scenarios/test_e2e.py",
    "tests/world/test_claude_world.py",
    "tests/scenarios/test_outcomes_e2e.py",
)
"""Test files that spend most of their time inside in-process CLI runs of ``claude``."""

STOP_WITHIN_S = 10.0
"""How soon after the signal the suite has ended, on a machine with a core free for each
worker. On a busier machine everything runs slower by about its load per core, and so may the
stop: the bound grows by that factor (see :func:`stop_bound`)."""

HANG_S = 240.0
"""Bounds for a hang only: the first CLI run to start, the suite to end after the signal."""


def processes() -> dict[int, tuple[int, str]]:
    """Every process: its parent and its command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if state not in ("Z", "X"):  # a zombie has ended: only its exit status is left
            found[int(entry.name)] = (int(parent), cmdline)
    return found


def descendants(pid: int) -> dict[int, str]:
    table = processes()
    found, frontier = {}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, (its_parent, cmdline) in table.items():
            if its_parent == parent and child not in found:
                found[child] = cmdline
                frontier.append(child)
    return found


def announcing_claude(folder: Path, real: Path) -> tuple[Path, int]:
    """A ``claude`` that writes a line to a named pipe as it starts, then runs the real one; and
    the pipe's read end, opened before any run can start (so a start never waits to write)."""
    pipe = folder / "claude-started"
    os.mkfifo(pipe)
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    wrapper = folder / "claude"
    wrapper.write_text(f'#!/bin/sh\necho started > "{pipe}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper, reader


def wait_for_a_start(reader: int, suite: subprocess.Popen[str]) -> None:
    """Until a ``claude`` of the slice has started (its wrapper wrote to the pipe)."""
    ready, _, _ = select.select([reader], [], [], HANG_S)
    assert suite.poll() is None, "the slice ended before any claude run started"
    if not ready:
        pytest.fail(f"no claude run started under the suite within {HANG_S:g} s")


def stop_bound(load_per_core: float) -> float:
    """The stop's bound: :data:`STOP_WITHIN_S`, times the load per core when above one."""
    return STOP_WITHIN_S * max(1.0, load_per_core)


def load_per_core() -> float:
    """The machine's load over the last minute, per core."""
    return os.getloadavg()[0] / (os.cpu_count() or 1)


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="reads processes from /proc")
@pytest.mark.parametrize(
    ("workers", "signum", "to_group"),
    [
        ("2", signal.SIGINT, False),
        ("2", signal.SIGINT, True),
        ("2", signal.SIGTERM, False),
        ("0", signal.SIGINT, False),
        ("0", signal.SIGTERM, False),
    ],
    ids=["xdist-sigint", "xdist-ctrl-c", "xdist-sigterm", "serial-sigint", "serial-sigterm"],
)
def test_one_stop_signal_ends_the_suite_inside_a_cli_run(
    claude_bin, tmp_path, workers, signum, to_group
):
    before = set(descendants(os.getpid()))
    wrapper, reader = announcing_claude(tmp_path, claude_bin)
    env = {**os.environ, "SKILLTEST_CLAUDE": str(wrapper)}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", workers]
    suite = subprocess.Popen(
        [*command, "--basetemp", str(tmp_path / "slice"), *SLICE],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a group of its own, as a terminal gives a command
    )
    try:
        wait_for_a_start(reader, suite)
        load = load_per_core()
        signalled = time.monotonic()
        if to_group:
            os.killpg(suite.pid, signum)
        else:
            suite.send_signal(signum)
        try:
            out, _ = suite.communicate(timeout=HANG_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the suite went on for {HANG_S:g} s after {signal.Signals(signum).name}")
        took = time.monotonic() - signalled
    finally:
        os.close(reader)
        if suite.poll() is None:
            os.killpg(suite.pid, signal.SIGKILL)
            suite.wait()
    left = {pid: cmd for pid, cmd in descendants(os.getpid()).items() if pid not in before}
    for pid in left:  # this test's own leftovers end here, whatever it asserts
        os.kill(pid, signal.SIGKILL)
    assert suite.returncode == pytest.ExitCode.INTERRUPTED, out
    assert "KeyboardInterrupt" in out
    assert left == {}
    bound = stop_bound(max(load, load_per_core()))
    said = f"stopped {took:.1f} s after the signal (bound {bound:.0f} s at load {load:.1f}/core)"
    print(said)
    assert took < bound, f"{said}\n{out}"
