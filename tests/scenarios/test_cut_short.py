"""Runs the agent ended badly are scored; runs the infrastructure ended are not."""

import json

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


def test_an_agent_cut_short_at_work_never_finished_and_is_unscored():
    transcript = timed_out(parse_stream_json(AT_WORK), AT_WORK, 120)
    assert transcript.error == (
        "cut short: timed out after 120s after 2 tool calls, before the agent finished "
        "(score_partial: true scores what it did)"
    )
    assert transcript.ended is None


def test_score_partial_scores_an_agent_cut_short_on_what_it_did():
    transcript = timed_out(parse_stream_json(AT_WORK), AT_WORK, 120, score_partial=True)
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
    assert transcript.error.startswith("timed out after 30s before the model answered")


def test_a_retry_followed_by_progress_is_not_a_failing_api():
    out = stdout(INIT, retry(529, "overloaded", 1), assistant(bash("t1", "echo hi")))
    assert retrying_at_end(out) is None
    assert timed_out(parse_stream_json(out), out, 30).error.startswith("cut short: ")


def test_progress_holding_a_line_separator_after_a_retry_is_progress():
    # Claude Code prints U+2028 unescaped inside JSON strings: it does not end the line.
    said = json.dumps(assistant(bash("t1", "echo 'a\u2028b'")), ensure_ascii=False)
    out = stdout(INIT, retry(529, "overloaded", 1)) + said + "\n"
    assert "\u2028" in out
    assert retrying_at_end(out) is None
    assert timed_out(parse_stream_json(out), out, 30).error.startswith("cut short: ")


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
