"""The real ``claude`` CLI run by hand, outside skilltest, for tests of the machinery it talks to
(the emulator, a world's proxy, the MCP relay): one ``claude -p`` in a fresh HOME and cwd, no
settings files read, Claude Code's own skills and built-in plugins off, stream-json out."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# Claude Code's own skills and built-in plugins off, so only what a test creates is listed.
ISOLATION_SETTINGS = {
    "disableBundledSkills": True,
    "enabledPlugins": {
        "cc-plugin-agents-md@builtin": False,
        "cc-plugin-privacy@builtin": False,
        "cc-plugin-plugin-authoring@builtin": False,
    },
}


def bare_env(home: Path) -> dict[str, str]:
    """A bare environment for the CLI: PATH, ``home`` as HOME, a fake key, no telemetry."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "ANTHROPIC_API_KEY": "sk-fake",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def run_bare_claude(
    claude: Path,
    workdir: Path,
    prompt: str,
    *flags: str,
    env: Mapping[str, str],
    setting_sources: str = "",
    settings: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Runs ``claude -p PROMPT *flags`` with HOME and cwd in ``workdir/home`` and ``workdir/cwd``.

    Args:
        env: Added to a bare environment (PATH, HOME, a fake key, no telemetry); it names the
            emulator in ``ANTHROPIC_BASE_URL``.
        setting_sources: ``--setting-sources``; ``project`` reads ``cwd/.claude``.
        settings: Merged over :data:`ISOLATION_SETTINGS` into ``--settings``.

    Returns:
        The stream-json events, once the CLI exited 0 (anything else fails the test).
    """
    home, cwd = workdir / "home", workdir / "cwd"
    home.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(exist_ok=True)
    done = subprocess.run(
        [
            *(str(claude), "-p", prompt, "--output-format", "stream-json", "--verbose"),
            *("--setting-sources", setting_sources),
            *("--settings", json.dumps({**ISOLATION_SETTINGS, **(settings or {})})),
            *flags,
        ],
        cwd=cwd,
        env={**bare_env(home), **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"claude exited {done.returncode}: {done.stderr[-2000:]}"
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def blocks(events: list[dict[str, Any]], role: str, kind: str) -> list[dict[str, Any]]:
    """The content blocks of type ``kind`` in the ``role`` messages (assistant or user)."""
    found = []
    for event in events:
        if event.get("type") == role:
            content = event["message"]["content"]
            if isinstance(content, list):
                found += [block for block in content if block.get("type") == kind]
    return found


def result_of(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The one result event."""
    results = [event for event in events if event.get("type") == "result"]
    assert len(results) == 1, results
    return results[0]
