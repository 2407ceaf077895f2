"""One vocabulary of actions: each agent's tools under the suite's names, and the firing rule."""

from __future__ import annotations

import pytest

from skilltest.agents.tools import SUITE_NAMES, as_suite_call, fired_skill, suite_name
from skilltest.emulator.tool_names import EQUIVALENTS


@pytest.mark.parametrize(
    ("tool", "suite"),
    [
        ("bash", "Bash"),
        ("read", "Read"),
        ("write", "Write"),
        ("edit", "Edit"),
        ("grep", "Grep"),
        ("glob", "Glob"),
        ("webfetch", "WebFetch"),
        ("skill", "Skill"),
        ("task", "Agent"),
        ("mcp__tickets__create", "mcp__tickets__create"),
        ("lsp", "lsp"),
    ],
)
def test_opencode_tools_have_the_suite_names_docs_agents_md_shows(tool: str, suite: str):
    assert suite_name("opencode", tool) == suite


@pytest.mark.parametrize(
    ("tool", "suite"),
    [
        ("run_shell_command", "Bash"),
        ("read_file", "Read"),
        ("write_file", "Write"),
        ("replace", "Edit"),
        ("glob", "Glob"),
        ("grep_search", "Grep"),
        ("search_file_content", "Grep"),
        ("web_fetch", "WebFetch"),
        ("google_web_search", "WebSearch"),
        ("activate_skill", "Skill"),
        ("invoke_agent", "Agent"),
        ("write_todos", "TodoWrite"),
    ],
)
def test_gemini_cli_tools_have_the_suite_names_docs_agents_md_shows(tool: str, suite: str):
    assert suite_name("gemini", tool) == suite


def test_gemini_cli_inputs_are_read_with_the_suite_tools_keys():
    assert as_suite_call("gemini", "grep_search", {"pattern": "x", "dir_path": "src"}) == (
        "Grep",
        {"pattern": "x", "path": "src"},
    )
    assert as_suite_call("gemini", "activate_skill", {"name": "lgtm"}) == (
        "Skill",
        {"skill": "lgtm"},
    )


def test_claude_code_tools_are_the_suite_vocabulary_itself():
    assert suite_name("claude-code", "Bash") == "Bash"
    assert as_suite_call("claude-code", "Skill", {"skill": "lgtm"}) == ("Skill", {"skill": "lgtm"})


def test_opencode_inputs_are_read_with_the_suite_tools_keys():
    name, given = as_suite_call(
        "opencode", "edit", {"filePath": "a.py", "oldString": "x", "newString": "y"}
    )

    assert (name, given) == ("Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"})


@pytest.mark.parametrize(
    ("agent", "tool", "given", "fired"),
    [
        ("claude-code", "Skill", {"skill": "lgtm"}, "lgtm"),
        ("opencode", "skill", {"name": "lgtm"}, "lgtm"),
        ("opencode", "read", {"filePath": ".claude/skills/lgtm/SKILL.md"}, None),
        ("opencode", "skill", {}, None),
        ("opencode", "bash", {"command": "cat SKILL.md"}, None),
        ("gemini", "activate_skill", {"name": "lgtm"}, "lgtm"),
        ("gemini", "read_file", {"file_path": ".gemini/skills/lgtm/SKILL.md"}, None),
        ("gemini", "run_shell_command", {"command": "cat SKILL.md"}, None),
    ],
)
def test_the_skill_fired_when_the_agents_skill_tool_named_it(agent, tool, given, fired):
    assert fired_skill(agent, tool, given) == fired


@pytest.mark.parametrize("agent", ["opencode", "gemini"])
def test_the_emulator_sends_each_suite_tool_as_the_agents_tool_the_table_reads_back(agent):
    # One model script drives every agent: what the emulator sends as the agent's tool is the
    # tool the transcript reads back under the suite's name.
    own = SUITE_NAMES[agent]
    for suite in set(own.values()):
        sent = {e.name for e in EQUIVALENTS.get(suite, ()) if e.name in own}
        if sent:
            assert all(own[name] == suite for name in sent), suite
    assert {"Bash", "Read", "Write", "Edit", "Glob", "Grep", "Skill"} <= {
        suite for suite in own.values() if suite in EQUIVALENTS
    }
