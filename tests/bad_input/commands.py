"""Running ``python -m skilltest`` as a person runs it, for the hostile-input tests, with one
bound that only a hang meets.

The machines these tests run on have two cores shared by several jobs: under a load of twenty, a
case that takes three seconds on an idle machine takes a minute. Nothing here limits how long a
case may take; :data:`HANG_S` only tells a command that never ends from a slow one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HANG_S = 600.0
"""A command still running after ten minutes hangs: every case ends in seconds on an idle
machine, so no load a shared machine sees comes near it (pytest's own limit, 900 s, is the last
resort). How fast a command ends is a benchmark's business, never a test's."""


def skilltest(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Runs ``python -m skilltest ARGV`` to its end; fails the test if it hangs."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "skilltest", *argv],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"skilltest {' '.join(argv)}: still running after {HANG_S:g} s")


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a command: its own HOME and TMPDIR under ``tmp_path``, no credentials
    but those in ``extra``, no ``GITHUB_STEP_SUMMARY``."""
    home, temp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir(exist_ok=True)
    temp.mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith("ANTHROPIC_")}
    env.pop("GITHUB_STEP_SUMMARY", None)
    env.update(HOME=str(home), TMPDIR=str(temp), **extra)
    return env
