"""A cassette cut in half, replayed with several runs at once: the command names the cassette and
exits 2 promptly, and a Ctrl-C while it stops ends it at once.

Both run ``python -m skilltest`` as a person does, with a deadline: a command that does not exit
is the failure these tests look for.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import REPO_ROOT
from ..scenarios.test_cli import _alive
from .examples import claude_or_skip

PROMPT_S = 60.0
"""What tells a prompt end from a hang (the command once lived on for an hour, and the stubborn
run below would end by its own 120 s limit), with room for a loaded machine."""
BROKEN = Path("lgtm", "investigate-error-spike", "with_skill.yaml")
"""The cassette of the first run of the example lgtm suite."""


def cut_in_half(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.cli
def test_a_cassette_cut_in_half_ends_the_suite_with_exit_2_and_names_it(tmp_path):
    cassettes = tmp_path / "cassettes"
    shutil.copytree(REPO_ROOT / "tests" / "cassettes", cassettes)
    cut_in_half(cassettes / BROKEN)
    command = [
        sys.executable, "-m", "skilltest", "scenarios", "tests/scenarios/lgtm.yaml",
        "--claude", str(claude_or_skip()), "--replay", str(cassettes), "-j", "4",
        "--output-dir", str(tmp_path / "out"),
    ]  # fmt: skip
    started = time.monotonic()
    process = subprocess.Popen(
        command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        _, err = process.communicate(timeout=PROMPT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"the replay was still running {PROMPT_S:g} s after it started")
    assert time.monotonic() - started < PROMPT_S
    assert process.returncode == 2, err
    assert f"skilltest: error: {cassettes / BROKEN}:" in err
    assert "re-record the cassette with --record DIR" in err
    assert "Traceback" not in err


SUITE = """\
skill: demo
repetitions: 1
scenarios:
  - {id: stubborn, prompt: stubborn, config: {timeout_ms: 120000}, expected: {required_patterns: [x]}}
  - {id: quick, prompt: echo, expected: {required_patterns: [lgtm]}}
  - {id: broken, prompt: echo, expected: {required_patterns: [lgtm]}}
"""


def test_one_ctrl_c_while_the_suite_stops_on_a_broken_cassette_ends_it(fake_claude, tmp_path):
    # `quick` finishes, then `broken` meets its cassette while `stubborn` still runs, and the
    # suite stops: `stubborn`'s CLI ignores SIGTERM, so stopping it takes its grace. Ctrl-C
    # then must end the command at once, and leave no CLI behind.
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("---\nname: demo\n---\nbody\n")
    (tmp_path / "demo.yaml").write_text(SUITE)
    cassette = tmp_path / "cassettes" / "demo" / "broken" / "with_skill.yaml"
    cassette.parent.mkdir(parents=True)
    shutil.copyfile(REPO_ROOT / "tests" / "cassettes" / BROKEN, cassette)
    cut_in_half(cassette)
    temp = tmp_path / "temp"  # where the run sandboxes go
    temp.mkdir()
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "skilltest", "scenarios", "demo.yaml", "--claude", str(fake_claude),
        "--replay", "cassettes", "--skill-only", "-j", "2", "--output-dir", str(out),
    ]  # fmt: skip
    process = subprocess.Popen(
        command,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(temp)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stubborn: int | None = None
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and process.poll() is None:
            pid_files = list(temp.glob("skilltest-run-*/work/claude.pid"))
            if pid_files and pid_files[0].read_text():
                stubborn = int(pid_files[0].read_text())
            if stubborn is not None and list((out / "demo" / "quick").glob("*.ndjson")):
                break
            time.sleep(0.05)
        assert stubborn is not None, "the stubborn run never started"
        time.sleep(0.5)  # `broken` has met its cassette: the suite is stopping
        assert process.poll() is None, "the suite ended before Ctrl-C"

        process.send_signal(signal.SIGINT)
        signalled = time.monotonic()
        # One Ctrl-C ends it: a second is never sent.
        try:
            _, err = process.communicate(timeout=PROMPT_S)
        except subprocess.TimeoutExpired:
            pytest.fail("one Ctrl-C did not end the command")
        assert time.monotonic() - signalled < PROMPT_S
        assert process.returncode == 130, err
        assert "skilltest: interrupted" in err
        assert "Traceback" not in err
        assert not _alive(stubborn)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        if stubborn is not None and _alive(stubborn):
            os.kill(stubborn, signal.SIGKILL)
