"""Finding the ``claude`` CLI and its version.

Order: an explicit path (``--claude``), ``$SKILLTEST_CLAUDE``, the project's pinned install in
``.tools/node_modules/.bin/claude`` (from ``make claude``), then ``claude`` on ``PATH``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from skilltest.errors import ClaudeNotFoundError

PINNED_VERSION = "2.1.328"
"""The Claude Code version the Makefile installs and the parser is tested against."""

KNOWN_VERSIONS = frozenset({PINNED_VERSION})
"""Versions whose stream-json output and isolation flags have been verified."""

INSTALL_HINT = "run `make claude` (installs @anthropic-ai/claude-code@2.1.328 into .tools/)"


def _pinned_candidates() -> list[Path]:
    here = Path(__file__).resolve()
    roots = [Path.cwd(), *Path.cwd().parents, *here.parents]
    return [root / ".tools" / "node_modules" / ".bin" / "claude" for root in roots]


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _executable(path: Path, given_as: str) -> Path:
    """``path`` when it is an executable file; otherwise the error naming where it was given."""
    if not _is_executable(path):
        raise ClaudeNotFoundError(f"{given_as}: no executable file there\n  fix: {INSTALL_HINT}")
    return path


def resolve_claude(explicit: Path | str | None = None) -> Path:
    """The ``claude`` binary to run.

    Raises:
        ClaudeNotFoundError: the given path does not exist, or nothing was found.
    """
    if explicit:
        return _executable(Path(explicit), f"--claude {explicit}")
    env = os.environ.get("SKILLTEST_CLAUDE")
    if env:
        return _executable(Path(env), f"SKILLTEST_CLAUDE={env}")
    for candidate in _pinned_candidates():
        if _is_executable(candidate):
            return candidate
    found = shutil.which("claude")
    if found:
        return Path(found)
    raise ClaudeNotFoundError(f"no `claude` binary found\n  fix: {INSTALL_HINT}")


@cache
def claude_version(path: Path) -> str:
    """The version ``claude --version`` prints (e.g. ``2.1.328``).

    Raises:
        ClaudeNotFoundError: the binary does not run or prints no version.
    """
    try:
        done = subprocess.run(
            [str(path), "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClaudeNotFoundError(f"{path} does not run: {exc}\n  fix: {INSTALL_HINT}") from exc
    match = re.search(r"\d+\.\d+\.\d+", done.stdout)
    if done.returncode != 0 or match is None:
        raise ClaudeNotFoundError(
            f"{path} --version failed (exit {done.returncode}): "
            f"{(done.stderr or done.stdout).strip()[:200]}\n  fix: {INSTALL_HINT}"
        )
    return match.group(0)


@dataclass(frozen=True)
class ClaudeBinary:
    """A ``claude`` executable and the version it reported."""

    path: Path
    """The executable."""
    version: str
    """What ``claude --version`` printed, e.g. ``2.1.328``."""

    @property
    def known(self) -> bool:
        """Whether this version is one the isolation flags were verified against."""
        return self.version in KNOWN_VERSIONS

    @property
    def warning(self) -> str | None:
        """A line for stderr when the version is not a known one."""
        if self.known:
            return None
        return (
            f"claude at {self.path} is version {self.version}, not one of "
            f"{', '.join(sorted(KNOWN_VERSIONS))}; running it anyway and recording the version "
            f"(the isolation flags were verified on {PINNED_VERSION}; {INSTALL_HINT})"
        )


def find_claude(explicit: Path | str | None = None) -> ClaudeBinary:
    """The ``claude`` binary (``--claude``, ``$SKILLTEST_CLAUDE``, ``.tools/``, ``PATH``).

    Raises:
        ClaudeNotFoundError: nothing usable was found; the message gives the install command.
    """
    # Absolute: each run starts in its own sandbox, where a relative path means nothing.
    path = resolve_claude(explicit).absolute()
    return ClaudeBinary(path=path, version=claude_version(path))
