"""The real anthropic SDK against the emulator: replies, streaming, usage and faults."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from skilltest.emulator import EmulatorServer, ModelScript

MODEL = "claude-opus-5-5"
WAIT_S = 60.0
"""A bound for a hang only, on an answer or a close; load alone never reaches it."""

SCRIPT: dict[str, Any] = {
    "schema_version": 1,
    "seed": 3,
    "rules": [
        {
            "id": "weather-tool",
            "when": {"user": "(?i)weather", "tools": ["get_weather"], "turn": 1},
            "reply": {
                "thinking": "The user wants the weather; I have a tool for that.",
                "text": "Let me look that up.",
                "tool_calls": [{"name": "get_weather", "input": {"city": "Paris", "days": 2}}],
            },
        },
        {
            "id": "weather-answer",
            "when": {"tool_result": "sunny"},
            "reply": {"text": "It is sunny in Paris."},
        },
        {"id": "rate-limited", "when": {"user": "^rl"}, "reply": {"text": "finally"},
         "fault": {"status": 429, "first_n": 2, "retry_after_ms": 20}},
        {"id": "overloaded", "when": {"user": "^storm"}, "reply": {"text": "never"},
         "fault": {"status": 529, "retry_after_ms": 10}},
        {"id": "unauthorised", "when": {"user": "^auth"}, "reply": {"text": "never"},
         "fault": {"status": 401}},
        {"id": "malformed", "when": {"user": "^malformed"}, "reply": {"text": "x"},
         "fault": {"malformed": True}},
        {"id": "truncated", "when": {"user": "^truncated"},
         "reply": {"text": "A long answer that will be cut off after the first delta. " * 3},
         "fault": {"truncated": True}},
        {"id": "midstream", "when": {"user": "^midstream"}, "reply": {"text": "x"},
         "fault": {"midstream_error": True}},
        {"id": "slow", "when": {"user": "^slow"}, "reply": {"text": "done"},
         "fault": {"latency_ms": 300}},
        {"id": "hang", "when": {"user": "^hang"}, "reply": {"text": "never"},
         "fault": {"hang": True}},
    ],
    "default": {"text": "Hello from the stand-in model."},
}  # fmt: skip

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Weather forecast for a city",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    },
}


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer(ModelScript.from_dict(SCRIPT, source="sdk-script")) as running:
        yield running


_clients: list[anthropic.Anthropic] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _clients:
        _clients.pop().close()


def client(server: EmulatorServer, **options: Any) -> anthropic.Anthropic:
    api = anthropic.Anthropic(base_url=server.base_url, api_key="sk-fake", **options)
    _clients.append(api)
    return api


def ask(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def test_text_reply_without_streaming(server: EmulatorServer) -> None:
    message = client(server).messages.create(model=MODEL, max_tokens=50, messages=ask("hi"))

    assert message.id.startswith("msg_01") and len(message.id) == 28
    assert message.model == MODEL  # the script names no model: the requested one is echoed
    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].text == "Hello from the stand-in model."  # type: ignore[union-attr]
    assert message.stop_reason == "end_turn"
    assert message.usage.output_tokens == 8  # 30 characters / 4, rounded up
    assert message.usage.input_tokens > 0
    assert server.requests[0].rule_id is None and server.requests[0].status == 200


def test_tool_use_round_trip_without_streaming(server: EmulatorServer) -> None:
    api = client(server)
    first = api.messages.create(
        model=MODEL, max_tokens=50, tools=[WEATHER_TOOL], messages=ask("Weather in Paris?")
    )

    assert [block.type for block in first.content] == ["thinking", "text", "tool_use"]
    call = first.content[2]
    assert call.type == "tool_use"
    assert (call.name, call.input) == ("get_weather", {"city": "Paris", "days": 2})
    assert call.id.startswith("toolu_01")
    assert first.stop_reason == "tool_use"

    second = api.messages.create(
        model=MODEL,
        max_tokens=50,
        tools=[WEATHER_TOOL],
        messages=[
            *ask("Weather in Paris?"),
            {"role": "assistant", "content": [block.model_dump() for block in first.content]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "sunny"}],
            },
        ],
    )
    assert second.content[0].text == "It is sunny in Paris."  # type: ignore[union-attr]
    assert [r.rule_id for r in server.requests] == ["weather-tool", "weather-answer"]


def test_streaming_delivers_the_same_message(server: EmulatorServer) -> None:
    api = client(server)
    events: list[str] = []
    with api.messages.stream(
        model=MODEL, max_tokens=50, tools=[WEATHER_TOOL], messages=ask("weather please")
    ) as stream:
        for event in stream:
            events.append(event.type)
        final = stream.get_final_message()

    assert [block.type for block in final.content] == ["thinking", "text", "tool_use"]
    assert final.content[0].thinking.startswith("The user wants")  # type: ignore[union-attr]
    assert final.content[2].input == {"city": "Paris", "days": 2}  # type: ignore[union-attr]
    assert final.stop_reason == "tool_use"
    assert "input_json" in events and "text" in events and "thinking" in events
    assert events[0] == "message_start" and events[-1] == "message_stop"
    assert final.usage.output_tokens > 1  # carried by message_delta
    assert server.requests[0].stream is True


def test_usage_is_consistent_and_matches_count_tokens(server: EmulatorServer) -> None:
    api = client(server)
    one = api.messages.create(model=MODEL, max_tokens=50, messages=ask("hello there"))
    two = api.messages.create(model=MODEL, max_tokens=50, messages=ask("hello there"))
    longer = api.messages.create(model=MODEL, max_tokens=50, messages=ask("hello there " * 50))
    counted = api.messages.count_tokens(model=MODEL, messages=ask("hello there"))

    assert one.usage.input_tokens == two.usage.input_tokens == counted.input_tokens
    assert longer.usage.input_tokens > one.usage.input_tokens + 100


def test_async_client_streaming_and_not(server: EmulatorServer) -> None:
    async def scenario() -> tuple[str, str]:
        api = anthropic.AsyncAnthropic(base_url=server.base_url, api_key="sk-fake")
        whole = await api.messages.create(model=MODEL, max_tokens=50, messages=ask("hi"))
        async with api.messages.stream(model=MODEL, max_tokens=50, messages=ask("hi")) as stream:
            streamed = await stream.get_final_text()
        await api.close()
        return whole.content[0].text, streamed  # type: ignore[union-attr]

    assert asyncio.run(scenario()) == ("Hello from the stand-in model.",) * 2


# --- faults ---------------------------------------------------------------------------------


def test_rate_limit_first_n_is_retried_by_the_sdk_then_succeeds(server: EmulatorServer) -> None:
    message = client(server, max_retries=2).messages.create(
        model=MODEL, max_tokens=50, messages=ask("rl please")
    )

    assert message.content[0].text == "finally"  # type: ignore[union-attr]
    assert [(r.status, r.fault) for r in server.requests] == [
        (429, "status 429"),
        (429, "status 429"),
        (200, None),
    ]


def test_rate_limit_answer_carries_retry_after_and_an_anthropic_error(
    server: EmulatorServer,
) -> None:
    with pytest.raises(anthropic.RateLimitError) as caught:
        client(server, max_retries=0).messages.create(
            model=MODEL, max_tokens=50, messages=ask("rl")
        )
    response = caught.value.response
    assert response.headers["retry-after"] == "1"
    assert response.headers["retry-after-ms"] == "20"
    assert caught.value.body == {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "Rate limited (injected by the skilltest emulator)",
        },
    }


def test_overload_storm_exhausts_the_sdk_retries(server: EmulatorServer) -> None:
    with pytest.raises(anthropic.InternalServerError) as caught:
        client(server, max_retries=2).messages.create(
            model=MODEL, max_tokens=50, messages=ask("storm")
        )
    assert caught.value.status_code == 529
    assert [r.status for r in server.requests] == [529, 529, 529]


def test_authentication_error_is_not_retried(server: EmulatorServer) -> None:
    with pytest.raises(anthropic.AuthenticationError):
        client(server, max_retries=2).messages.create(
            model=MODEL, max_tokens=50, messages=ask("auth")
        )
    assert len(server.requests) == 1


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_malformed_response_is_an_sdk_error(server: EmulatorServer, stream: bool) -> None:
    api = client(server, max_retries=0)
    with pytest.raises(json.JSONDecodeError):
        if stream:
            with api.messages.stream(model=MODEL, max_tokens=50, messages=ask("malformed")) as s:
                s.get_final_message()
        else:
            api.messages.create(model=MODEL, max_tokens=50, messages=ask("malformed"))
    assert server.requests[0].fault == "malformed"


def test_truncated_stream_is_an_sdk_error(server: EmulatorServer) -> None:
    api = client(server, max_retries=0)
    texts: list[str] = []
    with (
        pytest.raises(Exception, match="incomplete chunked read"),
        api.messages.stream(model=MODEL, max_tokens=50, messages=ask("truncated")) as stream,
    ):
        for text in stream.text_stream:
            texts.append(text)
    assert texts == ["A long answer that will be cut off after the first del"[:48]]


def test_truncated_json_body_is_a_connection_error(server: EmulatorServer) -> None:
    with pytest.raises(anthropic.APIConnectionError):
        client(server, max_retries=0).messages.create(
            model=MODEL, max_tokens=50, messages=ask("truncated")
        )


def test_midstream_error_event_raises_overloaded(server: EmulatorServer) -> None:
    api = client(server, max_retries=0)
    with (
        pytest.raises(anthropic.APIStatusError, match="overloaded_error"),
        api.messages.stream(model=MODEL, max_tokens=50, messages=ask("midstream")) as stream,
    ):
        stream.get_final_message()
    # Without streaming there is no stream to break: the same fault answers HTTP 529.
    with pytest.raises(anthropic.InternalServerError) as caught:
        api.messages.create(model=MODEL, max_tokens=50, messages=ask("midstream"))
    assert caught.value.status_code == 529


def test_latency_delays_the_answer(server: EmulatorServer) -> None:
    started = time.monotonic()
    message = client(server).messages.create(model=MODEL, max_tokens=50, messages=ask("slow"))
    elapsed = time.monotonic() - started

    assert message.content[0].text == "done"  # type: ignore[union-attr]
    assert 0.3 <= elapsed < WAIT_S  # its latency waited out; a load only adds to it
    assert server.requests[0].fault == "latency 300ms"


def test_hang_ends_in_a_client_timeout_and_does_not_block_shutdown() -> None:
    server = EmulatorServer(ModelScript.from_dict(SCRIPT))
    server.close_grace_s = 2 * WAIT_S  # an answer the close did not wake is waited for
    server.start()
    try:
        started = time.monotonic()
        with pytest.raises(anthropic.APITimeoutError):
            client(server, max_retries=0, timeout=0.5).messages.create(
                model=MODEL, max_tokens=50, messages=ask("hang")
            )
        assert time.monotonic() - started >= 0.5
        assert [(r.status, r.fault) for r in server.requests] == [(None, "hang")]
    finally:
        closing = time.monotonic()
        server.close()
    assert time.monotonic() - closing < WAIT_S
    # The hanging answer woke at the close and ended: nothing of the server is left running.
    mine = f"{server.name}:{server.port}"
    assert not [t for t in threading.enumerate() if t.name.startswith(mine)]
