"""OpenCode's event stream read into the one transcript: real streams captured against the
emulator (tests/fixtures/agents/opencode/SOURCES.md), and the edges of the format."""

from __future__ import annotations

import json

import pytest

from skilltest.agents.opencode_events import parse_opencode, session_of

from ..conftest import REPO_ROOT

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "agents" / "opencode"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_a_run_with_the_skill_fires_it_and_reads_its_commands_as_bash_calls():
    transcript = parse_opencode(_read("lgtm-spike-with-skill.jsonl"), exit_code=0)

    assert transcript.error is None
    assert transcript.skills_invoked == ("lgtm",)
    assert [call.name for call in transcript.tool_calls] == ["Skill", "Bash", "Bash", "Bash"]
    skill, first, *_ = transcript.tool_calls
    assert skill.input == {"skill": "lgtm"} and skill.agent_name == "skill"
    assert first.input["command"] == "lgtm loki label-values service_name"
    assert first.agent_name == "bash"
    assert first.answers_to("Bash") and first.answers_to("bash")
    # lgtm is not installed in the sandbox: each command exits 127 and counts as failed
    assert first.status == "failed"
    assert first.result is not None and first.result.startswith("Exit code 127")
    assert transcript.final_answer.startswith("The 500s started 12 minutes ago")
    assert transcript.stop_reason == "stop"
    assert transcript.session_id is not None and transcript.session_id.startswith("ses_")
    assert transcript.usage.input_tokens > 0 and transcript.cost_usd is not None


def test_a_run_without_the_skill_fires_nothing():
    transcript = parse_opencode(_read("lgtm-spike-without-skill.jsonl"), exit_code=0)

    assert transcript.skills_invoked == ()
    assert [call.name for call in transcript.tool_calls] == ["Bash"]
    assert "--since 1h" in transcript.tool_calls[0].input["command"]
    assert transcript.final_answer == (
        "I could not find a clear cause in the raw logs; there are many timeouts."
    )


def test_a_follow_up_turn_continues_the_same_session():
    stdout = _read("lgtm-follow-up-with-skill.jsonl")
    transcript = parse_opencode(stdout, exit_code=0)

    sessions = {json.loads(line)["sessionID"] for line in stdout.splitlines() if line.strip()}
    assert len(sessions) == 1 and session_of(stdout) in sessions
    assert [call.name for call in transcript.tool_calls] == ["Skill", "Bash", "Bash"]
    assert "offset 1h" in transcript.tool_calls[-1].input["command"]
    assert transcript.assistant_text[2] == "p99 is 840 ms (p95 410 ms, p50 95 ms)."
    assert transcript.final_answer == "That is what the data shows."


def test_calls_opencode_refused_are_refused_never_run():
    transcript = parse_opencode(_read("refused-calls.jsonl"), exit_code=0)

    unknown, outside = transcript.tool_calls
    # a tool OpenCode does not have comes back through its `invalid` tool
    assert (unknown.name, unknown.status) == ("NotebookEdit", "refused")
    assert "unavailable tool 'NotebookEdit'" in (unknown.result or "")
    # a read outside the working directory: the permission is asked, and rejected, in a run
    assert (outside.name, outside.agent_name, outside.status) == ("Read", "read", "refused")
    assert outside.input == {"file_path": "/nonexistent/file.txt"}
    assert "rejected permission" in (outside.result or "")


def test_a_run_that_exits_before_any_step_did_not_execute():
    transcript = parse_opencode("", exit_code=1, stderr="Error: provider not found\n")

    assert transcript.error == "opencode exited 1 before any step: Error: provider not found"


def test_an_error_event_before_the_answer_is_an_outage_with_its_message():
    stdout = "\n".join(
        json.dumps(event)
        for event in (
            {"type": "step_start", "sessionID": "ses_1", "part": {}},
            {
                "type": "error",
                "sessionID": "ses_1",
                "error": {"name": "APIError", "data": {"message": "overloaded"}},
            },
        )
    )

    transcript = parse_opencode(stdout, exit_code=1)

    assert transcript.error == "opencode reported an error: APIError: overloaded"
    assert transcript.api_errors == ("APIError: overloaded",)


@pytest.mark.parametrize(
    ("line", "unknown", "malformed"),
    [('{"type": "something_new", "part": {}}', 1, 0), ("not json", 0, 1), ("[1, 2]", 0, 1)],
)
def test_lines_it_does_not_know_are_counted_not_fatal(line: str, unknown: int, malformed: int):
    stdout = _read("lgtm-spike-without-skill.jsonl") + line + "\n"

    transcript = parse_opencode(stdout, exit_code=0)

    assert (transcript.unknown_events, transcript.malformed_lines) == (unknown, malformed)
    assert transcript.error is None and len(transcript.tool_calls) == 1


def test_the_fixtures_hold_no_credential():
    for path in FIXTURES.glob("*.jsonl"):
        assert "sk-skilltest" not in path.read_text(encoding="utf-8"), path.name


def test_reading_a_skills_file_is_not_the_skill_firing_in_opencode():
    # tests/fixtures/agents/README.md: the greeting task reads SKILL.md with `cat` through
    # `bash`, then runs `echo`; OpenCode's skill fires through its `skill` tool only.
    transcript = parse_opencode(_read("events.jsonl"), exit_code=0)

    assert [(call.name, call.input, call.status) for call in transcript.tool_calls] == [
        ("Bash", {"command": "cat .agents/skills/greeting/SKILL.md"}, "ran"),
        ("Bash", {"command": "echo hello from skilltest"}, "ran"),
    ]
    assert transcript.skills_invoked == ()
    assert transcript.final_answer == "The greeting printed: hello from skilltest."


def test_the_emulator_sees_the_skill_opencode_lists_in_a_messages_api_request():
    # OpenCode's Anthropic provider speaks the Messages API, and lists skills its own way.
    from skilltest.emulator import RequestView

    body = json.loads(_read("messages-request.json"))

    seen = RequestView.from_body(body, api="anthropic", agent="opencode")
    as_claude = RequestView.from_body(body, api="anthropic", agent="claude-code")

    assert "lgtm" in seen.skills_listed
    assert {"bash", "skill", "read"} <= set(seen.tool_names)
    assert "lgtm" not in as_claude.skills_listed  # Claude Code's requests list skills otherwise
