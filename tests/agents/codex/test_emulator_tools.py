"""A model script's file tools and its ``Skill`` calls, written as Claude Code names them,
reach Codex through its shell."""

from __future__ import annotations

import pytest

from skilltest.emulator.responses_wire import build_response, namespaced_tools
from skilltest.emulator.script import ToolCall
from skilltest.emulator.sse import Message
from skilltest.emulator.tool_names import as_offered

CODEX_OFFERS = ("exec_command", "write_stdin", "request_user_input", "view_image")


@pytest.mark.parametrize(
    ("call", "command"),
    [
        (ToolCall("Read", {"file_path": "notes.txt"}), "cat notes.txt"),
        (ToolCall("Read", {"file_path": "my notes.txt"}), "cat 'my notes.txt'"),
        (
            ToolCall("Write", {"file_path": "notes.txt", "content": "one\nPATCH\n"}),
            "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: notes.txt\n+one\n+PATCH\n"
            "*** End Patch\nPATCH\n",
        ),
        (
            ToolCall("Edit", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}),
            "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n"
            "*** End Patch\nPATCH\n",
        ),
        (ToolCall("Skill", {"skill": "lgtm"}), "cat .agents/skills/lgtm/SKILL.md"),
    ],
)
def test_a_scripted_file_call_is_sent_to_codex_as_a_shell_command(call, command):
    assert as_offered(call, CODEX_OFFERS) == ToolCall("exec_command", {"cmd": command})


def test_agents_with_file_tools_still_get_their_own():
    call = ToolCall("Write", {"file_path": "a", "content": "b"})
    assert as_offered(call, ("write", "bash")) == ToolCall(
        "write", {"filePath": "a", "content": "b"}
    )
    assert as_offered(call, ("Write", "Bash")) == call


NAMESPACED = {
    "tools": [
        {"type": "function", "name": "exec_command"},
        {
            "type": "namespace",
            "name": "mcp__tracker",
            "tools": [
                {"type": "function", "name": "create_issue"},
                {"type": "function", "name": "list"},
            ],
        },
        {
            "type": "namespace",
            "name": "mcp__files",
            "tools": [{"type": "function", "name": "list"}],
        },
    ]
}


def test_functions_inside_a_namespace_are_known_by_their_qualified_and_unique_bare_names():
    assert namespaced_tools(NAMESPACED) == {
        "mcp__tracker__create_issue": ("mcp__tracker", "create_issue"),
        "mcp__tracker__list": ("mcp__tracker", "list"),
        "mcp__files__list": ("mcp__files", "list"),
        "create_issue": ("mcp__tracker", "create_issue"),
    }


@pytest.mark.parametrize(
    ("scripted", "sent"),
    [
        ("mcp__tracker__create_issue", {"namespace": "mcp__tracker", "name": "create_issue"}),
        ("create_issue", {"namespace": "mcp__tracker", "name": "create_issue"}),
        ("mcp__files__list", {"namespace": "mcp__files", "name": "list"}),
        ("exec_command", {"name": "exec_command"}),
    ],
)
def test_a_call_of_a_namespaced_function_is_answered_with_its_namespace(scripted, sent):
    message = Message(
        {
            "id": "msg_01abc",
            "model": "m",
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [{"type": "tool_use", "id": "toolu_01x", "name": scripted, "input": {}}],
        }
    )
    (call,) = build_response(message, NAMESPACED)["output"]
    assert {key: call[key] for key in sent} == sent
    assert ("namespace" in call) is ("namespace" in sent)
