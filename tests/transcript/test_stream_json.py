"""What the stream-json parser extracts from real Claude Code output and from broken output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilltest.errors import InputError
from skilltest.transcript import PermissionDenial, Transcript, Usage
from skilltest.transcript.stream_json import load_transcript, parse_cli_output, parse_stream_json

from ..conftest import CORPUS

CC = CORPUS / "claude-code-2.1.328"
PUBLIC = CORPUS / "stream-json"


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.glob("*/*") if p.is_file() and p.suffix != ".md")


def cc(name: str, **kwargs: Any) -> Transcript:
    return load_transcript(CC / name, **kwargs)


def lines(*events: object) -> str:
    return "\n".join(e if isinstance(e, str) else json.dumps(e) for e in events) + "\n"


INIT = {
    "type": "system",
    "subtype": "init",
    "claude_code_version": "9.9.9",
    "model": "claude-test",
    "session_id": "s-1",
    "skills": ["probe-skill"],
    "tools": ["Bash", "Skill"],
}


def assistant(*blocks: dict[str, Any], msg_id: str = "m1", **extra: Any) -> dict[str, Any]:
    usage = {"input_tokens": 10, "output_tokens": 3}
    message = {"id": msg_id, "model": "claude-test", "content": list(blocks), "usage": usage}
    return {"type": "assistant", "message": message, "parent_tool_use_id": None, **extra}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(tool_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}


def tool_result(tool_id: str, content: Any, is_error: bool = False) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    return {
        "type": "user",
        "message": {"role": "user", "content": [{**block, "is_error": is_error}]},
    }


def result(subtype: str = "success", is_error: bool = False, **extra: Any) -> dict[str, Any]:
    return {"type": "result", "subtype": subtype, "is_error": is_error, "result": "ok", **extra}


# --- the real corpus -----------------------------------------------------------------------


def test_the_corpus_is_in_the_repository() -> None:
    # The corpus tests below are parametrised by what is on disk: without this, a missing
    # folder would leave them with nothing to run instead of failing.
    files = {path.relative_to(CORPUS).as_posix() for path in corpus_files()}
    assert len([f for f in files if f.startswith("claude-code-2.1.328/")]) == 57, sorted(files)
    assert "stream-json/olaservo__skilljack-evals__claude-code-greeting-with-skill.ndjson" in files
    assert (CC / "README.md").is_file() and (PUBLIC / "SOURCES.md").is_file()


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_every_corpus_file_parses_without_malformed_lines_or_unknown_events(path: Path) -> None:
    transcript = load_transcript(path)

    assert transcript.malformed_lines == 0
    assert transcript.unknown_events == 0


def test_bash_tool_use_gives_command_result_text_and_run_facts() -> None:
    t = cc("success_bash_tool_use.ndjson", exit_code=0)

    assert [(c.name, c.input["command"], c.result, c.is_error) for c in t.tool_calls] == [
        ("Bash", "echo hello-from-fake", "hello-from-fake", False)
    ]
    assert t.assistant_text == ("Let me check.", "Done: the answer is 42.")
    assert t.cli_version == "2.1.328"
    assert t.model == "claude-opus-5-5"
    assert t.session_id == "e586b30f-6f85-45cf-823f-0930d29eed24"
    assert t.stop_reason == "end_turn"
    assert t.usage == Usage(input_tokens=24, output_tokens=14)
    assert t.cost_usd == pytest.approx(0.000376)
    assert t.exit_code == 0
    assert t.error is None
    assert [(r.subtype, r.num_turns, r.terminal_reason) for r in t.results] == [
        ("success", 2, "completed")
    ]


def test_failed_command_keeps_the_error_text_and_flag() -> None:
    (call,) = cc("tool_result_is_error_nonzero_exit.ndjson").tool_calls

    assert call.input["command"] == "cat ./missing-file.txt"
    assert call.is_error is True
    assert call.result == "Exit code 1\ncat: ./missing-file.txt: No such file or directory"


@pytest.mark.parametrize(
    ("name", "skills", "skill_call_is_error"),
    [
        ("skill_invoke_project_skill.ndjson", ("probe-skill",), False),
        ("skill_invoke_plugin_dir_skill.ndjson", ("probe-plugin:plugin-probe",), False),
        # The call was made, but the CLI refused it: no skill was loaded.
        ("skill_invoke_unknown_skill.ndjson", (), True),
        ("olaservo__skilljack-evals__claude-code-greeting-with-skill.ndjson", ("greeting",), False),
    ],
)
def test_skill_tool_calls(name: str, skills: tuple[str, ...], skill_call_is_error: bool) -> None:
    t = load_transcript(CC / name if (CC / name).exists() else PUBLIC / name)

    assert t.skills_invoked == skills
    assert [(c.name, c.is_error) for c in t.tool_calls] == [("Skill", skill_call_is_error)]


def test_skill_results_and_synthetic_skill_body_are_not_assistant_text() -> None:
    t = cc("skill_invoke_project_skill.ndjson")

    assert t.tool_calls[0].result == "Launching skill: probe-skill"
    assert t.assistant_text == ("Used the skill.",)
    assert "PINEAPPLE" not in t.text


@pytest.mark.parametrize(
    ("name", "prompt", "skills"),
    [
        # The CLI expands a leading /skill itself and prints no event for it: the prompt tells.
        ("skill_slash_command_in_prompt.ndjson", "/probe-skill some args", ("probe-skill",)),
        ("skill_slash_command_in_prompt.ndjson", None, ()),
        ("skill_slash_command_in_prompt.ndjson", "please run /probe-skill", ()),
        # Not a skill the harness loaded: the CLI sent the text as it was.
        ("init_isolated_no_skill.ndjson", "/probe-skill some args", ()),
    ],
)
def test_skill_expanded_from_a_slash_command(
    name: str, prompt: str | None, skills: tuple[str, ...]
) -> None:
    t = cc(name, prompt=prompt)

    assert t.skills_invoked == skills
    assert t.tool_calls == ()


@pytest.mark.parametrize(
    ("name", "denial"),
    [
        (
            "permission_denied_write_default_mode.ndjson",
            PermissionDenial(
                "Write",
                "toolu_write_1",
                {"file_path": "/workspace/denied.txt", "content": "should not be written\n"},
            ),
        ),
        (
            "permission_denied_dontask_mode.ndjson",
            PermissionDenial(
                "Write",
                "toolu_write_1",
                {"file_path": "/workspace/denied.txt", "content": "should not be written\n"},
            ),
        ),
        (
            "permission_denied_bash_not_in_allowedtools.ndjson",
            PermissionDenial(
                "Bash",
                "toolu_bash_1",
                {"command": "touch created-by-fake.txt", "description": "create file"},
            ),
        ),
    ],
)
def test_permission_denials_are_reported_once(name: str, denial: PermissionDenial) -> None:
    t = cc(name)

    # Reported twice by the CLI (system/permission_denied and result.permission_denials).
    assert t.permission_denials == (denial,)
    assert t.tool_calls[0].is_error is True
    assert t.error is None


def test_a_disabled_tool_is_an_error_result_not_a_permission_denial() -> None:
    t = cc("disallowedtools_no_such_tool.ndjson")

    assert t.permission_denials == ()
    assert t.tool_calls[0].is_error is True
    assert "No such tool available: Bash" in (t.tool_calls[0].result or "")


@pytest.mark.parametrize(
    ("name", "retries", "error"),
    [
        ("api_400_invalid_request.ndjson", 0, "model API error: API Error: 400 fake 400 error"),
        (
            "api_401_authentication.ndjson",
            10,
            "model API error: Failed to authenticate. API Error: 401 fake 401 error",
        ),
        ("api_429_rate_limit_default_retries.ndjson", 10, "model API error: API Error: Request"),
        ("api_500_default_retries.ndjson", 10, "model API error: API Error: 500 fake 500 error"),
        ("api_500_max_retries_1.ndjson", 1, "model API error: API Error: 500 fake 500 error"),
        ("api_529_max_retries_0.ndjson", 0, "model API error: API Error: 529 fake 529 error"),
        ("api_529_overloaded_default_retries.ndjson", 10, "model API error: API Error: 529"),
        ("api_malformed_sse.ndjson", 0, "model API error: API Error: JSON Parse error"),
        ("api_midstream_error_event.ndjson", 7, "model API error: API Error: 529 Overloaded"),
        ("api_timeout_api_timeout_ms.ndjson", 1, "model API error: Request timed out."),
        ("api_truncated_stream.ndjson", 1, "model API error: API Error: JSON Parse error"),
        ("api_unreachable_connection_refused.ndjson", 10, "model API error: API Error: Connection"),
    ],
)
def test_api_failures_are_unscored_with_the_reason(name: str, retries: int, error: str) -> None:
    t = cc(name, exit_code=1)

    assert t.error is not None
    assert t.error.startswith(error)
    assert len(t.api_retries) == retries
    assert len(t.api_errors) == 1
    # The synthetic error message is the harness talking, not the model.
    assert t.assistant_text == ()
    assert t.completed is False


def test_api_failure_message_names_status_and_retries() -> None:
    t = cc("api_429_rate_limit_default_retries.ndjson")

    assert t.error == (
        "model API error: API Error: Request rejected (429) · fake 429 error "
        "(HTTP 429, after 10 retries)"
    )
    first = t.api_retries[0]
    assert (first.attempt, first.max_retries, first.error, first.error_status) == (
        1,
        10,
        "rate_limit",
        429,
    )
    assert first.retry_delay_ms == 532


def test_connection_failure_keeps_the_harness_kind_on_the_result() -> None:
    t = cc("api_unreachable_connection_refused.ndjson")

    assert t.final_result is not None
    assert t.final_result.api_error == "connection_failed"
    assert all(retry.error_status is None for retry in t.api_retries)


def test_a_retry_that_then_succeeds_is_scored() -> None:
    t = cc("api_529_once_then_success.ndjson")

    assert t.error is None
    assert [(r.error, r.error_status) for r in t.api_retries] == [("overloaded", 529)]
    assert t.assistant_text == ("Hello from the fake model.",)


@pytest.mark.parametrize(
    ("name", "subtype", "errors", "calls"),
    [
        ("error_max_turns.ndjson", "error_max_turns", ("Reached maximum number of turns (2)",), 2),
        (
            "error_max_budget_usd.ndjson",
            "error_max_budget_usd",
            ("Reached maximum budget ($0.0003)",),
            2,
        ),
    ],
)
def test_running_out_of_turns_or_budget_is_scored(
    name: str, subtype: str, errors: tuple[str, ...], calls: int
) -> None:
    t = cc(name, exit_code=1)

    assert t.error is None
    assert t.final_result is not None
    assert (t.final_result.subtype, t.final_result.is_error) == (subtype, True)
    assert t.final_result.errors == errors
    assert len(t.tool_calls) == calls


def test_error_during_execution_is_unscored() -> None:
    t = cc("error_during_execution_bad_resume.ndjson", exit_code=1)

    assert t.error == (
        "the CLI failed during execution: "
        "No conversation found with session ID: 99999999-2222-4333-8444-555555555555"
    )
    assert t.cli_version is None


def test_background_subagent_gives_two_results_and_tags_subagent_calls() -> None:
    t = cc("subagent_background_default.ndjson")

    assert [(r.subtype, r.origin) for r in t.results] == [
        ("success", None),
        ("success", "task-notification"),
    ]
    assert [(c.name, c.parent_tool_use_id) for c in t.tool_calls] == [
        ("Agent", None),
        ("Bash", "toolu_agent_1"),
    ]
    assert t.tool_calls[1].result == "from-subagent"
    # Usage and cost include the subagent's requests: 5 requests of 12 in / 7 out.
    assert t.usage == Usage(input_tokens=60, output_tokens=35)
    assert t.cost_usd == pytest.approx(0.00094)
    assert t.error is None


def test_legacy_task_name_counts_as_agent() -> None:
    (agent, bash) = cc("subagent_called_with_legacy_Task_name.ndjson").tool_calls

    assert agent.name == "Task"
    assert agent.canonical_name == "Agent"
    assert agent.answers_to("Agent") and agent.answers_to("Task")
    assert bash.parent_tool_use_id == "toolu_agent_1"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("subagent_foreground.ndjson", ("Main agent done.",)),
        (
            "subagent_foreground_forward_subagent_text.ndjson",
            ("Subagent running a command.", "Subagent result: from-subagent", "Main agent done."),
        ),
    ],
)
def test_subagent_text_is_included_only_when_forwarded(name: str, text: tuple[str, ...]) -> None:
    assert cc(name).assistant_text == text


def test_thinking_is_not_text() -> None:
    t = cc("thinking_block.ndjson")

    assert t.assistant_text == ("Hello after thinking.",)
    assert "I should say hello" not in t.text


def test_partial_message_events_do_not_duplicate_content() -> None:
    t = cc("include_partial_messages.ndjson")

    assert t.assistant_text == ("Let me check.", "Done: the answer is 42.")
    assert [c.input["command"] for c in t.tool_calls] == ["echo hello-from-fake"]


def test_split_message_usage_is_not_double_counted() -> None:
    # One API message per content block, each line repeating the same usage; the result's
    # modelUsage is the authority.
    t = load_transcript(
        PUBLIC / "olaservo__skilljack-evals__claude-code-greeting-with-skill.ndjson"
    )

    assert t.usage == Usage(19, 319, 9112, 51049)
    assert t.cost_usd == pytest.approx(0.0249429)
    assert (t.cli_version, t.model) == ("2.1.200", "claude-haiku-4-5-20251001")
    assert len(t.assistant_text) == 1
    assert t.assistant_text[0].startswith("Hello! **GREETING_SUCCESS**")


def test_multi_turn_input_keeps_every_result_and_sums_the_turns() -> None:
    t = cc("multiturn_input_stream_json_interactive_replay.ndjson")

    assert len(t.results) == 3
    assert t.assistant_text == (
        "Turn 1, you said: first question",
        "Turn 2, you said: second question",
        "Turn 3, you said: third question",
    )
    assert t.usage == Usage(input_tokens=36, output_tokens=21)
    assert t.cost_usd == pytest.approx(0.000564)


def test_resumed_session_counts_only_this_runs_cost() -> None:
    t = cc("session_resume_second_run.ndjson")

    assert t.session_id == "11111111-2222-4333-8444-555555555555"
    # The result's total_cost_usd covers the whole session, earlier run included.
    assert t.final_result is not None
    assert t.final_result.total_cost_usd == pytest.approx(0.000376)
    assert t.cost_usd == pytest.approx(0.000188)
    assert t.usage == Usage(input_tokens=12, output_tokens=7)


@pytest.mark.parametrize(
    ("name", "skills", "tools"),
    [
        ("init_tools_limited.ndjson", None, ("Bash", "Read")),
        ("init_isolated_no_skill.ndjson", ("doctor",), None),
        (
            "init_isolated_with_plugin_dir_skill.ndjson",
            ("probe-plugin:plugin-probe", "doctor"),
            None,
        ),
        ("init_disable_slash_commands.ndjson", (), None),
    ],
)
def test_init_reports_loaded_skills_and_tools(
    name: str, skills: tuple[str, ...] | None, tools: tuple[str, ...] | None
) -> None:
    t = cc(name)

    if skills is not None:
        assert t.skills_available == skills
    if tools is not None:
        assert t.tools_available == tools


def test_mcp_tool_is_listed_with_its_full_name() -> None:
    assert "mcp__probe__echo" in cc("init_mcp_servers_connected_and_failed.ndjson").tools_available


@pytest.mark.parametrize(
    ("name", "text", "calls", "error"),
    [
        ("output_format_json.json", ("Done: the answer is 42.",), [], None),
        (
            "output_format_json_verbose.json",
            ("Let me check.", "Done: the answer is 42."),
            ["Bash"],
            None,
        ),
        ("output_format_text.txt", ("Done: the answer is 42.",), [], None),
        (
            "output_format_text_api_error.txt",
            (),
            [],
            "model API error: API Error: 400 fake 400 error",
        ),
    ],
)
def test_other_output_formats(
    name: str, text: tuple[str, ...], calls: list[str], error: str | None
) -> None:
    t = cc(name)

    assert t.assistant_text == text
    assert [c.name for c in t.tool_calls] == calls
    assert t.error == error


def test_json_result_object_keeps_cost_and_usage() -> None:
    t = cc("output_format_json.json")

    assert [r.subtype for r in t.results] == ["success"]
    assert t.usage == Usage(input_tokens=24, output_tokens=14)
    assert t.cost_usd == pytest.approx(0.000376)
    assert t.model == "claude-opus-5-5"


# --- broken and unusual output --------------------------------------------------------------


def test_malformed_lines_are_counted_and_the_rest_is_read() -> None:
    output = lines(
        "Debugger attached.",
        INIT,
        "[1, 2]",
        "42",
        '"a string"',
        "null",
        assistant(text("Hi.")),
        result(),
        '{"type": "assistant", "message": {"id": "m9", "content": [{"type": "te',
    )

    t = parse_stream_json(output)

    assert t.malformed_lines == 6
    assert t.assistant_text == ("Hi.",)
    assert t.error is None


def test_truncated_result_line_means_no_result_and_an_unscored_run() -> None:
    cut = json.dumps(result())[:40]

    t = parse_stream_json(lines(INIT, assistant(text("Hi.")), cut), exit_code=137, stderr="Killed")

    assert t.malformed_lines == 1
    assert t.results == ()
    assert t.error == "the CLI stopped without a result event (exit status 137); stderr: Killed"


@pytest.mark.parametrize(
    ("event", "unknown"),
    [
        ({"type": "brand_new_event", "x": 1}, 1),
        ({"type": "system", "subtype": "brand_new_subtype"}, 1),
        ({"no_type": True}, 1),
        ({"type": {"a": None}}, 1),
        ({"type": ["assistant"]}, 1),
        ({"type": "system", "subtype": []}, 1),
        ({"type": "system", "subtype": {"init": 1}}, 1),
        ({"type": "assistant", "message": "not an object"}, 1),
        ({"type": "stream_event", "event": {"type": "message_start"}}, 0),
        ({"type": "system", "subtype": "hook_started"}, 0),
        ({"type": "rate_limit_event", "rate_limit_info": {}}, 0),
    ],
)
def test_unknown_events_are_counted_never_fatal(event: dict[str, Any], unknown: int) -> None:
    t = parse_stream_json(lines(INIT, event, assistant(text("Hi.")), result()))

    assert t.unknown_events == unknown
    assert t.assistant_text == ("Hi.",)
    assert t.error is None


@pytest.mark.parametrize(
    "event",
    [
        {"type": "assistant", "message": {"content": "plain string content"}},
        {"type": "assistant", "message": {"content": [1, None, {"type": "tool_use"}]}},
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "input": "x"}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "nope"}]}},
        {"type": "user", "message": None},
        {"type": "result", "subtype": None, "usage": "lots", "num_turns": "2", "errors": [1]},
        {"type": "system", "subtype": "init", "skills": "all", "tools": None},
        {"type": "system", "subtype": "api_retry", "attempt": "one"},
        {"type": "system", "subtype": "permission_denied"},
    ],
)
def test_oddly_shaped_events_do_not_raise(event: dict[str, Any]) -> None:
    parse_stream_json(lines(INIT, event, result()))


def test_empty_output_is_unscored_with_exit_status_and_stderr() -> None:
    t = parse_stream_json(
        "", exit_code=1, stderr="Error: --output-format=stream-json requires --verbose\n"
    )

    assert t.error == (
        "the CLI printed no stream-json events (exit status 1); "
        "stderr: Error: --output-format=stream-json requires --verbose"
    )


def test_nonzero_exit_without_result_is_unscored() -> None:
    t = parse_stream_json(lines(INIT, assistant(text("Working..."))), exit_code=2)

    assert t.error == "the CLI stopped without a result event (exit status 2)"


def test_unknown_error_subtype_is_unscored() -> None:
    t = parse_stream_json(lines(INIT, result("error_something_new", True, errors=["boom"])))

    assert t.error == "the CLI ended with error_something_new: boom"


def test_an_error_result_for_a_failed_model_request_is_an_api_error() -> None:
    t = parse_stream_json(
        lines(INIT, result("success", True, result="API Error: 500 boom", api_error_status=500))
    )

    assert t.api_errors == ("API Error: 500 boom",)
    assert t.error == "model API error: API Error: 500 boom (HTTP 500)"


def test_max_output_tokens_on_a_message_is_model_output_not_an_api_error() -> None:
    t = parse_stream_json(
        lines(INIT, assistant(text("Long answer"), error="max_output_tokens"), result())
    )

    assert t.api_errors == ()
    assert t.assistant_text == ("Long answer",)
    assert t.error is None


def test_line_separator_inside_a_json_string_does_not_split_the_line() -> None:
    t = parse_stream_json(lines(INIT, assistant(text("one\u2028two\x85three")), result()))

    assert t.malformed_lines == 0
    assert t.assistant_text == ("one\u2028two\x85three",)


def test_lines_given_one_by_one_read_like_the_whole_output() -> None:
    output = lines(
        INIT, assistant(tool_use("t1", "Bash", command="ls")), tool_result("t1", "a\nb"), result()
    )

    assert parse_stream_json(output.splitlines(keepends=True)) == parse_stream_json(output)


def test_usage_without_a_result_counts_each_message_once() -> None:
    t = parse_stream_json(
        lines(
            INIT,
            assistant(text("a"), msg_id="m1"),
            assistant(tool_use("t1", "Bash", command="ls"), msg_id="m1"),
            assistant(text("b"), msg_id="m2"),
        )
    )

    assert t.usage == Usage(input_tokens=20, output_tokens=6)
    assert t.cost_usd is None


@pytest.mark.parametrize(
    ("content", "text_seen"),
    [
        ("plain", "plain"),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "a\nb"),
        ([{"type": "image", "source": {}}], "[image]"),
        ([], ""),
        (None, ""),
    ],
)
def test_tool_result_text(content: Any, text_seen: str) -> None:
    t = parse_stream_json(
        lines(INIT, assistant(tool_use("t1", "Read")), tool_result("t1", content), result())
    )

    assert t.tool_calls[0].result == text_seen


def test_tool_call_without_result_has_none() -> None:
    t = parse_stream_json(lines(INIT, assistant(tool_use("t1", "Bash", command="ls")), result()))

    assert t.tool_calls[0].result is None


def test_skill_named_by_the_older_command_argument() -> None:
    t = parse_stream_json(
        lines(
            INIT,
            assistant(tool_use("t1", "Skill", command="/code-review")),
            tool_result("t1", "ok"),
            result(),
        )
    )

    assert t.skills_invoked == ("code-review",)


def test_repeated_skill_is_listed_once() -> None:
    t = parse_stream_json(
        lines(
            INIT,
            assistant(tool_use("t1", "Skill", skill="probe-skill")),
            assistant(tool_use("t2", "Skill", skill="probe-skill"), msg_id="m2"),
            result(),
        )
    )

    assert t.skills_invoked == ("probe-skill",)
    assert len(t.tool_calls) == 2


@pytest.mark.parametrize(
    ("output", "exit_code", "text_seen", "error"),
    [
        ("The answer.\n", 0, ("The answer.",), None),
        ("The answer.\n", None, ("The answer.",), None),
        ("", 0, (), "the CLI printed nothing (exit status 0)"),
        ("Partial\n", 1, ("Partial",), "the CLI exited with status 1: Partial"),
        ("API Error: 529 overloaded\n", None, (), "model API error: API Error: 529 overloaded"),
        # The model may well talk about API errors in a successful run.
        ("API Error: is what you saw.\n", 0, ("API Error: is what you saw.",), None),
    ],
)
def test_plain_text_output(
    output: str, exit_code: int | None, text_seen: tuple[str, ...], error: str | None
) -> None:
    t = parse_cli_output(output, exit_code=exit_code)

    assert t.assistant_text == text_seen
    assert t.error == error
    assert t.results == ()


def test_json_array_with_a_non_object_counts_it_malformed() -> None:
    output = json.dumps([INIT, 7, assistant(text("Hi.")), result()])

    t = parse_cli_output(output)

    assert t.malformed_lines == 1
    assert t.assistant_text == ("Hi.",)


def test_missing_transcript_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_transcript(tmp_path / "nope.ndjson")

    assert (
        str(caught.value)
        == f"{tmp_path / 'nope.ndjson'}: transcript file not found\n  fix: check the path"
    )


def test_cut_multibyte_character_in_a_file_is_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "run.ndjson"
    path.write_bytes(lines(INIT, assistant(text("café")), result()).encode() + "é".encode()[:1])

    t = load_transcript(path)

    assert t.assistant_text == ("café",)
    assert t.malformed_lines == 1


def test_denial_reported_only_by_the_system_event_takes_the_calls_arguments() -> None:
    denied = {"type": "system", "subtype": "permission_denied", "tool_name": "Bash"}
    t = parse_stream_json(
        lines(
            INIT,
            assistant(tool_use("t1", "Bash", command="rm -rf /")),
            {**denied, "tool_use_id": "t1"},
        )
    )

    assert t.permission_denials == (PermissionDenial("Bash", "t1", {"command": "rm -rf /"}),)
