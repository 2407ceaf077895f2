"""The emulator's OpenAI APIs through the real openai SDK: Responses and Chat Completions, JSON and
streamed, tool calls, usage, errors and every fault a script offers."""

from __future__ import annotations

import json

import httpx2
import openai
import pytest

from skilltest.emulator import EmulatorServer, ModelScript

TOOLS_RESPONSES = [
    {
        "type": "function",
        "name": "exec_command",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
    }
]
TOOLS_CHAT = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]

SCRIPT = {
    "schema_version": 1,
    "model": "stand-in-1",
    "rules": [
        {
            "id": "run-ls",
            "when": {"turn": 1, "user": "list"},
            "reply": {
                "thinking": "The user wants the folder listed.",
                "text": "Listing the folder.",
                "tool_calls": [{"name": "Bash", "input": {"command": "ls -la"}}],
            },
        },
        {
            "id": "report",
            "when": {"turn": 2, "tool_result": "total 4"},
            "reply": {"text": "The folder holds one file."},
        },
        {
            "id": "long",
            "when": {"user": "essay"},
            "reply": {"text": "x" * 130, "stop_reason": "max_tokens"},
        },
    ],
}


def client(server: EmulatorServer, **headers: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.base_url + "/v1",
        api_key="sk-fake",
        max_retries=0,
        default_headers=headers or None,
    )


@pytest.fixture
def server():
    with EmulatorServer(ModelScript.from_dict(SCRIPT)) as running:
        yield running


# --- Responses ------------------------------------------------------------------------------


def test_a_response_carries_reasoning_text_and_the_scripted_call_as_the_offered_tool(server):
    response = client(server).responses.create(
        model="gpt-5.1-codex", input="list the files", tools=TOOLS_RESPONSES
    )
    assert [item.type for item in response.output] == ["reasoning", "message", "function_call"]
    assert response.output[0].summary[0].text == "The user wants the folder listed."
    assert response.output_text == "Listing the folder."
    call = response.output[2]
    assert (call.name, json.loads(call.arguments)) == ("exec_command", {"cmd": "ls -la"})
    assert call.call_id.startswith("call_") and response.id.startswith("resp_")
    assert response.status == "completed" and response.model == "stand-in-1"
    usage = response.usage
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert server.requests[-1].api == "responses" and server.requests[-1].rule_id == "run-ls"


def test_a_streamed_response_sends_the_events_of_the_api_in_order_and_adds_up(server):
    with client(server).responses.stream(
        model="gpt-5.1-codex", input="list the files", tools=TOOLS_RESPONSES
    ) as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [event.type for event in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    for needed in (
        "response.output_item.added",
        "response.reasoning_summary_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
    ):
        assert needed in kinds, needed
    assert [event.sequence_number for event in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == final.output_text == "Listing the folder."
    arguments = "".join(
        e.delta for e in events if e.type == "response.function_call_arguments.delta"
    )
    assert json.loads(arguments) == {"cmd": "ls -la"}


def test_the_call_output_sent_back_is_the_next_turns_tool_result(server):
    first = client(server).responses.create(
        model="m", input="list the files", tools=TOOLS_RESPONSES
    )
    call = first.output[2]
    history = [
        {"role": "user", "content": "list the files"},
        *[item.model_dump(exclude_none=True) for item in first.output],
        {"type": "function_call_output", "call_id": call.call_id, "output": "total 4\n-rw a.txt"},
    ]
    second = client(server).responses.create(model="m", input=history, tools=TOOLS_RESPONSES)
    assert second.output_text == "The folder holds one file."
    assert server.requests[-1].rule_id == "report"


def test_a_reply_cut_at_max_tokens_is_an_incomplete_response(server):
    response = client(server).responses.create(model="m", input="write an essay")
    assert response.status == "incomplete"
    assert response.incomplete_details.reason == "max_output_tokens"
    with client(server).responses.stream(model="m", input="write an essay") as stream:
        kinds = [event.type for event in stream]
    assert kinds[-1] == "response.incomplete"


# --- Chat Completions -----------------------------------------------------------------------


def test_a_chat_completion_carries_text_and_the_scripted_call_as_the_offered_tool(server):
    completion = client(server).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "list the files"}], tools=TOOLS_CHAT
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Listing the folder."
    (call,) = choice.message.tool_calls
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "bash",
        {"command": "ls -la"},
    )
    assert completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens
    )
    assert server.requests[-1].api == "chat"


