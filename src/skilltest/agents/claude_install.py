"""Installing the pinned Claude Code CLI into skilltest's cache (``skilltest setup``).

The CLI is an npm package, installed as every agent's is (:func:`skilltest.agents.npm.npm_install`):
``npm install --prefix`` puts it into a folder of its own below
:func:`skilltest.claude.binary.cache_dir`, never a global install, and ``claude --version`` must
then print the pinned version. The install goes to a temporary folder beside the final one and
is moved into place only once it works, so a broken or interrupted install is never found.
"""

from __future__ import annotations

from collections.abc import Callable

from skilltest.agents.base import Installed
from skilltest.agents.npm import NpmAdvice, npm_install
from skilltest.claude.binary import PACKAGE, PINNED_VERSION, claude_version

__all__ = ["NODE_HINT", "Installed", "install_claude"]

NODE_HINT = (
    "install Node.js 18 or later with npm (https://nodejs.org, or your system's package "
    "manager: `apt-get install nodejs npm`, `brew install node`), then rerun `skilltest setup`; "
    "or point skilltest at a claude you already have with --claude PATH or SKILLTEST_CLAUDE"
)

ADVICE = NpmAdvice(
    rerun="skilltest setup",
    missing=lambda tool: (
        f"`{tool}` was not found on PATH: skilltest setup installs Claude Code "
        f"({PACKAGE}@{PINNED_VERSION}) with npm, which needs Node.js\n  fix: {NODE_HINT}"
    ),
    failed_fix=(
        "check that this machine reaches the npm registry (npm config get registry) "
        "and that Node.js is 18 or later (node --version), then rerun `skilltest setup`"
    ),
)
"""What the errors of ``skilltest setup`` tell the user to do."""


def install_claude(
    *,
    version: str = PINNED_VERSION,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Installed:
    """Installs ``@anthropic-ai/claude-code@version`` into skilltest's cache
    (:func:`skilltest.claude.binary.cached_install`).

    Args:
        version: The CLI version; skilltest is verified against :data:`PINNED_VERSION`.
        force: Install again even when the cache already holds a working CLI.
        progress: Called with a line before each slow step.

    Raises:
        ConfigurationError: ``node`` or ``npm`` is missing, ``npm install`` fails (with the end
            of what it printed), or the installed CLI does not report ``version``.
    """
    done = npm_install(
        "claude-code",
        PACKAGE,
        version,
        "claude",
        force=force,
        progress=progress,
        advice=ADVICE,
        version_of=claude_version,
    )
    if done.installed:
        # A path asked before the install may have answered with another version.
        claude_version.cache_clear()
    return done
