"""The repository the ``--against`` tests read a previous revision of the skill from."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def repo(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Three commits of the test module's suite: its ``SUITE`` (demo.yaml) and ``SCRIPT``
    (model.yaml) with no skill yet, then skills/demo/SKILL.md as ``OLD_SKILL``, then as
    ``NEW_SKILL`` (HEAD)."""
    module = request.module
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "demo.yaml").write_text(module.SUITE)
    (root / "model.yaml").write_text(module.SCRIPT)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "suite")
    skill = root / "skills" / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(module.OLD_SKILL)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "old skill")
    skill.write_text(module.NEW_SKILL)
    git(root, "commit", "-q", "-am", "new skill")
    return root
