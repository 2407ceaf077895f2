"""The SDK runner: what it sends and what it makes of failures (against the emulator)."""

import asyncio

from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.runners.anthropic_api import AnthropicRunner
from skilltest.runners.base import TurnRequest

SCRIPT = {
    "schema_version": 1,
    "rules": [{"id": "skill", "when": {"system": "DEMO SKILL"}, "reply": {"text": "with"}}],
    "default": {"text": "without"},
}


def ask(server: EmulatorServer, request: TurnRequest, **options):
    async def one():
        runner = AnthropicRunner(
            backend="emulator", api_key="sk-x", base_url=server.base_url, **options
        )
        try:
            return await runner.run_turn(request)
        finally:
            await runner.aclose()

    return asyncio.run(one())


def test_the_skill_is_a_cached_system_block_and_no_tool_is_offered():
    with EmulatorServer(ModelScript.from_dict(SCRIPT)) as server:
        request = TurnRequest(prompt="p", system="DEMO SKILL", model="m", max_tokens=50)
        transcript = ask(server, request)
        (body,) = [r.body for r in server.requests]
    assert transcript.text == "with"
    assert transcript.error is None
    assert body["system"] == [
        {"type": "text", "text": "DEMO SKILL", "cache_control": {"type": "ephemeral"}}
    ]
    assert "tools" not in body
    assert body["messages"] == [{"role": "user", "content": "p"}]
    assert body["max_tokens"] == 50
    assert "metadata" not in body  # runs are named only when asked (the suite runner's emulator)


def test_the_baseline_has_no_system_prompt_and_temperature_is_sent_when_set():
    with EmulatorServer(ModelScript.from_dict(SCRIPT)) as server:
        transcript = ask(server, TurnRequest(prompt="p", system=None, model="m", temperature=0.2))
        (body,) = [r.body for r in server.requests]
    assert transcript.text == "without"
    assert "system" not in body
    assert body["temperature"] == 0.2


def test_an_error_that_is_not_retried_says_so():
    script = {**SCRIPT, "faults": {"status": 400}}
    with EmulatorServer(ModelScript.from_dict(script)) as server:
        transcript = ask(server, TurnRequest(prompt="p", system=None, model="m"), max_retries=2)
        assert len(server.requests) == 1
    assert transcript.error == (
        "API error 400: invalid_request_error: Invalid request (injected by the skilltest emulator)"
    )


def test_a_retried_error_says_how_many_retries():
    script = {**SCRIPT, "faults": {"status": 529, "retry_after_ms": 1}}
    with EmulatorServer(ModelScript.from_dict(script)) as server:
        transcript = ask(server, TurnRequest(prompt="p", system=None, model="m"), max_retries=2)
        assert len(server.requests) == 3
    assert transcript.error is not None
    assert transcript.error.startswith("API error 529: overloaded_error")
    assert transcript.error.endswith("(after 2 retries)")
