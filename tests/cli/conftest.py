"""The folder the ``validate`` tests run in."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.projects import write_skill


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working directory, holding the skill ``demo`` (name in its front matter only)."""
    write_skill(tmp_path, "---\nname: demo\n---\nbody\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path
