"""Finding the ``claude`` CLI and its version.

Order: an explicit path (``--claude``), ``$SKILLTEST_CLAUDE``, a project's pinned install in
``.tools/node_modules/.bin/claude`` in the current folder or one above it (``make claude`` in
this repository), the pinned install ``skilltest setup`` keeps in the user's cache
(:func:`cached_claude`), then ``claude`` on ``PATH``. Nothing depends on where skilltest itself
is installed.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from skilltest.errors import ClaudeNotFoundError, ConfigurationError, InputError

PINNED_VERSION = "2.1.328"
"""The Claude Code version ``skilltest setup`` installs and the parser is tested against."""
PACKAGE = "@anthropic-ai/claude-code"
"""The npm package of the Claude Code CLI."""

KNOWN_VERSIONS = frozenset({PINNED_VERSION})
"""Versions whose stream-json output and isolation flags have been verified."""

INSTALL_HINT = (
    f"run `skilltest setup` (installs {PACKAGE}@{PINNED_VERSION} into skilltest's cache with "
    "npm; `make claude` in the skilltest repository), or pass --claude PATH"
)


def cache_dir() -> Path:
    """skilltest's own cache folder: ``$SKILLTEST_CACHE_DIR``, else ``$XDG_CACHE_HOME/skilltest``,
    else ``~/.cache/skilltest`` (``%LOCALAPPDATA%\\skilltest`` on Windows)."""
    given = os.environ.get("SKILLTEST_CACHE_DIR")
    if given:
        return Path(given).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg).expanduser() / "skilltest"
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "skilltest"
    return Path.home() / ".cache" / "skilltest"


VERSION_PATTERN = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?")
"""A release of the CLI as npm names it: ``2.1.332``."""


def check_version(version: str, *, location: str) -> str:
    """``version`` when it names a release of the CLI as npm does.

    Raises:
        InputError: anything else (a range, a tag, a path), naming ``location``.
    """
    if VERSION_PATTERN.fullmatch(version) is None:
        raise InputError(
            f"{version!r} is not a Claude Code version",
            location=location,
            fix=f"give a release as npm names it, e.g. {PINNED_VERSION}",
        )
    return version


def installed_claude(version: str) -> Path:
    """The ``claude`` of ``version``: the one ``skilltest setup --claude-version`` installed
    in the cache, else the one found without asking (``$SKILLTEST_CLAUDE``, ``.tools/``,
    ``PATH``) when it reports ``version``.

    Raises:
        InputError: no ``claude`` of that version, naming it and the install command.
    """
    for find in (lambda: _executable(cached_claude(version), "cache"), lambda: resolve_claude()):
        try:
            found = find()
            if claude_version(found.absolute()) == version:
                return found.absolute()
        except ConfigurationError:
            continue
    raise InputError(
        f"claude {version} is not installed",
        location="--claude-versions",
        fix=f"run `skilltest setup --claude-version {version}` (installs it beside the others "
        "in skilltest's cache)",
    )


def cached_install(version: str = PINNED_VERSION) -> Path:
    """The folder ``skilltest setup`` installs ``claude`` ``version`` into (an npm prefix)."""
    return cache_dir() / f"claude-code-{version}"


def cached_claude(version: str = PINNED_VERSION) -> Path:
    """Where the ``claude`` of :func:`cached_install` is (whether or not it is there yet)."""
    return cached_install(version) / "node_modules" / ".bin" / "claude"


def _project_candidates() -> list[Path]:
    # A project that pins its own CLI (`make claude` here) keeps it in .tools/ at its root,
    # which may be above the folder the command runs in.
    roots = [Path.cwd(), *Path.cwd().parents]
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
    for candidate in [*_project_candidates(), cached_claude()]:
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
    import subprocess  # running the CLI, not finding skilltest's cache folder

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
    """The ``claude`` binary (``--claude``, ``$SKILLTEST_CLAUDE``, ``.tools/``, the cache of
    ``skilltest setup``, ``PATH``).

    Raises:
        ClaudeNotFoundError: nothing usable was found; the message gives the install command.
    """
    # Absolute: each run starts in its own sandbox, where a relative path means nothing.
    path = resolve_claude(explicit).absolute()
    return ClaudeBinary(path=path, version=claude_version(path))
