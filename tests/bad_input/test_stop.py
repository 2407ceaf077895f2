"""A stop signal ends ``skilltest scenarios`` and ``skilltest triggers`` at any moment, also
while a controlled world runs: exit 130 (SIGINT) or 143 (SIGTERM), the results file written and
marked interrupted, no run sandbox left in the temp folder and no process the run started left
running.

The commands run as a person runs them (``python -m skilltest``), through the real ``claude``
CLI against the emulator, each with a temp folder of its own; the signal goes when a run's
sandbox appears (the first, or a later one). How fast the stop is is the business of
``scripts/bench_stop.py``; here a bound only tells a hang from a slow machine.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.bad_input.commands import HANG_S, clean_env

pytestmark = pytest.mark.cli

REPO = Path(__file__).resolve().parents[2]

SUITES = {
    "scenarios in a world": ("scenarios", REPO / "tests" / "scenarios" / "tickets.yaml"),
    "scenarios": ("scenarios", REPO / "tests" / "scenarios" / "lgtm.yaml"),
    "triggers": ("triggers", REPO / "tests" / "triggers" / "lgtm.yaml"),
}


def sandboxes(temp: Path) -> list[Path]:
    return sorted(temp.glob("skilltest-run-*"))


def processes_of(temp: Path) -> list[str]:
    """The processes whose environment or working directory lies in ``temp`` (what a run
    started carries its sandbox's TMPDIR and HOME)."""
    found = []
    needle = str(temp).encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path("/proc", entry, "environ").read_bytes()
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if needle in environ or cwd.startswith(str(temp)):
            found.append(f"{entry}: {Path('/proc', entry, 'cmdline').read_bytes()[:200]!r}")
    return found


@pytest.mark.parametrize(
    ("suite", "sig", "nth"),
    [
        ("scenarios in a world", signal.SIGINT, 1),
        ("scenarios in a world", signal.SIGTERM, 3),
        ("scenarios", signal.SIGTERM, 2),
        ("triggers", signal.SIGINT, 2),
    ],
    ids=["world SIGINT first run", "world SIGTERM third run", "SIGTERM", "triggers SIGINT"],
)
def test_a_stop_signal_ends_the_run_with_its_results_and_nothing_left(
    tmp_path, claude_bin, suite, sig, nth
):
    layer, path = SUITES[suite]
    results = tmp_path / "out" / "r.json"
    # A short temp folder: Claude Code's sandbox puts its sockets in the run's, and a socket's
    # path may not exceed 107 bytes (pytest's folders are long).
    temp = Path(tempfile.mkdtemp(prefix="stop-", dir="/tmp"))
    env = clean_env(
        tmp_path, SKILLTEST_CLAUDE=str(claude_bin), TMPDIR=str(temp), PYTHONFAULTHANDLER="1"
    )
    argv = [layer, str(path), "--backend", "emulator", "-k", "2", "-j", "2", "--results",
            str(results), "--output-dir", str(tmp_path / "out" / "runs")]  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "skilltest", *argv],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen: set[Path] = set()
        deadline = time.monotonic() + HANG_S
        # The signal goes as the nth run's sandbox appears: a run is being prepared or running.
        while len(seen) < nth and process.poll() is None:
            assert time.monotonic() < deadline, "no run started"
            seen.update(sandboxes(temp))
            time.sleep(0.02)
        assert process.poll() is None, process.communicate()
        process.send_signal(sig)
        try:
            out, err = process.communicate(timeout=HANG_S)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)  # every thread's stack, on stderr
            pytest.fail(f"still running {HANG_S:g} s after the signal:\n{process.communicate()[1]}")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        left = [
            f"{folder}: {sorted(map(str, folder.rglob('*')))[:20]}" for folder in sandboxes(temp)
        ]
        shutil.rmtree(temp, ignore_errors=True)
    assert process.returncode == 128 + sig, out + err
    assert "Traceback" not in err
    document = json.loads(results.read_text())
    assert (document["complete"], document["interrupted"]) == (False, True)
    assert left == []
    assert processes_of(temp) == []
