"""A replay that misses, at ``-j 1``, leaves no run sandbox and no process behind.

The example scenario is recorded through the real ``claude`` CLI against the emulator; then the
skill changes, so that the replay misses part way (the request after the skill is loaded) or the
suite's prompt changes, so that it misses at once. Claude Code writes its session log as it
ends, in the run's ``$HOME``: the run's folder must be gone all the same once the command ends.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bad_input.commands import clean_env, skilltest
from tests.bad_input.test_stop import processes_of, sandboxes

pytestmark = pytest.mark.cli

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def temp() -> Iterator[Path]:
    """A short temp folder for the runs' sandboxes (Claude Code's sockets need short paths)."""
    folder = Path(tempfile.mkdtemp(prefix="miss-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def recorded(root: Path, env: dict[str, str]) -> Path:
    """The example suite, its skill and model script under ``root``, one scenario recorded."""
    shutil.copytree(REPO / "skills" / "lgtm", root / "skills" / "lgtm")
    (root / "tests" / "scenarios").mkdir(parents=True)
    (root / "tests" / "model-scripts").mkdir()
    shutil.copy(REPO / "tests" / "scenarios" / "lgtm.yaml", root / "tests" / "scenarios")
    shutil.copy(
        REPO / "tests" / "model-scripts" / "lgtm.scenarios.yaml", root / "tests" / "model-scripts"
    )
    suite = root / "tests" / "scenarios" / "lgtm.yaml"
    argv = ["scenarios", str(suite), "--backend", "emulator", "--record", "cassettes", "-k", "1",
            "--only", "investigate-error-spike", "--skill-only", "--allow-inconclusive",
            "--output-dir", "recorded"]  # fmt: skip
    done = skilltest(argv, root, env)
    assert done.returncode == 0, done.stdout + done.stderr
    return suite


@pytest.mark.parametrize("change", ["the skill", "the prompt"])
def test_a_replay_miss_at_j_1_leaves_no_sandbox_and_no_process(tmp_path, claude_bin, temp, change):
    env = clean_env(tmp_path, SKILLTEST_CLAUDE=str(claude_bin), TMPDIR=str(temp))
    suite = recorded(tmp_path, env)
    if change == "the skill":
        with (tmp_path / "skills" / "lgtm" / "SKILL.md").open("a") as skill:
            skill.write("\nAlways say which dashboard you used.\n")
    else:
        text = suite.read_text()
        suite.write_text(text.replace("500 errors", "503 errors", 1))
    argv = ["scenarios", str(suite), "--replay", "cassettes", "-j", "1", "-k", "1",
            "--only", "investigate-error-spike", "--skill-only", "--output-dir", "replayed"]  # fmt: skip
    done = skilltest(argv, tmp_path, env)
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "replay miss: cassettes/lgtm/investigate-error-spike/with_skill.yaml" in said
    assert "Traceback" not in said
    assert sandboxes(temp) == []
    assert processes_of(temp) == []
