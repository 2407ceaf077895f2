"""Codex's captured event streams read into the one transcript (tests/fixtures/agents/codex)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.agents.codex_events import parse_codex_events, shell_command

STREAMS = Path(__file__).resolve().parents[2] / "fixtures" / "agents" / "codex" / "streams"


def parsed(case: str, **given):
    return parse_codex_events((STREAMS / f"{case}.jsonl").read_text().splitlines(), **given)


def calls(case: str) -> list[tuple[str, str, str]]:
    return [
        (call.name, call.input.get("command") or call.input.get("file_path"), call.status)
        for call in parsed(case).tool_calls
    ]


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("plain", []),
        ("shell-ok", [("Bash", "echo hello from skilltest", "ran")]),
        ("shell-fail", [("Bash", "echo broken >&2; exit 3", "failed")]),
        (
            "patch",
            [("Write", "{WORKSPACE}/notes.txt", "ran"), ("Edit", "{WORKSPACE}/notes.txt", "ran")],
        ),
        (
            "skill-read",
            [
                ("Bash", "sed -n '1,80p' .agents/skills/greeting/SKILL.md", "ran"),
                ("Bash", "echo hello from skilltest", "ran"),
            ],
        ),
        ("api-error", []),
        ("turn-failed", [("Bash", "echo first", "ran")]),
        (
            "mcp",
            [
                ("mcp__tracker__create_issue", None, "ran"),
                ("mcp__tracker__close_issue", None, "failed"),
            ],
        ),
    ],
)
def test_each_stream_gives_the_tool_calls_in_the_suites_vocabulary(case, expected):
    assert calls(case) == expected


@pytest.mark.parametrize(
    ("case", "answer"),
    [
        ("plain", "Done: nothing needed a command."),
        ("shell-ok", "It printed: hello from skilltest."),
        ("shell-fail", "The command failed."),
        ("patch", "notes.txt now says: second line."),
        ("skill-read", "The greeting printed: hello from skilltest."),
        ("mcp", "Opened #7; #9 could not be closed."),
    ],
)
def test_a_finished_run_is_scored_with_its_final_answer_and_usage(case, answer):
    transcript = parsed(case, exit_code=0)
    assert transcript.completed
    assert transcript.final_answer == answer
    assert transcript.final_result is not None
    assert transcript.final_result.result == answer
    assert not transcript.final_result.is_error
    assert transcript.usage.input_tokens > 0
    assert transcript.usage.output_tokens > 0
    assert transcript.source == "codex"
    assert transcript.session_id and transcript.session_id.startswith("01a")
    # The "Model metadata ... not found" error item is a warning Codex goes on after.
    assert transcript.api_errors == ()
    assert transcript.unknown_events == 0


def test_a_successful_command_keeps_its_output_and_its_codex_item():
    (call,) = parsed("shell-ok").tool_calls
    assert call.result == "hello from skilltest\n"
    assert not call.is_error
    assert call.input["codex_item"] == "command_execution"


def test_a_failing_command_is_a_failed_call_whose_result_names_the_exit_code():
    (call,) = parsed("shell-fail").tool_calls
    assert call.is_error
    assert call.result == "Exit code 3\nbroken\n"
    assert not call.succeeded


def test_file_changes_are_write_then_edit_with_the_kind_kept():
    write, edit = parsed("patch").tool_calls
    assert (write.input["kind"], edit.input["kind"]) == ("add", "update")
    assert {write.input["codex_item"], edit.input["codex_item"]} == {"file_change"}


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("api-error", "We’re currently experiencing high demand"),
        ("turn-failed", "Invalid request (injected by the skilltest emulator)"),
    ],
)
def test_a_failed_turn_leaves_the_run_unscored_with_the_apis_message(case, message):
    transcript = parsed(case, exit_code=1)
    assert not transcript.completed
    assert transcript.error is not None
    assert transcript.error.startswith("Codex's turn failed: ")
    assert message in transcript.error
    assert message in transcript.api_errors[-1]
    assert transcript.final_result is not None and transcript.final_result.is_error
    assert transcript.exit_code == 1


def test_a_run_that_ends_before_its_turn_does_is_unscored_naming_the_exit_and_stderr():
    lines = (STREAMS / "shell-ok.jsonl").read_text().splitlines()[:4]
    transcript = parse_codex_events(lines, exit_code=137, stderr="Killed\n")
    assert transcript.error == "Codex ended without finishing its turn (exit 137): Killed"
    assert transcript.assistant_text == ("Running the command.",)


def test_a_command_still_running_has_no_result():
    lines = (STREAMS / "shell-ok.jsonl").read_text().splitlines()[:5]
    (call,) = parse_codex_events(lines).tool_calls
    assert call.status == "no-result"


def test_the_captured_mcp_calls_keep_their_arguments_and_the_servers_answers():
    made, refused = parsed("mcp").tool_calls
    assert (made.input, made.result) == (
        {"title": "Broken build", "codex_item": "mcp_tool_call"},
        "created #7",
    )
    assert (refused.input["id"], refused.result, refused.is_error) == (9, "no issue 9", True)
    assert made.answers_to("create_issue")


def test_an_mcp_call_is_named_mcp_server_tool_with_its_arguments_and_result():
    events = [
        {"type": "turn.started"},
        {
            "type": "item.completed",
            "item": {
                "id": "item_1",
                "type": "mcp_tool_call",
                "server": "tracker",
                "tool": "create_issue",
                "arguments": {"title": "Broken build"},
                "result": {"content": [{"type": "text", "text": "created #7"}]},
                "error": None,
                "status": "completed",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "item_2",
                "type": "mcp_tool_call",
                "server": "tracker",
                "tool": "close_issue",
                "arguments": {"id": 9},
                "result": None,
                "error": {"message": "no issue 9"},
                "status": "failed",
            },
        },
        {"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 2}},
    ]
    made, refused = parse_codex_events(json.dumps(event) for event in events).tool_calls
    assert (made.name, made.input["title"], made.result, made.status) == (
        "mcp__tracker__create_issue",
        "Broken build",
        "created #7",
        "ran",
    )
    assert made.answers_to("create_issue")
    assert (refused.name, refused.result, refused.status) == (
        "mcp__tracker__close_issue",
        "no issue 9",
        "failed",
    )


def test_lines_that_are_not_events_are_counted_never_fatal():
    nested_too_deep = "[" * 100_000 + "]" * 100_000  # past what the JSON parser takes
    lines = [
        "not json",
        "[1]",
        "",
        nested_too_deep,
        *(STREAMS / "plain.jsonl").read_text().splitlines(),
    ]
    transcript = parse_codex_events(lines)
    assert transcript.malformed_lines == 3
    assert transcript.completed


def test_cached_input_is_read_from_the_cache_not_counted_twice():
    events = [
        {"type": "turn.started"},
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 100, "cached_input_tokens": 60, "output_tokens": 5},
        },
    ]
    usage = parse_codex_events(json.dumps(event) for event in events).usage
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (40, 60, 5)


@pytest.mark.parametrize(
    ("wrapped", "inner"),
    [
        ("/bin/bash -lc 'echo hi'", "echo hi"),
        ("/bin/bash -lc \"sed -n '1,80p' a/SKILL.md\"", "sed -n '1,80p' a/SKILL.md"),
        ("/usr/bin/zsh -c 'ls'", "ls"),
        ("ls -la", "ls -la"),
        ("/bin/bash -lc 'unterminated", "/bin/bash -lc 'unterminated"),
    ],
)
def test_the_shell_wrapper_is_taken_off_the_command(wrapped, inner):
    assert shell_command(wrapped) == inner