def test_a_streamed_chat_completion_adds_up_to_the_same_answer_and_ends_with_usage(server):
    stream = client(server).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "list the files"}],
        tools=TOOLS_CHAT,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Listing the folder."
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "tool_calls" and set(finishes[:-1]) == {None}
    with client(server).chat.completions.stream(
        model="m", messages=[{"role": "user", "content": "list the files"}], tools=TOOLS_CHAT
    ) as helper:
        for _ in helper:
            pass
        final = helper.get_final_completion()
    (call,) = final.choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == {"command": "ls -la"}


def test_tool_messages_answer_the_next_chat_turn(server):
    history = [
        {"role": "user", "content": "list the files"},
        {
            "role": "assistant",
            "content": "Listing the folder.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "total 4"},
    ]
    completion = client(server).chat.completions.create(model="m", messages=history)
    assert completion.choices[0].message.content == "The folder holds one file."
    assert completion.choices[0].finish_reason == "stop"


# --- errors and faults ----------------------------------------------------------------------


def faulty(fault: dict) -> ModelScript:
    return ModelScript.from_dict(
        {"schema_version": 1, "faults": fault, "default": {"text": "Fine after all."}}
    )


def call(server: EmulatorServer, api: str, stream: bool):
    if api == "responses":
        if stream:
            with client(server).responses.stream(model="m", input="hi") as events:
                return [event.type for event in events]
        return client(server).responses.create(model="m", input="hi")
    messages = [{"role": "user", "content": "hi"}]
    if stream:
        return list(
            client(server).chat.completions.create(model="m", messages=messages, stream=True)
        )
    return client(server).chat.completions.create(model="m", messages=messages)


@pytest.mark.parametrize("api", ["responses", "chat"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_429_is_an_openai_rate_limit_error_that_says_when_to_retry(api, stream):
    with (
        EmulatorServer(faulty({"status": 429, "retry_after_ms": 2000})) as server,
        pytest.raises(openai.RateLimitError) as raised,
    ):
        call(server, api, stream)
    error = raised.value
    assert error.status_code == 429
    assert error.response.headers["retry-after"] == "2"
    assert error.response.headers["retry-after-ms"] == "2000"
    assert error.code == "rate_limit_exceeded"
    assert "try again in 2s" in error.message


@pytest.mark.parametrize("api", ["responses", "chat"])
@pytest.mark.parametrize("status", [500, 529])
def test_a_server_error_is_an_openai_server_error(api, status):
    with (
        EmulatorServer(faulty({"status": status})) as server,
        pytest.raises(openai.InternalServerError) as raised,
    ):
        call(server, api, stream=False)
    assert raised.value.status_code == status
    assert raised.value.body["type"] == "server_error"
    assert server.requests[-1].fault == f"status {status}"


@pytest.mark.parametrize("api", ["responses", "chat"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("failure", ["truncated", "malformed"])
def test_a_broken_answer_fails_in_the_sdk(api, stream, failure):
    # a connection cut short is the SDK's connection error; JSON cut in the middle does not parse
    with (
        EmulatorServer(faulty({failure: True})) as server,
        pytest.raises((openai.APIConnectionError, json.JSONDecodeError)),
    ):
        call(server, api, stream)
    assert server.requests[-1].fault == failure


def test_a_responses_stream_that_fails_midway_reports_an_error_then_response_failed():
    with EmulatorServer(faulty({"midstream_error": True})) as server:
        kinds = call(server, "responses", stream=True)
    assert kinds == ["response.created", "error", "response.failed"]


def test_a_chat_stream_that_fails_midway_raises_the_api_error():
    with (
        EmulatorServer(faulty({"midstream_error": True})) as server,
        pytest.raises(openai.APIError, match="injected by the skilltest emulator"),
    ):
        call(server, "chat", stream=True)


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_latency_delays_an_answer_that_then_arrives_whole(api):
    with EmulatorServer(faulty({"latency_ms": 50})) as server:
        answer = call(server, api, stream=False)
    text = answer.output_text if api == "responses" else answer.choices[0].message.content
    assert text == "Fine after all."
    assert server.requests[-1].fault == "latency 50ms"


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/v1/responses", {"model": "m"}, "the body must be a JSON object with 'input'"),
        ("/v1/chat/completions", {"model": "m"}, "the body must be a JSON object with 'messages'"),
    ],
)
def test_a_request_without_its_conversation_is_a_400_in_openai_form(server, path, body, message):
    answer = httpx2.post(server.base_url + path, json=body)
    assert answer.status_code == 400
    assert answer.json() == {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    }
