"""Fixtures of the scenario tests: a fake claude binary for process-level tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

FAKE_CLAUDE = Path(__file__).with_name("fake_claude.py")


@pytest.fixture
def fake_claude(tmp_path: Path) -> Path:
    """An executable that behaves like ``claude -p`` in the ways ``fake_claude.py`` describes."""
    path = tmp_path / "bin" / "claude"
    path.parent.mkdir()
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLAUDE}" "$@"\n')
    path.chmod(0o755)
    return path
