"""Shared fixtures: paths of the repository, the transcript corpus and the claude binary."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skilltest.claude.binary import resolve_claude
from skilltest.errors import ClaudeNotFoundError

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = REPO_ROOT / "tests" / "fixtures"
"""Real Claude Code output (stream-json and the other formats), kept in the repository."""
FAKE_CLAUDE = Path(__file__).with_name("fake_claude.py")


@pytest.fixture(autouse=True)
def _no_live_credentials(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never reach the live API: credentials from the developer's shell are removed.

    Only tests marked ``live`` (opt-in with ``pytest -m live``) keep them.
    """
    if request.node.get_closest_marker("live"):
        return
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


@pytest.fixture(autouse=True)
def _no_ci_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """The toolkit's own test runs never append to the CI job's step summary."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture
def claude_bin() -> Path:
    """The claude binary, found as the product finds it; skips with the reason when none.

    ``--claude``'s order: ``$SKILLTEST_CLAUDE``, ``.tools/`` (``make claude``), the cache of
    ``skilltest setup``, ``PATH``.
    """
    try:
        return resolve_claude(None).absolute()
    except ClaudeNotFoundError as exc:
        pytest.skip(f"no claude CLI: {exc}")


@pytest.fixture
def fake_claude(tmp_path: Path) -> Path:
    """An executable that behaves like ``claude -p`` in the ways ``fake_claude.py`` describes."""
    path = tmp_path / "bin" / "claude"
    path.parent.mkdir()
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLAUDE}" "$@"\n')
    path.chmod(0o755)
    return path
