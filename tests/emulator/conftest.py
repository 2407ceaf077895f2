"""Fixtures for driving the real claude CLI against the emulator."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def find_claude() -> Path | None:
    """``$SKILLTEST_CLAUDE``, else the pinned ``.tools`` install, else ``claude`` on PATH."""
    configured = os.environ.get("SKILLTEST_CLAUDE")
    if configured:
        return Path(configured) if Path(configured).is_file() else None
    pinned = REPO_ROOT / ".tools" / "node_modules" / ".bin" / "claude"
    if pinned.is_file():
        return pinned
    on_path = shutil.which("claude")
    return Path(on_path) if on_path else None


@pytest.fixture
def claude() -> Path:
    """The claude binary; skips with the reason when there is none."""
    path = find_claude()
    if path is None:
        configured = os.environ.get("SKILLTEST_CLAUDE")
        reason = (
            f"SKILLTEST_CLAUDE={configured} is not a file"
            if configured
            else "no claude CLI: set SKILLTEST_CLAUDE, run `make claude` "
            "(installs .tools/node_modules/.bin/claude) or put claude on PATH"
        )
        pytest.skip(reason)
    return path
