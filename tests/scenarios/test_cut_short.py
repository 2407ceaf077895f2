"""Runs the agent ended badly are scored; runs the infrastructure ended are not."""

import json
from dataclasses import replace

from skilltest.scenarios.runner import retrying_at_end, timed_out
from skilltest.transcript.stream_json import parse_stream_json

INIT = {"type": "system", "subtype": "init", "claude_code_version": "2.1.328", "skills": []}


def assistant(*blocks):
    message = {"id": "m1", "model": "claude-test", "content": list(blocks)}
    return {"type": "assistant", "message": message, "parent_tool_use_id": None}


def bash(tool_id, command):
    return {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}


def result_of(tool_id, text):
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": text}
    return {"type": "user", "message": {"role": "user", "content": [block]}}


def retry(status, error, attempt):
    return {
        "type": "system",
        "subtype": "api_retry",
        "attempt": attempt,
        "max_retries": 10,
        "error": error,
        "error_status": status,
        "retry_delay_ms": 500,
    }


def stdout(*events):
    return "\n".join(json.dumps(e) for e in events) + "\n"


AT_WORK = stdout(
    INIT,
    assistant(bash("t1", "lgtm loki query 'x'")),
    result_of("t1", "ok"),
    assistant(bash("t2", "sleep 999")),
)
# Between tool calls: the last command came back, and the model (or the CLI) took its time.
BETWEEN_CALLS = stdout(
    INIT,
    assistant(bash("t1", "lgtm loki query 'x'")),
    result_of("t1", "ok"),
    assistant(bash("t2", "echo done")),
    result_of("t2", "done"),
)


def test_a_run_cut_off_while_its_own_command_ran_is_scored_and_names_the_call():
    transcript = timed_out(parse_stream_json(AT_WORK), AT_WORK, 120)
    reason = "cut off after 120 s while its Bash call `sleep 999` was still running"
    assert (transcript.error, transcript.ended, transcript.hung) == (None, reason, reason)


def test_a_hang_is_read_from_what_was_printed_when_the_limit_fell():
    # Stopped, the CLI prints the result of the command it kills: that is not the agent's.
    after = AT_WORK + stdout(result_of("t2", "Exit code 137"))
    transcript = timed_out(parse_stream_json(after), after, 120, at_limit=AT_WORK)
    assert (
        transcript.hung == "cut off after 120 s while its Bash call `sleep 999` was still running"
    )
    assert timed_out(parse_stream_json(after), after, 120).hung is None


def test_a_subagent_waiting_on_the_model_is_not_the_agents_hang():
    agent = {"type": "tool_use", "id": "a1", "name": "Agent", "input": {"prompt": "look"}}
    inner = assistant(bash("t3", "echo inner"))
    inner["parent_tool_use_id"] = "a1"
    done = result_of("t3", "inner")
    done["parent_tool_use_id"] = "a1"
    out = stdout(INIT, assistant(agent), inner, done)
    transcript = timed_out(parse_stream_json(out), out, 60)
    assert transcript.hung is None
    assert transcript.error is not None and "waiting on the model API" in transcript.error


def test_an_agent_cut_short_between_tool_calls_never_finished_and_is_unscored():
    transcript = timed_out(parse_stream_json(BETWEEN_CALLS), BETWEEN_CALLS, 120)
    assert transcript.error == (
        "cut short: timed out after 120s after 2 tool calls, waiting on the model API or the CLI "
        "itself (no tool call of the agent's running), before the agent finished (score_partial: "
        "true scores what it did)"
    )
    assert (transcript.ended, transcript.hung) == (None, None)


def test_score_partial_scores_an_agent_cut_short_on_what_it_did():
    transcript = timed_out(parse_stream_json(BETWEEN_CALLS), BETWEEN_CALLS, 120, score_partial=True)
    assert transcript.error is None
    assert transcript.ended == (
        "timed out after 120s (process group killed; scored on its 2 tool calls)"
    )


def test_a_rate_limit_storm_that_runs_into_the_limit_says_what_the_api_answered():
    out = stdout(
        INIT,
        assistant(bash("t1", "echo hi")),
        result_of("t1", "hi"),
        retry(429, "rate_limit", 1),
        retry(429, "rate_limit", 2),
        retry(429, "rate_limit", 3),
    )
    transcript = timed_out(parse_stream_json(out), out, 120)
    assert transcript.error == (
        "model API failing: HTTP 429 (rate_limit), the CLI had retried 3 times when the run "
        "timed out after 120s"
    )
    assert transcript.ended is None


def test_an_unreachable_api_has_no_status():
    out = stdout(INIT, retry(None, "connection_failed", 1))
    assert retrying_at_end(out) is not None
    transcript = timed_out(parse_stream_json(out), out, 60)
    assert transcript.error == (
        "model API failing: no answer (connection_failed), the CLI had retried 1 time when the "
        "run timed out after 60s"
    )


