"""One stop signal ends a run of the toolkit's own suite, and leaves no process behind.

A slice of the suite whose tests drive the real ``claude`` CLI is run by a ``pytest`` of its own
(on two xdist workers, or serially); once a ``claude`` process runs under it, a stop signal goes
to that ``pytest`` alone (as ``kill`` sends it) or to its whole process group (as Ctrl-C in a
terminal sends it). It ends promptly, says it was interrupted, and nothing it started is left:
this process adopts the orphans of what it starts (see ``tests/conftest.py``), so whatever
outlives the ``pytest`` shows up among this process's children.
"""

from __future__ import annotations

import os
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

STOP_WITHIN_S = 60.0
"""A bound that only a suite that went on breaks: on an idle machine it stops in a few seconds,
on a loaded one it may take longer to unwind the CLI run and its workers."""


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


def wait_for_claude(pytest_process: subprocess.Popen[str]) -> None:
    """Until a ``claude`` process runs under the suite (it started a CLI run)."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert pytest_process.poll() is None, "the slice ended before any claude run started"
        if any("claude" in cmd for cmd in descendants(pytest_process.pid).values()):
            return
        time.sleep(0.2)
    pytest.fail("no claude process started under the suite within 240 s")


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
def test_one_stop_signal_ends_the_suite_inside_a_cli_run(claude_bin, workers, signum, to_group):
    before = set(descendants(os.getpid()))
    env = {**os.environ, "SKILLTEST_CLAUDE": str(claude_bin)}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", workers]
    suite = subprocess.Popen(
        [*command, *SLICE],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a group of its own, as a terminal gives a command
    )
    try:
        wait_for_claude(suite)
        signalled = time.monotonic()
        if to_group:
            os.killpg(suite.pid, signum)
        else:
            suite.send_signal(signum)
        try:
            out, _ = suite.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the suite went on for 120 s after {signal.Signals(signum).name}")
        took = time.monotonic() - signalled
    finally:
        if suite.poll() is None:
            os.killpg(suite.pid, signal.SIGKILL)
            suite.wait()
    left = {pid: cmd for pid, cmd in descendants(os.getpid()).items() if pid not in before}
    for pid in left:  # this test's own leftovers end here, whatever it asserts
        os.kill(pid, signal.SIGKILL)
    assert suite.returncode == pytest.ExitCode.INTERRUPTED, out
    assert "KeyboardInterrupt" in out
    assert left == {}
    print(f"stopped {took:.1f} s after the signal")
    assert took < STOP_WITHIN_S, out
