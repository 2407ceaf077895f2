"""The recording proxy in front of the emulator, through the real anthropic SDK."""

from __future__ import annotations

import time

import anthropic
import pytest

from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.replay.proxy import RecordedExchange, RecordingProxy

from ..loopback.test_server import exits_promptly

SCRIPT = {"schema_version": 1, "rules": [], "default": {"text": "Aggregate first."}}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_an_exchange_is_recorded_before_the_client_has_its_answer(stream):
    # A run ends as soon as its last answer arrives, and its repetition is written then: an
    # exchange handed over after the client had the answer would be missing from the cassette.
    recorded: list[RecordedExchange] = []

    def on_exchange(exchange: RecordedExchange) -> None:
        time.sleep(0.3)  # a busy recorder: the client must wait for it, not overtake it
        recorded.append(exchange)

    with (
        EmulatorServer(ModelScript.from_dict(SCRIPT, source="<inline>")) as emulator,
        RecordingProxy(emulator.base_url, on_exchange=on_exchange) as proxy,
        anthropic.Anthropic(base_url=proxy.base_url, api_key="sk-fake", max_retries=0) as client,
    ):
        request = {
            "model": "claude-sonnet-5-5",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "Error spike?"}],
        }
        started = time.monotonic()
        if stream:
            with client.messages.stream(**request) as answer:
                text = answer.get_final_text()
        else:
            text = client.messages.create(**request).content[0].text
        assert [e.path for e in recorded] == ["/v1/messages"]
        assert time.monotonic() - started >= 0.3
    assert text == "Aggregate first."
    (exchange,) = recorded
    assert exchange.response["status"] == 200
    if stream:
        assert [event for event, _ in exchange.response["events"]][-1] == "message_stop"
    else:
        assert exchange.response["body"]["content"][0]["text"] == "Aggregate first."


def test_a_proxy_whose_run_was_abandoned_does_not_hold_the_program_at_exit():
    # A run still inside its replaying proxy when the command ends (an interrupted suite) is
    # closed while the interpreter shuts down: stopping the proxy must not wait for a serving
    # thread that can no longer run.
    exits_promptly(
        "from skilltest.replay.proxy import RecordingProxy",
        "RecordingProxy(None, on_exchange=print)",
    )
