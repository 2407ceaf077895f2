"""An agent's pinned npm package installed into skilltest's cache (``skilltest setup --agent``,
and ``skilltest setup`` for Claude Code).

``npm install --prefix`` puts the package into a folder of its own below skilltest's cache
(``<cache>/<agent>-<version>``), never a global install, and the installed executable must then
report the pinned version. The install goes to a temporary folder beside the final one and is
moved into place only once it works, so a broken or interrupted install is never found.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skilltest.agents.base import AgentBinary, Installed
from skilltest.claude.binary import cache_dir
from skilltest.errors import ConfigurationError

NPM_TIMEOUT_S = 900.0
"""How long one ``npm install`` may take (the packages are large native binaries)."""
VERSION_TIMEOUT_S = 30.0
TAIL_LINES = 15


def install_folder(agent: str, version: str) -> Path:
    """Where ``skilltest setup --agent AGENT`` installs ``version``."""
    return cache_dir() / f"{agent}-{version}"


def cached_executable(agent: str, version: str, command: str) -> Path:
    """The executable of an install made by :func:`npm_install`."""
    return install_folder(agent, version) / "node_modules" / ".bin" / command


def reported_version(executable: Path) -> str:
    """What ``EXECUTABLE --version`` prints (its last word).

    Raises:
        ConfigurationError: it does not run, or prints nothing.
    """
    try:
        done = subprocess.run(
            [str(executable), "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigurationError(f"{executable} --version did not run: {exc}") from exc
    words = done.stdout.split()
    if done.returncode != 0 or not words:
        raise ConfigurationError(
            f"{executable} --version failed (exit {done.returncode}): {done.stderr.strip()[-300:]}"
        )
    return words[-1]


@dataclass(frozen=True)
class NpmAdvice:
    """What an install's errors tell the user to do."""

    rerun: str
    """The command that installs again (``skilltest setup --agent opencode``)."""
    missing: Callable[[str], str]
    """The error when ``node`` or ``npm`` (its argument) is not on ``PATH``."""
    failed_fix: str
    """The fix when ``npm install`` fails."""


def agent_advice(agent: str) -> NpmAdvice:
    """What the errors of ``skilltest setup --agent AGENT`` tell the user to do."""
    rerun = f"skilltest setup --agent {agent}"
    return NpmAdvice(
        rerun=rerun,
        missing=lambda _tool: (
            f"`npm` and `node` must be on PATH: {rerun} installs the agent with npm\n"
            "  fix: install Node.js 18 or later with npm (https://nodejs.org, "
            "`apt-get install nodejs npm`, `brew install node`), then rerun the command"
        ),
        failed_fix=(
            f"check that this machine reaches the npm registry (npm config get registry), then "
            f"rerun `{rerun}`"
        ),
    )


def _tool(name: str, advice: NpmAdvice) -> str:
    found = shutil.which(name)
    if found is None:
        raise ConfigurationError(advice.missing(name))
    return found


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(f"    {line}" for line in lines[-TAIL_LINES:])


def npm_install(
    agent: str,
    package: str,
    version: str,
    command: str,
    *,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
    advice: NpmAdvice | None = None,
    version_of: Callable[[Path], str] = reported_version,
) -> Installed:
    """Installs ``package@version`` into ``<cache>/<agent>-<version>`` and checks that its
    ``command`` reports ``version``.

    Args:
        advice: What the errors tell the user to do; :func:`agent_advice` unless given.
        version_of: Reads the version an executable reports.

    Raises:
        ConfigurationError: no node or npm, the install fails (with the end of what npm
            printed), or the installed executable does not report ``version``.
    """
    advice = advice or agent_advice(agent)
    target = install_folder(agent, version)
    executable = cached_executable(agent, version, command)
    if not force and executable.is_file() and os.access(executable, os.X_OK):
        try:
            if version_of(executable.absolute()) == version:
                return Installed(executable, version, installed=False)
        except ConfigurationError:
            pass
    _tool("node", advice)
    npm = _tool("npm", advice)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f"{target.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    if progress is not None:
        progress(f"installing {package}@{version} with npm into {target} ...")
    argv = [
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
        f"{package}@{version}",
    ]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise ConfigurationError(
            f"npm install {package}@{version} did not finish within {NPM_TIMEOUT_S:g} s\n"
            "  fix: check that this machine reaches the npm registry (npm config get registry), "
            f"then rerun `{advice.rerun}`"
        ) from exc
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise ConfigurationError(
            f"npm install {package}@{version} failed (exit {done.returncode}); npm printed:\n"
            f"{_tail(done.stderr or done.stdout)}\n  fix: {advice.failed_fix}"
        )
    staged = staging / "node_modules" / ".bin" / command
    try:
        found = version_of(staged.absolute())
    except ConfigurationError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise ConfigurationError(
            f"npm installed {package}@{version}, but its {command} does not run: {exc}"
        ) from exc
    if found != version:
        shutil.rmtree(staging, ignore_errors=True)
        raise ConfigurationError(
            f"npm installed {package}@{version}, but its {command} reports version {found}\n"
            f"  fix: clear npm's cache entry (npm cache clean --force) and rerun `{advice.rerun}`"
        )
    # node_modules/.bin links are relative, so the folder moves into place whole.
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return Installed(executable, found, installed=True)


def find_installed(
    agent: str,
    pinned: str,
    command: str,
    *,
    variable: str,
    hint: str,
    explicit: Path | None = None,
) -> AgentBinary:
    """``explicit``, the executable ``$variable`` names, the cache ``skilltest setup --agent
    AGENT`` fills, then ``command`` on ``PATH``.

    Raises:
        ConfigurationError: none of them is an executable that runs; ``hint`` is the fix.
    """
    given = explicit or os.environ.get(variable)
    if given:
        candidates = [(Path(given).expanduser(), "--agent-path" if explicit else variable)]
    else:
        on_path = shutil.which(command)
        candidates = [(cached_executable(agent, pinned, command), "cache")]
        if on_path is not None:
            candidates.append((Path(on_path), "PATH"))
    for path, where in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            version = reported_version(path.absolute())
            return AgentBinary(agent, path.absolute(), version, pinned)
        if given:
            raise ConfigurationError(
                f"{where} names {path}, which is not an executable file\n  fix: {hint}"
            )
    raise ConfigurationError(f"no {command} executable was found\n  fix: {hint}")
