"""Gemini CLI (``@google/gemini-cli`` on npm) as an agent a skill is tested in.

Verified with Gemini CLI 0.61.0, offline against the model emulator
(``tests/fixtures/agents/gemini/``):

* **install**: ``npm install @google/gemini-cli@0.61.0`` into skilltest's cache (``skilltest
  setup --agent gemini``; :mod:`skilltest.agents.npm`);
* **isolation**: a ``$HOME`` of the run's own whose ``.gemini/settings.json``
  (:func:`settings_document`) signs in with an API key, sends no telemetry or usage statistics,
  checks for no update and lists no bundled skill; the endpoint at ``GOOGLE_GEMINI_BASE_URL``
  (Gemini CLI accepts plain HTTP for loopback) with a placeholder in ``GEMINI_API_KEY``; the
  workspace trusted (``GEMINI_CLI_TRUST_WORKSPACE``: a headless run refuses an untrusted folder,
  exit 55); the environment an allowlist of the caller's, so no ``GEMINI_API_KEY`` or
  ``GOOGLE_API_KEY`` of the caller's reaches a run;
* **skills**: read from ``.gemini/skills/<name>/`` in the workspace (and ``.agents/skills/``),
  listed to the model under ``# Available Agent Skills`` and loaded by its ``activate_skill``
  tool; the baseline arm gets nothing there;
* **a run**: ``gemini -p MESSAGE --output-format stream-json --approval-mode yolo``, one process
  per user message, the follow-ups with ``--resume SESSION_ID``; events read by
  :mod:`skilltest.agents.gemini_events`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from skilltest.agents.base import AgentBinary, Confinement, Installed, ModelApi, RunFolders
from skilltest.agents.gemini_events import parse_gemini, session_of
from skilltest.agents.npm import find_installed, npm_install
from skilltest.agents.registry import register
from skilltest.agents.tools import SUITE_NAMES
from skilltest.names import child
from skilltest.transcript import ToolCall, Transcript

if TYPE_CHECKING:
    from skilltest.plugins import McpServer

PINNED_VERSION = "0.61.0"
PACKAGE = "@google/gemini-cli"
COMMAND = "gemini"
ENV_VARIABLE = "SKILLTEST_GEMINI"
"""Names the ``gemini`` executable to use (as ``SKILLTEST_CLAUDE`` names ``claude``)."""
PLACEHOLDER_KEY = "skilltest-placeholder-key"
"""The run's ``GEMINI_API_KEY``: the emulator takes any key; it is never a real credential."""
SKILLS_FOLDER = (".gemini", "skills")
"""Where in the workspace Gemini CLI 0.61.0 reads project skills."""
BUNDLED_SKILLS = ("skill-creator", "antigravity-support")
"""The skills Gemini CLI 0.61.0 bundles, disabled in every run so that the arms differ only by
the skill under test."""

INSTALL_HINT = (
    f"run `skilltest setup --agent gemini` (installs {PACKAGE}@{PINNED_VERSION} into "
    f"skilltest's cache with npm), or set ${ENV_VARIABLE} to a gemini executable"
)

_PASSTHROUGH = ("PATH", "LANG", "LANGUAGE", "TZ", "USER", "LOGNAME", "SHELL")


def settings_document(model: str | None = None) -> dict[str, Any]:
    """The run's ``~/.gemini/settings.json``: API-key sign-in, nothing sent but the model's
    requests, no update check, no retries, no bundled skill; ``model`` when the run names one
    (else Gemini CLI routes each turn itself, with a helper request the emulator answers)."""
    document: dict[str, Any] = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        # maxAttempts 1: a failing endpoint fails the turn at once, as the emulator's faults
        # intend, rather than after Gemini CLI's ten attempts with backoff.
        "general": {
            "enableAutoUpdate": False,
            "enableAutoUpdateNotification": False,
            "maxAttempts": 1,
        },
        "skills": {"disabled": list(BUNDLED_SKILLS)},
    }
    if model:
        document["model"] = {"name": model}
    return document


