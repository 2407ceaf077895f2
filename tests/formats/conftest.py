"""A repository holding a skill as skill-creator leaves it: ``skills/xlsx-margins/`` with its
``evals/evals.json``, ``evals/trigger-eval.json`` and input files."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

SKILL_CREATOR = Path(__file__).resolve().parents[1] / "fixtures" / "skill-creator" / "xlsx-margins"


@pytest.fixture
def skill_repository(tmp_path: Path) -> Callable[[str], Path]:
    """Makes the repository, with ``script.yaml`` (the emulator's model script) at its root."""

    def make(script: str) -> Path:
        (tmp_path / ".git").mkdir()
        (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        shutil.copytree(SKILL_CREATOR, tmp_path / "skills" / "xlsx-margins")
        (tmp_path / "script.yaml").write_text(script)
        return tmp_path

    return make
