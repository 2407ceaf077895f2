"""What every agent does, as one protocol: install, find, isolate, start, parse, fire.

A layer never asks which agent it runs: it asks the agent for the command line of a turn,
the environment of a run and the transcript of what the agent printed. Pure data here; the
agents' modules do their own I/O (npm, the files of a run's configuration).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from skilltest.transcript import ToolCall, Transcript

if TYPE_CHECKING:
    from skilltest.plugins import McpServer

ModelApi = Literal["anthropic", "responses", "gemini"]
"""The model API an agent's requests speak: Anthropic's Messages API, OpenAI's Responses API or
Google's Gemini API (which only the emulator answers offline)."""

Confinement = Literal["os", "proxy-env"]
"""How a controlled world keeps an agent's commands in: ``os``, the agent's own sandbox sends
every connection to the world's proxy (Claude Code with bubblewrap and socat); ``proxy-env``,
the proxy variables only, which a cooperative client follows and another can ignore."""


@dataclass(frozen=True)
class AgentBinary:
    """An agent's executable, found."""

    agent: str
    """The agent's registered name (``opencode``)."""
    path: Path
    """The executable."""
    version: str
    """What it reported for ``--version``."""
    pinned: str
    """The version skilltest is verified against."""

    @property
    def known(self) -> bool:
        """Whether its version is the one skilltest is verified against."""
        return self.version == self.pinned

    @property
    def warning(self) -> str | None:
        """What to say when the version is not the verified one."""
        if self.known:
            return None
        return (
            f"{self.agent} {self.version} at {self.path} is not the version skilltest is "
            f"verified against ({self.pinned}); its events may read differently "
            f"(skilltest setup --agent {self.agent} installs {self.pinned})"
        )


@dataclass(frozen=True)
class Installed:
    """The outcome of an agent's install (``skilltest setup --agent NAME``)."""

    path: Path
    """The executable."""
    version: str
    """What it printed for ``--version``."""
    installed: bool
    """``False`` when it was already there and nothing was installed."""


@dataclass(frozen=True)
class RunFolders:
    """The folders of one run an agent is isolated in (a sandbox's, whoever made it)."""

    root: Path
    """The run's own folder: configuration written here stays out of the workspace."""
    workdir: Path
    """The agent's working directory (a git root of its own)."""
    home: Path
    """The run's ``$HOME`` (the XDG folders are below it)."""
    tmp: Path
    """The run's temp folder."""


class Agent(Protocol):
    """One agent that reads ``SKILL.md``: what a layer needs of it."""

    name: str
    """The registered name (``claude-code``, ``opencode``): ``--agent NAME``."""
    title: str
    """How people call it (``OpenCode``)."""
    package: str
    """Its npm package."""
    pinned_version: str
    """The version ``skilltest setup --agent NAME`` installs and the parser is tested against."""
    skills_folder: str
    """Where in the working directory it reads project skills (``.claude/skills``)."""
    confinement: Confinement
    """How a controlled world can keep its commands in."""
    tools: Mapping[str, str]
    """Its own tool names, each with the suite's name for it (``bash`` is ``Bash``)."""
    skill_tool: str
    """The tool whose call says the skill fired (Claude Code's ``Skill``, OpenCode's
    ``skill``; Codex has none: its ``command_execution`` reading the skill's ``SKILL.md``)."""
    model_api: ModelApi
    """The model API its requests speak."""

    def install(
        self, *, version: str, force: bool, progress: Callable[[str], None] | None
    ) -> Installed:
        """Installs ``version`` into skilltest's cache (npm, never a global install)."""
        ...

    def find(self, explicit: Path | None = None) -> AgentBinary:
        """The executable a run uses: ``explicit``, the agent's variable, the cache, ``PATH``."""
        ...

    def parse(
        self, stdout: str, *, exit_code: int | None, stderr: str, prompt: str | None
    ) -> Transcript:
        """Its event stream as the one transcript type, tool names in the suite's vocabulary."""
        ...

    def fires(self, skill: str, call: ToolCall) -> bool:
        """Whether ``call`` (parsed, in the suite's vocabulary) loads ``skill`` by this agent's
        own firing rule: Claude Code's ``Skill`` call or ``Read`` of its ``SKILL.md``, OpenCode's
        ``skill`` call that completed, Codex's shell read of its ``SKILL.md`` that ran."""
        ...


class TurnAgent(Agent, Protocol):
    """An agent run one process per user message, each continuing the conversation of the
    turn before (OpenCode's ``run --session ID``, Codex's ``exec resume ID``). Claude Code takes
    every turn of a run on one process's stdin instead (``--input-format stream-json``), with
    settings, plugins and hooks of its own: the scenario layer's Claude Code runner drives it."""

    commands_note: str
    """What holds in the commands the model runs through it, said once per run of a layer (in
    place of Claude Code's note that Bash is not confined to its sandbox)."""

    def sandbox_base(self) -> Path | None:
        """Where a run's folders must be made; ``None``: the system temp folder."""
        ...

    def isolate(
        self,
        folders: RunFolders,
        endpoint: Mapping[str, str],
        *,
        model: str | None,
        world: Mapping[str, str] | None = None,
        mcp_servers: Sequence[McpServer] = (),
    ) -> dict[str, str]:
        """Writes the run's configuration (no user settings, skills, hooks, telemetry, or
        network but the endpoint) and returns the run's whole environment. ``endpoint`` is the
        endpoint session's ``ANTHROPIC_BASE_URL`` and placeholder key: never a real credential.
        ``world`` holds a controlled world's variables (its proxy, CA files and token
        variables): the commands the model runs get every one of them, and may reach the
        network, which the proxy is then the only way to. ``mcp_servers`` are the run's stdio
        MCP servers (the suite's and a world's mocks), started by the agent with their tools
        allowed.
        """
        ...

    def mcp_tool(self, server: str, tool: str) -> str:
        """The name the agent gives the tool ``tool`` of its MCP server ``server`` (Claude
        Code's and Codex's ``mcp__server__tool``, OpenCode's ``server_tool``)."""
        ...

    def warnings(self, env: Mapping[str, str]) -> tuple[str, ...]:
        """What about a run's environment keeps the agent from working as verified."""
        ...

    def turn_argv(
        self, binary: AgentBinary, message: str, *, session: str | None
    ) -> tuple[str, ...]:
        """The command line of one user message, non-interactive, printing its events as JSON
        lines; ``session`` continues the run's conversation from its earlier turns."""
        ...

    def session_of(self, stdout: str) -> str | None:
        """The conversation's id as the agent printed it (for the next turn)."""
        ...
