"""Which tool calls are actions: what the agent did to the world, as scoring counts it.

Only an action is evidence of behaviour. Not actions:

- **plans and delegations** (:data:`NOT_ACTIONS`): a ``TodoWrite`` note, an ``Agent``/``Task``
  prompt, a message to a subagent, a question to the user, a plan, a tool search. Their text is
  what the agent meant to do; what a subagent then did is its own calls, which are actions.
- **loading the skill**: a ``Skill`` call, and reading the skill's own files (a ``Read``,
  ``Glob``, ``Grep`` or a reading shell command such as ``cat`` on a path under
  ``.claude/skills/`` or ``.claude/plugins/``). Only the arm with the skill can do either, so
  counting them would measure the skill's presence, not what it changed. Running a skill's
  script is an action.
- **calls that never ran** (``refused``: an unknown tool, a permission or sandbox refusal,
  input the harness rejected).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Any

from skilltest.transcript.model import ToolCall, canonical_tool_name

NOT_ACTIONS: frozenset[str] = frozenset(
    {
        "Agent",  # a delegation: the subagent's own calls are the actions
        "AskUserQuestion",
        "ExitPlanMode",
        "ListAgents",
        "SendMessage",
        "Skill",
        "TodoRead",
        "TodoWrite",
        "ToolSearch",
    }
)
"""Tools whose calls are plans, delegations, questions or skill loading, never actions
(``Task`` is ``Agent`` under its old name)."""

READING_TOOLS: frozenset[str] = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
"""Tools that only read."""

READING_COMMANDS: frozenset[str] = frozenset(
    {"cat", "head", "tail", "less", "more", "ls", "find", "grep", "rg", "wc", "file", "stat"}
)
"""Shell programs that only read, when a command is one of them alone."""

_SKILL_FOLDER = re.compile(r"(?:^|[\s/'\"=])\.claude/(?:skills|plugins)/")


def strings_of(value: Any) -> Iterator[str]:
    """Every string in a tool input, nested ones included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_of(item)


def reads_the_skill(call: ToolCall) -> bool:
    """Whether the call only reads the skill's (or a plugin's) own files."""
    if not any(_SKILL_FOLDER.search(text) for text in strings_of(call.input)):
        return False
    if call.canonical_name in READING_TOOLS:
        return True
    if call.name == "Bash":
        command = call.input.get("command")
        if not isinstance(command, str) or any(sep in command for sep in (";", "&", "|", ">")):
            return False
        try:
            words = shlex.split(command)
        except ValueError:
            return False
        return bool(words) and words[0].rsplit("/", 1)[-1] in READING_COMMANDS
    return False


def is_action(call: ToolCall) -> bool:
    """Whether the call is evidence of what the agent did (see the module's docstring)."""
    return (
        not call.refused
        and canonical_tool_name(call.name) not in NOT_ACTIONS
        and not reads_the_skill(call)
    )


def actions(calls: tuple[ToolCall, ...], *, succeeded_only: bool = False) -> list[ToolCall]:
    """The calls that are actions, in order; with ``succeeded_only``, those that also ran
    without an error (``require_success``)."""
    return [
        call for call in calls if is_action(call) and (not succeeded_only or call.status == "ran")
    ]
