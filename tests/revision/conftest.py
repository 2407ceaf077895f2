"""The repository the ``--against`` tests read a previous revision of the skill from."""

from __future__ import annotations

import shutil
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
    """Three commits: the test module's ``PROJECT`` folder (its suite demo.yaml and model script
    model.yaml) with no skill yet, then skills/demo/SKILL.md as the module's ``OLD_SKILL``, then
    as its ``NEW_SKILL`` (HEAD)."""
    module = request.module
    root = shutil.copytree(module.PROJECT, tmp_path / "repo")
    git(root, "init", "-q")
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
