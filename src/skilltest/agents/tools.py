"""One vocabulary of actions: each agent's tools under the names suites use.

Suites (rubrics, checks, ``expected_skills``) name tools as Claude Code does: ``Bash`` with
``{command}``, ``Read`` with ``{file_path}``, ``Skill`` with ``{skill}``. Another agent's call is
read into that vocabulary as its transcript is parsed (:func:`as_suite_call`): its name by
:data:`SUITE_NAMES`, its input's keys by :data:`SUITE_KEYS`. The call keeps the agent's own name
(:attr:`~skilltest.transcript.model.ToolCall.agent_name`), so a suite may name either. MCP tools
keep the ``mcp__server__tool`` form. The emulator's share of the same table, the other way
round, is :mod:`skilltest.emulator.tool_names`. Pure functions; docs/agents.md shows the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SUITE_NAMES: dict[str, dict[str, str]] = {
    "opencode": {
        "bash": "Bash",
        "read": "Read",
        "write": "Write",
        "edit": "Edit",
        "grep": "Grep",
        "glob": "Glob",
        "webfetch": "WebFetch",
        "skill": "Skill",
        "task": "Agent",
        "todowrite": "TodoWrite",
    },
    "gemini": {
        "run_shell_command": "Bash",
        "read_file": "Read",
        "read_many_files": "Read",
        "write_file": "Write",
        "replace": "Edit",
        "glob": "Glob",
        "grep_search": "Grep",
        "search_file_content": "Grep",
        "list_directory": "LS",
        "web_fetch": "WebFetch",
        "google_web_search": "WebSearch",
        "activate_skill": "Skill",
        "invoke_agent": "Agent",
        "write_todos": "TodoWrite",
    },
}
"""Per agent, its own tool name and the suite's name for it (Claude Code's are the suite's)."""

SUITE_KEYS: dict[str, dict[str, str]] = {
    "opencode": {
        "filePath": "file_path",
        "oldString": "old_string",
        "newString": "new_string",
        "replaceAll": "replace_all",
    },
    "gemini": {"dir_path": "path", "allow_multiple": "replace_all"},
}
"""Per agent, the input keys its tools name otherwise than the suite's tools."""

SKILL_KEYS: dict[str, str] = {"opencode": "name", "gemini": "name"}
"""Per agent, the key of its skill tool's input that names the skill (Claude Code's ``skill``)."""


def suite_name(agent: str, tool: str) -> str:
    """The suite's name for ``agent``'s tool ``tool`` (a name the table lacks stays as it is)."""
    return SUITE_NAMES.get(agent, {}).get(tool, tool)


def as_suite_call(agent: str, tool: str, given: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``agent``'s call of ``tool`` with ``given`` as the suite's tool and input."""
    name = suite_name(agent, tool)
    keys = SUITE_KEYS.get(agent, {})
    arguments = {keys.get(key, key): value for key, value in given.items()}
    if name == "Skill":
        named = given.get(SKILL_KEYS.get(agent, "skill"))
        arguments = {"skill": named} if isinstance(named, str) else arguments
    return name, arguments


def fired_skill(agent: str, tool: str, given: Mapping[str, Any]) -> str | None:
    """The skill a call loads, when it is ``agent``'s skill tool naming one (the firing rule:
    Claude Code's ``Skill`` call, OpenCode's ``skill`` call, Gemini CLI's ``activate_skill``
    call); ``None`` for any other call."""
    name, arguments = as_suite_call(agent, tool, given)
    if name != "Skill":
        return None
    skill = arguments.get("skill")
    return skill if isinstance(skill, str) and skill else None