def test_a_model_that_never_answered_is_unscored():
    out = stdout(INIT)
    transcript = timed_out(parse_stream_json(out), out, 30)
    assert transcript.error is not None
    assert transcript.error.startswith(
        "timed out after 30s before the model answered (waiting on the model API or the CLI "
        "itself, no tool call of the agent's running)"
    )


def test_a_retry_followed_by_progress_is_not_a_failing_api():
    out = stdout(INIT, retry(529, "overloaded", 1), assistant(bash("t1", "echo hi")))
    assert retrying_at_end(out) is None
    # The command the agent then started was still running: its own hang.
    assert timed_out(parse_stream_json(out), out, 30).hung is not None


def test_progress_holding_a_line_separator_after_a_retry_is_progress():
    # Claude Code prints U+2028 unescaped inside JSON strings: it does not end the line.
    said = json.dumps(assistant(bash("t1", "echo 'a\u2028b'")), ensure_ascii=False)
    out = stdout(INIT, retry(529, "overloaded", 1)) + said + "\n"
    assert "\u2028" in out
    assert retrying_at_end(out) is None
    assert timed_out(parse_stream_json(out), out, 30).hung is not None


def test_a_full_context_is_behaviour_and_scored():
    # The API refuses a conversation that outgrew the context window: the agent filled it.
    synthetic = {
        "type": "assistant",
        "message": {
            "id": "m9",
            "model": "<synthetic>",
            "content": [
                {"type": "text", "text": "API Error: 400 prompt is too long: 210000 tokens"}
            ],
        },
        "error": "invalid_request",
        "is_api_error_message": True,
        "api_error_status": 400,
    }
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "result": "API Error: 400 prompt is too long: 210000 tokens",
    }
    out = stdout(
        INIT, assistant(bash("t1", "cat huge.log")), result_of("t1", "x"), synthetic, result
    )
    transcript = parse_stream_json(out)
    assert transcript.error is None
    assert transcript.ended is not None
    assert transcript.ended.startswith("its context was full (API Error: 400 prompt is too long")
    assert len(transcript.tool_calls) == 1


def test_running_out_of_turns_is_scored_and_says_so():
    out = stdout(
        INIT,
        assistant(bash("t1", "echo 1")),
        result_of("t1", "1"),
        {"type": "result", "subtype": "error_max_turns", "is_error": True, "errors": ["max"]},
    )
    transcript = parse_stream_json(out)
    assert transcript.error is None
    assert transcript.ended == "it ran out of turns (--max-turns)"


def test_an_api_outage_is_still_unscored():
    synthetic = {
        "type": "assistant",
        "message": {
            "id": "m9",
            "model": "<synthetic>",
            "content": [{"type": "text", "text": "API Error: 529 Overloaded"}],
        },
        "error": "overloaded",
        "is_api_error_message": True,
        "api_error_status": 529,
    }
    result = {"type": "result", "subtype": "success", "is_error": True, "result": "API Error"}
    transcript = parse_stream_json(stdout(INIT, synthetic, result))
    assert transcript.error is not None and transcript.error.startswith("model API error")
    assert transcript.ended is None


def test_the_agents_own_hang_vetoes_the_run_whatever_it_did_before():
    from skilltest.patterns import compile_patterns
    from skilltest.scenarios.rubric import Expected, score

    expected = Expected(
        required_tools=("Bash",),
        required_patterns=compile_patterns(["lgtm loki"], "s.yaml#/required_patterns"),
    )
    transcript = timed_out(parse_stream_json(AT_WORK), AT_WORK, 120)
    card = score(transcript, expected)
    assert card.score == 0.0
    assert card.vetoes == ("cut off after 120 s while its Bash call `sleep 999` was still running",)
    # What it did before the hang would have passed it.
    assert score(replace(transcript, hung=None), expected).score == 1.0


def test_a_scenario_says_how_many_runs_the_agents_own_hang_failed():
    from skilltest.scenarios.outcome import Arm, RunRecord
    from skilltest.scenarios.verdict import judge

    hang = "cut off after 20 s while its Bash call `probe-fix --wait` was still running"

    def record(arm: Arm, rep: int, score: float, hung: str | None = None) -> RunRecord:
        return RunRecord("s", "notes", arm, rep, score, vetoes=(hung,) if hung else (), hung=hung)

    records = [record(Arm.WITH_SKILL, i, 1.0) for i in range(3)]
    records += [record(Arm.WITH_SKILL, i, 0.0, hang) for i in (3, 4)]
    records += [record(Arm.WITHOUT_SKILL, i, 0.0) for i in range(5)]
    verdict = judge("s", "notes", records, comparison=True)
    # 3 of 5 against 0 of 5: the two hung runs count, and nothing is decided yet.
    assert (verdict.with_skill.scored, verdict.with_skill.passes) == (5, 3)
    assert verdict.verdict == "inconclusive"
    assert (
        "with-skill: 2 of 5 runs cut off while the agent's own tool call was still running, "
        f"counted as failing ({hang})"
    ) in verdict.reasons
