"""Nothing a run started outlives it: the mark in the environment finds what left its group."""

from __future__ import annotations

import os
import subprocess
import sys

from skilltest.groups import MARK, kill_marked, new_mark

SLEEP = [sys.executable, "-c", "import time; time.sleep(60)"]


def test_a_marked_process_in_a_session_of_its_own_is_killed_and_others_are_not():
    mark = new_mark()
    marked = subprocess.Popen(SLEEP, env={**os.environ, MARK: mark}, start_new_session=True)
    other = subprocess.Popen(SLEEP, env={**os.environ, MARK: new_mark()}, start_new_session=True)
    try:
        # Popen returns once each has exec'd: their environment is the one given.
        assert kill_marked(mark) == 1
        assert marked.wait(timeout=60) == -9
        assert other.poll() is None
        assert kill_marked(mark) == 0
    finally:
        for process in (marked, other):
            process.kill()
            process.wait()


def test_marks_differ_run_to_run():
    assert len({new_mark() for _ in range(100)}) == 100
