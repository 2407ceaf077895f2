"""Installing the pinned Claude Code CLI into skilltest's cache (``skilltest setup``).

The CLI is an npm package. ``npm install --prefix`` puts it into a folder of its own below
:func:`skilltest.claude.binary.cache_dir`, never a global install, and ``claude --version`` must
then print the pinned version. The install goes to a temporary folder beside the final one and
is moved into place only once it works, so a broken or interrupted install is never found.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skilltest.claude.binary import (
    PACKAGE,
    PINNED_VERSION,
    cached_claude,
    cached_install,
    claude_version,
)
from skilltest.errors import ConfigurationError

NPM_TIMEOUT_S = 900.0
"""How long one ``npm install`` may take (the package is a large native binary)."""
NPM_ERROR_TAIL_LINES = 15

NODE_HINT = (
    "install Node.js 18 or later with npm (https://nodejs.org, or your system's package "
    "manager: `apt-get install nodejs npm`, `brew install node`), then rerun `skilltest setup`; "
    "or point skilltest at a claude you already have with --claude PATH or SKILLTEST_CLAUDE"
)


@dataclass(frozen=True)
class Installed:
    """The outcome of :func:`install_claude`."""

    path: Path
    """The ``claude`` executable."""
    version: str
    """What it printed for ``--version``."""
    installed: bool
    """``False`` when it was already there and nothing was installed."""


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise ConfigurationError(
            f"`{name}` was not found on PATH: skilltest setup installs Claude Code "
            f"({PACKAGE}@{PINNED_VERSION}) with npm, which needs Node.js\n  fix: {NODE_HINT}"
        )
    return found


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(f"    {line}" for line in lines[-NPM_ERROR_TAIL_LINES:])


def install_claude(
    *,
    version: str = PINNED_VERSION,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Installed:
    """Installs ``@anthropic-ai/claude-code@version`` into skilltest's cache.

    Args:
        version: The CLI version; skilltest is verified against :data:`PINNED_VERSION`.
        force: Install again even when the cache already holds a working CLI.
        progress: Called with a line before each slow step.

    Raises:
        ConfigurationError: ``node`` or ``npm`` is missing, ``npm install`` fails (with the end
            of what it printed), or the installed CLI does not report ``version``.
    """
    target = cached_install(version)
    executable = cached_claude(version)
    if not force and executable.is_file() and os.access(executable, os.X_OK):
        try:
            found = claude_version(executable.absolute())
        except ConfigurationError:
            found = ""
        if found == version:
            return Installed(executable, found, installed=False)
    _tool("node")
    npm = _tool("npm")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f"{target.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    if progress is not None:
        progress(f"installing {PACKAGE}@{version} with npm into {target} ...")
    command = [
        npm,
        "install",
        "--prefix",
        str(staging),
        "--no-audit",
        "--no-fund",
        "--no-package-lock",
        "--loglevel=error",
        # A package npm already downloaded once (its own cache) installs without the network.
        "--prefer-offline",
        f"{PACKAGE}@{version}",
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise ConfigurationError(
            f"npm install {PACKAGE}@{version} did not finish within {NPM_TIMEOUT_S:g} s\n"
            "  fix: check that this machine reaches the npm registry (npm config get registry), "
            "then rerun `skilltest setup`"
        ) from exc
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise ConfigurationError(
            f"npm install {PACKAGE}@{version} failed (exit {done.returncode}); npm printed:\n"
            f"{_tail(done.stderr or done.stdout)}\n"
            "  fix: check that this machine reaches the npm registry (npm config get registry) "
            "and that Node.js is 18 or later (node --version), then rerun `skilltest setup`"
        )
    staged = staging / "node_modules" / ".bin" / "claude"
    try:
        found = claude_version(staged.absolute())
    except ConfigurationError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise ConfigurationError(
            f"npm installed {PACKAGE}@{version}, but its claude does not run: {exc}"
        ) from exc
    if found != version:
        shutil.rmtree(staging, ignore_errors=True)
        raise ConfigurationError(
            f"npm installed {PACKAGE}@{version}, but its claude reports version {found}\n"
            "  fix: clear npm's cache entry (npm cache clean --force) and rerun `skilltest setup`"
        )
    # The link node_modules/.bin/claude is relative, so the folder can move into place whole.
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    claude_version.cache_clear()
    return Installed(executable, found, installed=True)
