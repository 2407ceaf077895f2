"""Gemini CLI's stream-json events read into the one transcript: real streams captured against
the emulator (tests/fixtures/agents/gemini/SOURCES.md), and the edges of the format."""

from __future__ import annotations

import json

from skilltest.agents import agent
from skilltest.agents.gemini_events import parse_gemini, session_of

from ..conftest import REPO_ROOT

STREAMS = REPO_ROOT / "tests" / "fixtures" / "agents" / "gemini" / "streams"


def _read(case: str) -> str:
    return (STREAMS / f"{case}.jsonl").read_text(encoding="utf-8")


def test_a_skill_activated_fires_it_and_its_command_reads_as_a_bash_call():
    transcript = parse_gemini(_read("skill"), exit_code=0)

    assert transcript.error is None
    assert transcript.skills_invoked == ("greeting",)
    skill, command = transcript.tool_calls
    assert (skill.name, skill.input, skill.agent_name) == (
        "Skill",
        {"skill": "greeting"},
        "activate_skill",
    )
    assert skill.status == "ran"
    assert skill.result is not None and skill.result.startswith("Skill **greeting** activated")
    assert (command.name, command.input) == ("Bash", {"command": "echo hello from skilltest"})
    assert command.answers_to("Bash") and command.answers_to("run_shell_command")
    assert command.result == "hello from skilltest"
    assert transcript.assistant_text == (
        "I'll load the greeting skill.",
        "The greeting printed: hello from skilltest.",
    )
    assert transcript.final_answer == "The greeting printed: hello from skilltest."
    assert transcript.stop_reason == "end_turn"
    assert transcript.usage.input_tokens > 0 and transcript.usage.output_tokens > 0
    # Gemini CLI routed the turn itself (model "auto"): the model is the one that answered.
    assert transcript.model is None
    assert transcript.api_models == ("skilltest-stand-in",)


def test_the_firing_rule_is_an_activate_skill_call_that_succeeded():
    gemini = agent("gemini")
    fired = parse_gemini(_read("skill"), exit_code=0).tool_calls[0]
    refused = parse_gemini(_read("refused"), exit_code=0).tool_calls[1]

    assert gemini.fires("greeting", fired)
    assert not gemini.fires("lgtm", fired)
    assert refused.name == "Skill" and not gemini.fires("no-such-skill", refused)


def test_file_tools_read_as_the_suites_write_edit_and_read():
    transcript = parse_gemini(_read("files"), exit_code=0)

    assert [(call.name, call.agent_name) for call in transcript.tool_calls] == [
        ("Write", "write_file"),
        ("Edit", "replace"),
        ("Read", "read_file"),
    ]
    edit = transcript.tool_calls[1]
    assert (edit.input["file_path"], edit.input["old_string"], edit.input["new_string"]) == (
        "notes.txt",
        "first line",
        "edited line",
    )
    assert {call.status for call in transcript.tool_calls} == {"ran"}


def test_a_tool_it_does_not_have_and_a_skill_not_installed_are_refused_never_run():
    transcript = parse_gemini(_read("refused"), exit_code=0)

    unknown, missing = transcript.tool_calls
    assert (unknown.name, unknown.status) == ("deploy_everything", "refused")
    assert unknown.result is not None and 'Tool "deploy_everything" not found' in unknown.result
    assert (missing.name, missing.input, missing.status) == (
        "Skill",
        {"skill": "no-such-skill"},
        "refused",
    )
    assert transcript.skills_invoked == ()
    assert transcript.error is None


def test_a_command_that_exits_non_zero_reads_as_ran_as_gemini_cli_reports_no_exit_code():
    (call,) = parse_gemini(_read("shell-fail"), exit_code=0).tool_calls

    assert (call.name, call.result, call.status) == ("Bash", "broken", "ran")


def test_an_exit_code_in_a_commands_output_fails_the_call():
    stream = "\n".join(
        json.dumps(event)
        for event in (
            {"type": "init", "session_id": "s1", "model": "auto"},
            {
                "type": "tool_use",
                "tool_name": "run_shell_command",
                "tool_id": "t1",
                "parameters": {"command": "false"},
            },
            {"type": "tool_result", "tool_id": "t1", "status": "success", "output": "Exit Code: 1"},
            {"type": "result", "status": "success", "stats": {}},
        )
    )

    (call,) = parse_gemini(stream, exit_code=0).tool_calls

    assert call.status == "failed"
    assert call.result is not None and call.result.startswith("Exit code 1\n")


def test_an_api_error_is_the_runs_error_in_gemini_clis_words():
    transcript = parse_gemini(_read("api-error"), exit_code=144)

    assert transcript.error == (
        'gemini reported an error: [API Error: {"error":{"code":400,"message":"HTTP 400",'
        '"status":"INVALID_ARGUMENT"}}]'
    )
    assert transcript.tool_calls == ()


def test_a_turn_that_fails_midway_keeps_what_ran_before_and_is_not_scored():
    transcript = parse_gemini(_read("turn-failed"), exit_code=244)

    (call,) = transcript.tool_calls
    assert (call.input["command"], call.result) == ("echo first", "first")
    assert transcript.error is not None and '"code":500' in transcript.error


def test_a_follow_up_resumes_the_first_session_and_reads_as_one_conversation():
    stream = _read("follow-up")
    transcript = parse_gemini(stream, exit_code=0)

    assert session_of(stream) == transcript.session_id
    assert stream.count(f'"session_id":"{transcript.session_id}"') == 2
    assert transcript.assistant_text == ("First answer.", "Second answer, after the first.")
    assert transcript.error is None


def test_a_run_that_printed_no_result_and_failed_says_how_it_ended():
    transcript = parse_gemini(
        '{"type":"init","session_id":"s1","model":"auto"}\nnot json\n',
        exit_code=55,
        stderr="Gemini CLI is not running in a trusted directory.",
    )

    assert transcript.error == (
        "gemini exited 55 before its result: Gemini CLI is not running in a trusted directory."
    )
    assert transcript.malformed_lines == 1
    assert session_of("no events at all") is None


def test_a_command_its_shell_blocked_is_refused_never_run():
    # As Gemini CLI 0.61.0 printed it for a command holding $(...) (tests/agents/test_agent_worlds.py).
    blocked = "Blocked: command substitution detected in shell command."
    stream = "\n".join(
        json.dumps(event)
        for event in (
            {"type": "init", "session_id": "s1", "model": "auto"},
            {
                "type": "tool_use",
                "tool_name": "run_shell_command",
                "tool_id": "t1",
                "parameters": {"command": "h=$(date)"},
            },
            {"type": "tool_result", "tool_id": "t1", "status": "success", "output": blocked},
            {"type": "result", "status": "success", "stats": {}},
        )
    )

    (call,) = parse_gemini(stream, exit_code=0).tool_calls

    assert (call.status, call.result) == ("refused", blocked)
