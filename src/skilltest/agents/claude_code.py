"""Claude Code (``@anthropic-ai/claude-code`` on npm) as one agent among them.

Its parts live in :mod:`skilltest.claude` (finding and installing the pinned CLI, isolating a
run, driving its process) and :mod:`skilltest.transcript.stream_json` (its ``-p
--output-format stream-json`` events); this module puts them behind the agents' protocol. Its
conversations take every turn on one process's stdin, with settings, plugins, MCP servers and
hooks of their own, so the scenario layer's Claude Code runner drives them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

from skilltest.agents.base import AgentBinary, Confinement, Installed, ModelApi
from skilltest.agents.registry import register
from skilltest.claude.binary import PACKAGE, PINNED_VERSION
from skilltest.transcript import ToolCall, Transcript


@register("claude-code")
class ClaudeCode:
    """Claude Code, the CLI the toolkit was first built around."""

    name = "claude-code"
    title = "Claude Code"
    package = PACKAGE
    pinned_version = PINNED_VERSION
    skills_folder = ".claude/skills"
    confinement: Confinement = "os"
    tools: Mapping[str, str] = MappingProxyType({})
    """Its tools are the suite's vocabulary."""
    skill_tool = "Skill"
    model_api: ModelApi = "anthropic"

    def install(
        self,
        *,
        version: str = PINNED_VERSION,
        force: bool = False,
        progress: Callable[[str], None] | None = None,
    ) -> Installed:
        from skilltest.agents.claude_install import install_claude

        return install_claude(version=version, force=force, progress=progress)

    def find(self, explicit: Path | None = None) -> AgentBinary:
        from skilltest.claude.binary import find_claude

        binary = find_claude(explicit)
        return AgentBinary(self.name, binary.path, binary.version, PINNED_VERSION)

    def parse(
        self, stdout: str, *, exit_code: int | None, stderr: str, prompt: str | None
    ) -> Transcript:
        from skilltest.transcript.stream_json import parse_stream_json

        return parse_stream_json(stdout, exit_code=exit_code, stderr=stderr, prompt=prompt)

    def fires(self, skill: str, call: ToolCall) -> bool:
        """A ``Skill`` call naming it (``NAME``, ``/NAME``, a plugin's ``PLUGIN:NAME``) or a
        ``Read`` of its ``.../NAME/SKILL.md``: the rule of the trigger layer's stop hook, which
        runs as a script of the standard library alone and so keeps a copy of its own."""
        if call.answers_to("Skill"):
            called = call.input.get("skill", call.input.get("command"))
            if not isinstance(called, str) or not called.strip():
                return False
            named = called.strip().lstrip("/").split()[0]
            return named == skill or named.rsplit(":", 1)[-1] == skill
        if call.answers_to("Read"):
            path = call.input.get("file_path")
            parts = path.replace("\\", "/").rstrip("/").split("/") if isinstance(path, str) else []
            return len(parts) >= 2 and parts[-1] == "SKILL.md" and parts[-2] == skill
        return False
