"""A model script's file tools, written as Claude Code names them, reach Codex through its shell."""

from __future__ import annotations

import pytest

from skilltest.emulator.script import ToolCall
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
