"""OpenCode (``opencode-ai`` on npm) as an agent a skill is tested in.

Verified with OpenCode 1.18.33, offline against the model emulator:

* **install**: ``npm install opencode-ai@1.18.33`` (a platform binary, about 354 MB) into
  skilltest's cache (``skilltest setup --agent opencode``);
* **isolation**: ``$HOME`` and the XDG folders of the run's own, its configuration in a file
  outside the working directory (``OPENCODE_CONFIG``): the Anthropic provider at the endpoint's
  base URL with its placeholder key, no auto-update, no sharing, no models fetch, no LSP
  download, no external plugins (``--pure``);
* **skills**: read from ``.claude/skills/`` (also ``.opencode/skills/`` and ``.agents/skills/``)
  walking up to the git root; the skill tool needs ``rg`` (ripgrep) on ``PATH`` to list a
  skill's files, and offline cannot fetch its own;
* **a run**: ``opencode run --pure --format json MESSAGE``, one process per user message, the
  follow-ups with ``--session ID``; events read by :mod:`skilltest.agents.opencode_events`.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from skilltest.agents.base import AgentBinary, Confinement, Installed, ModelApi, RunFolders
from skilltest.agents.npm import find_installed, npm_install
from skilltest.agents.opencode_events import parse_opencode, session_of
from skilltest.agents.registry import register
from skilltest.agents.tools import SUITE_NAMES
from skilltest.claude.isolation import isolated_env
from skilltest.transcript import ToolCall, Transcript

if TYPE_CHECKING:
    from skilltest.plugins import McpServer

PINNED_VERSION = "1.18.33"
PACKAGE = "opencode-ai"
COMMAND = "opencode"
ENV_VARIABLE = "SKILLTEST_OPENCODE"
"""Names the ``opencode`` executable to use (as ``SKILLTEST_CLAUDE`` names ``claude``)."""
DEFAULT_MODEL = "claude-sonnet-4-5"
"""The model a run asks for when its scenario names none."""

QUIET_ENV: dict[str, str] = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
}
"""What keeps a run off the network but for its endpoint."""

INSTALL_HINT = (
    f"run `skilltest setup --agent opencode` (installs {PACKAGE}@{PINNED_VERSION} into "
    f"skilltest's cache with npm), or set ${ENV_VARIABLE} to an opencode executable"
)


def config_document(base_url: str, api_key: str, model: str) -> dict[str, object]:
    """The run's ``opencode.json``: the Anthropic provider at the endpoint, nothing shared or
    updated."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "anthropic": {"options": {"baseURL": f"{base_url.rstrip('/')}/v1", "apiKey": api_key}}
        },
        "enabled_providers": ["anthropic"],
        "model": f"anthropic/{model}",
        "autoupdate": False,
        "share": "disabled",
    }


def mcp_tool_name(server: str, tool: str) -> str:
    """The name OpenCode 1.18.33 gives an MCP server's tool: ``server_tool``, each part with
    every character but letters, digits, ``_`` and ``-`` made ``_``."""
    return f"{_SANITISED.sub('_', server)}_{_SANITISED.sub('_', tool)}"


_SANITISED = re.compile(r"[^A-Za-z0-9_-]")


def opencode_mcp(servers: Sequence[McpServer]) -> dict[str, object]:
    """The ``mcp`` section of the run's ``opencode.json``: each stdio server started by
    OpenCode with its variables."""
    return {
        server.name: {
            "type": "local",
            "command": [server.command, *server.args],
            "environment": dict(server.env),
            "enabled": True,
        }
        for server in servers
    }


PLUGIN_PACKAGE = "@opencode-ai/plugin"
"""What OpenCode installs with npm into each of its configuration folders at start."""