def gemini_env(
    home: Path,
    base_url: str,
    *,
    tmp: Path | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The run's environment: an allowlist of the caller's (never a credential), the run's HOME
    and XDG folders, the endpoint, the placeholder key and a trusted workspace."""
    source = os.environ if base is None else base
    env = {key: source[key] for key in _PASSTHROUGH if key in source}
    env.update({key: value for key, value in source.items() if key.startswith("LC_")})
    env.setdefault("PATH", os.defpath)
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "GOOGLE_GEMINI_BASE_URL": base_url.rstrip("/"),
            "GEMINI_API_KEY": PLACEHOLDER_KEY,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            # One process, not a second one relaunched with a larger heap.
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "TERM": "dumb",
            "NO_COLOR": "1",
        }
    )
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
    return env


def write_settings(
    home: Path, model: str | None = None, mcp_servers: Sequence[McpServer] = ()
) -> Path:
    """Writes :func:`settings_document` to ``home/.gemini/settings.json``, with the run's stdio
    MCP servers (their tools trusted: they run without asking); its path."""
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    document = settings_document(model)
    if mcp_servers:
        document["mcpServers"] = {
            server.name: {
                "command": server.command,
                "args": list(server.args),
                "env": dict(server.env),
                "trust": True,
            }
            for server in mcp_servers
        }
    settings.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return settings


_MCP_NAME = re.compile(r"[^a-zA-Z0-9_\-.:]")


def mcp_tool_name(server: str, tool: str) -> str:
    """The name Gemini CLI 0.61.0 gives an MCP server's tool: ``mcp_server_tool``, every
    character but letters, digits, ``_``, ``-``, ``.`` and ``:`` made ``_``."""
    return _MCP_NAME.sub("_", f"mcp_{server}_{tool}")


def move_skills(workdir: Path, claude_folder: Path) -> None:
    """Moves the skills a sandbox installed for Claude Code (``.claude/skills/<name>``) to where
    Gemini CLI reads them (``.gemini/skills/<name>``)."""
    if not claude_folder.is_dir():
        return
    target = workdir.joinpath(*SKILLS_FOLDER)
    target.mkdir(parents=True, exist_ok=True)
    for skill in sorted(claude_folder.iterdir()):
        skill.rename(child(target, skill.name, what="the skill name"))
    claude_folder.rmdir()
    if not any(claude_folder.parent.iterdir()):
        claude_folder.parent.rmdir()


def gemini_command(
    binary: Path | str, message: str, *, session: str | None = None, extra: Sequence[str] = ()
) -> list[str]:
    """``gemini -p MESSAGE --output-format stream-json --approval-mode yolo`` (every tool runs
    without asking); ``session`` (the ``session_id`` of the run's first message) continues that
    conversation with ``--resume``. Run it with stdin from ``/dev/null``: ``-p`` appends what
    stdin holds to the prompt."""
    resume = ["--resume", session] if session else []
    flags = ["--output-format", "stream-json", "--approval-mode", "yolo", *resume, *extra]
    # --prompt=MESSAGE: a message that starts with "-" stays the prompt, never an option.
    return [str(binary), *flags, f"--prompt={message}"]


@register("gemini")
class Gemini:
    """Gemini CLI, run one process per user message."""

    name = "gemini"
    title = "Gemini"
    package = PACKAGE
    pinned_version = PINNED_VERSION
    skills_folder = "/".join(SKILLS_FOLDER)
    confinement: Confinement = "proxy-env"
    commands_note = (
        "Gemini CLI's commands are not confined: a run has a home and settings of its own and "
        "approves every tool (--approval-mode yolo), but its run_shell_command runs with no OS "
        "sandbox and can read any file you can (a scenario's allowed_tools and "
        "disallowed_tools are Claude Code's rules and are not applied)"
    )
    tools = MappingProxyType(SUITE_NAMES["gemini"])
    skill_tool = "activate_skill"
    model_api: ModelApi = "gemini"

    def install(
        self,
        *,
        version: str = PINNED_VERSION,
        force: bool = False,
        progress: Callable[[str], None] | None = None,
    ) -> Installed:
        return npm_install(self.name, PACKAGE, version, COMMAND, force=force, progress=progress)

    def find(self, explicit: Path | None = None) -> AgentBinary:
        """``explicit``, ``$SKILLTEST_GEMINI``, the cache ``skilltest setup --agent gemini``
        fills, then ``gemini`` on ``PATH``.

        Raises:
            ConfigurationError: none of them is an executable that runs.
        """
        return find_installed(
            self.name,
            PINNED_VERSION,
            COMMAND,
            variable=ENV_VARIABLE,
            hint=INSTALL_HINT,
            explicit=explicit,
        )

    def sandbox_base(self) -> Path | None:
        return None

    def isolate(
        self,
        folders: RunFolders,
        endpoint: Mapping[str, str],
        *,
        model: str | None,
        world: Mapping[str, str] | None = None,
        mcp_servers: Sequence[McpServer] = (),
    ) -> dict[str, str]:
        write_settings(folders.home, model, mcp_servers)
        move_skills(folders.workdir, folders.workdir / ".claude" / "skills")
        base_url = endpoint.get("ANTHROPIC_BASE_URL") or "http://127.0.0.1:9"
        env = gemini_env(folders.home, base_url, tmp=folders.tmp)
        # Its shell passes its own environment on to every command (redacting none: the
        # allowlist leaves out what would make it redact); its model requests go to loopback,
        # which the world's NO_PROXY sends direct.
        env.update(world or {})
        return env

    def mcp_tool(self, server: str, tool: str) -> str:
        return mcp_tool_name(server, tool)

    def warnings(self, env: Mapping[str, str]) -> tuple[str, ...]:
        return ()

    def turn_argv(
        self, binary: AgentBinary, message: str, *, session: str | None
    ) -> tuple[str, ...]:
        return tuple(gemini_command(binary.path, message, session=session))

    def session_of(self, stdout: str) -> str | None:
        return session_of(stdout)

    def parse(
        self, stdout: str, *, exit_code: int | None, stderr: str, prompt: str | None
    ) -> Transcript:
        return parse_gemini(stdout, exit_code=exit_code, stderr=stderr, prompt=prompt)

    def fires(self, skill: str, call: ToolCall) -> bool:
        """An ``activate_skill`` call naming it that succeeded; reading its ``SKILL.md`` with
        another tool is not the skill firing."""
        return (
            call.answers_to("Skill") and call.input.get("skill") == skill and call.status == "ran"
        )
