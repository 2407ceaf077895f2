"""Another agent's trigger run, decided from its own events by its own firing rule: OpenCode's
``skill`` call that completed, Codex's read of ``SKILL.md`` that ran, with the same tool-call
budget as Claude Code's runs, and a stop as soon as the deciding call came back."""

from __future__ import annotations

import pytest

from skilltest.agents import agent
from skilltest.transcript import ToolCall
from skilltest.triggers.watch import AgentWatch


def codex_command(item: str, command: str, *, done: bool, exit_code: int = 0) -> dict:
    return {
        "type": "item.completed" if done else "item.started",
        "item": {
            "id": item,
            "type": "command_execution",
            "command": f"/bin/bash -lc '{command}'",
            "aggregated_output": "" if not done else "output\n",
            "exit_code": exit_code if done else None,
            "status": "completed" if done else "in_progress",
        },
    }


def opencode_tool(call: str, tool: str, status: str = "completed", **given: object) -> dict:
    return {
        "type": "tool_use",
        "sessionID": "ses_1",
        "part": {
            "type": "tool",
            "tool": tool,
            "callID": call,
            "state": {"status": status, "input": given, "output": "ok", "metadata": {}},
        },
    }


def watch(name: str, max_tool_calls: int = 3) -> AgentWatch:
    return AgentWatch("lgtm", max_tool_calls, agent(name))


def test_codex_fires_when_its_read_of_skill_md_came_back_and_the_run_stops_there():
    seen = watch("codex")
    read = "cat .agents/skills/lgtm/SKILL.md"

    assert seen(codex_command("i1", read, done=False)) is None  # not run yet: not fired yet
    reason = seen(codex_command("i1", read, done=True))

    assert reason == f"the skill fired (Bash({read}), tool call 1)"
    assert (seen.fired, seen.budget) == (True, False)


def test_codex_reading_a_distractor_or_failing_to_read_is_not_firing():
    seen = watch("codex")
    assert (
        seen(codex_command("i1", "cat .agents/skills/safe-migrations/SKILL.md", done=True)) is None
    )
    assert (
        seen(codex_command("i2", "cat .agents/skills/lgtm/SKILL.md", done=True, exit_code=1))
        is None
    )
    assert seen(codex_command("i3", "ls .agents/skills/lgtm", done=True)) is None
    assert not seen.fired
    assert [call.input["command"] for call in seen.first_calls][-1] == "ls .agents/skills/lgtm"


def test_the_call_after_the_budget_is_a_budget_stop_once_it_came_back():
    seen = watch("codex", max_tool_calls=2)
    for n in (1, 2):
        assert seen(codex_command(f"i{n}", f"echo {n}", done=True)) is None
    # The third call might still read SKILL.md: nothing is decided while it runs.
    assert seen(codex_command("i3", "echo 3", done=False)) is None
    reason = seen(codex_command("i3", "echo 3", done=True))

    assert reason == "tool-call budget: 2 tool call(s) without the skill, then Bash(echo 3)"
    assert (seen.fired, seen.budget) == (False, True)


def test_the_skill_as_the_call_after_the_budget_still_fires():
    seen = watch("codex", max_tool_calls=1)
    assert seen(codex_command("i1", "echo 1", done=True)) is None
    reason = seen(codex_command("i2", "cat .agents/skills/lgtm/SKILL.md", done=True))
    assert reason is not None and reason.startswith("the skill fired")


@pytest.mark.parametrize(
    ("event", "fired"),
    [
        (opencode_tool("c1", "skill", name="lgtm"), True),
        (opencode_tool("c1", "skill", name="safe-migrations"), False),
        (opencode_tool("c1", "skill", status="error", name="lgtm"), False),
        # reading the file with another tool is not OpenCode loading the skill
        (opencode_tool("c1", "bash", command="cat .claude/skills/lgtm/SKILL.md"), False),
        (opencode_tool("c1", "read", filePath="/w/.claude/skills/lgtm/SKILL.md"), False),
    ],
)
def test_opencode_fires_by_its_skill_tool_alone(event, fired):
    seen = watch("opencode")
    reason = seen(event)
    assert seen.fired is fired
    assert (reason == "the skill fired (Skill(lgtm), tool call 1)") is fired


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("Skill", {"skill": "lgtm"}, True),
        ("Skill", {"skill": "/lgtm"}, True),
        ("Skill", {"skill": "observability:lgtm"}, True),
        ("Skill", {"command": "lgtm"}, True),
        ("Skill", {"skill": "lgtm-extra"}, False),
        ("Read", {"file_path": "/tmp/x/work/.claude/skills/lgtm/SKILL.md"}, True),
        ("Read", {"file_path": "/tmp/x/work/.claude/skills/other/SKILL.md"}, False),
        ("Bash", {"command": "cat .claude/skills/lgtm/SKILL.md"}, False),
    ],
)
def test_claude_code_s_rule_is_its_stop_hook_s(name, arguments, expected):
    from skilltest.triggers.hook import fires

    call = ToolCall(id="t", name=name, input=arguments, result="ok")
    assert agent("claude-code").fires("lgtm", call) is expected
    assert fires("lgtm", name, arguments) is expected