def settle_plugin_dependency(folder: Path) -> None:
    """Marks ``folder`` (OpenCode's global configuration folder) as holding
    :data:`PLUGIN_PACKAGE` already, so that OpenCode installs nothing there.

    At start, OpenCode 1.18.33 runs an npm install of its plugin package into every
    configuration folder whose ``node_modules`` is missing or whose ``package.json`` lists a
    dependency its ``package-lock.json`` does not. Offline that install fails in the
    background; in a controlled world it would reach for ``registry.npmjs.org`` through the
    world's proxy and count as the run's egress. A run needs no plugin.
    """
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "node_modules").mkdir(exist_ok=True)
    dependencies = {PLUGIN_PACKAGE: PINNED_VERSION}
    (folder / "package.json").write_text(
        json.dumps({"dependencies": dependencies}) + "\n", encoding="utf-8"
    )
    (folder / "package-lock.json").write_text(
        json.dumps({"lockfileVersion": 3, "packages": {"": {"dependencies": dependencies}}}) + "\n",
        encoding="utf-8",
    )


@register("opencode")
class OpenCode:
    """OpenCode, run one process per user message."""

    name = "opencode"
    title = "OpenCode"
    package = PACKAGE
    pinned_version = PINNED_VERSION
    skills_folder = ".claude/skills"
    confinement: Confinement = "proxy-env"
    commands_note = (
        "OpenCode's commands are not confined: a run has a home and a configuration of its "
        "own, and OpenCode refuses its file tools a path outside the working directory, but its "
        "bash tool runs with no OS sandbox and can read any file you can (a scenario's "
        "allowed_tools and disallowed_tools are Claude Code's rules and are not applied)"
    )
    tools = SUITE_NAMES["opencode"]
    skill_tool = "skill"
    model_api: ModelApi = "anthropic"

    def install(
        self,
        *,
        version: str = PINNED_VERSION,
        force: bool = False,
        progress: Callable[[str], None] | None = None,
    ) -> Installed:
        return npm_install(self.name, PACKAGE, version, COMMAND, force=force, progress=progress)

    def find(self, explicit: Path | None = None) -> AgentBinary:
        """``explicit``, ``$SKILLTEST_OPENCODE``, the cache ``skilltest setup --agent opencode``
        fills, then ``opencode`` on ``PATH``.

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
        config = folders.root / "opencode" / "opencode.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        document = config_document(
            endpoint.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com",
            endpoint.get("ANTHROPIC_API_KEY") or "",
            model or DEFAULT_MODEL,
        )
        if mcp_servers:
            document["mcp"] = opencode_mcp(mcp_servers)
        config.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        # The endpoint's variables stay out of the environment: the configuration holds them,
        # and the agent's commands see neither the URL nor the placeholder.
        env = isolated_env(home=folders.home, credentials={}, tmp=folders.tmp)
        env.update(QUIET_ENV)
        env["OPENCODE_CONFIG"] = str(config)
        settle_plugin_dependency(folders.home / ".config" / "opencode")
        # Its bash tool passes its own environment on to every command; the model requests go
        # to loopback, which the world's NO_PROXY sends direct.
        env.update(world or {})
        return env

    def mcp_tool(self, server: str, tool: str) -> str:
        return mcp_tool_name(server, tool)

    def warnings(self, env: Mapping[str, str]) -> tuple[str, ...]:
        """What about the run's environment keeps OpenCode from working as verified."""
        if shutil.which("rg", path=env.get("PATH")) is None:
            return (
                "OpenCode's skill tool needs ripgrep (rg) on PATH to load a skill, and cannot "
                "fetch its own offline: install it (apt-get install ripgrep, brew install "
                "ripgrep)",
            )
        return ()

    def turn_argv(
        self, binary: AgentBinary, message: str, *, session: str | None
    ) -> tuple[str, ...]:
        resume = ("--session", session) if session else ()
        return (str(binary.path), "run", "--pure", "--format", "json", *resume, "--", message)

    def session_of(self, stdout: str) -> str | None:
        return session_of(stdout)

    def parse(
        self, stdout: str, *, exit_code: int | None, stderr: str, prompt: str | None
    ) -> Transcript:
        return parse_opencode(stdout, exit_code=exit_code, stderr=stderr, prompt=prompt)

    def fires(self, skill: str, call: ToolCall) -> bool:
        """A ``skill`` call naming it that completed; reading its ``SKILL.md`` otherwise is not
        the skill firing."""
        return (
            call.answers_to("Skill") and call.input.get("skill") == skill and call.status == "ran"
        )
