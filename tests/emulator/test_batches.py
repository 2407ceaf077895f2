"""The Message Batches API on the emulator, through the real anthropic SDK: requests answered by
the script as direct requests are, batches that take polls and time to end, per-request errors,
expiry, cancellation, and batches kept in a folder across emulators."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from skilltest.emulator import EmulatorServer, ModelScript

MODEL = "claude-opus-5-5"

RULES: list[dict[str, Any]] = [
    {"id": "boom", "when": {"user": "^boom"}, "reply": {"text": "never"},
     "batch": {"result": "errored", "status": 400, "message": "prompt too long"}},
    {"id": "late", "when": {"user": "^late"}, "reply": {"text": "never"},
     "batch": {"result": "expired"}},
    {"id": "gone", "when": {"user": "^gone"}, "reply": {"text": "never"},
     "batch": {"result": "canceled"}},
    {"id": "overloaded", "when": {"user": "^storm"}, "reply": {"text": "never"},
     "fault": {"status": 529}},
    {"id": "hello", "when": {"user": "^hello"}, "reply": {"text": "Hello from the batch."}},
]  # fmt: skip


def script(**batches: Any) -> ModelScript:
    data: dict[str, Any] = {"schema_version": 1, "rules": RULES, "default": {"text": "plain"}}
    if batches:
        data["batches"] = batches
    return ModelScript.from_dict(data)


def request(custom_id: str, prompt: str) -> dict[str, Any]:
    return {
        "custom_id": custom_id,
        "params": {
            "model": MODEL,
            "max_tokens": 64,
            "messages": [{"role": "user", "content": prompt}],
        },
    }


@pytest.fixture
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer(script(polls=2)) as server:
        yield server


def client_of(server: EmulatorServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.base_url, api_key="sk-fake", max_retries=0)


def results_of(client: anthropic.Anthropic, batch_id: str) -> dict[str, Any]:
    return {line.custom_id: line.result for line in client.messages.batches.results(batch_id)}


def test_a_batch_is_processing_until_polled_then_answers_as_direct_requests(emulator):
    client = client_of(emulator)
    direct = client.messages.create(
        model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "hello there"}]
    )
    batch = client.messages.batches.create(
        requests=[request("a", "hello there"), request("b", "anything else")]
    )
    assert batch.id.startswith("msgbatch_")
    assert batch.processing_status == "in_progress"
    assert batch.results_url is None

    polled = [client.messages.batches.retrieve(batch.id) for _ in range(3)]

    assert [p.processing_status for p in polled] == ["in_progress", "in_progress", "ended"]
    assert polled[0].request_counts.processing == 2
    counts = polled[2].request_counts
    assert (counts.processing, counts.succeeded, counts.errored) == (0, 2, 0)
    assert polled[2].ended_at is not None
    assert polled[2].results_url == f"{emulator.base_url}/v1/messages/batches/{batch.id}/results"
    results = results_of(client, batch.id)
    assert results["a"].type == "succeeded"
    assert results["a"].message.content[0].text == direct.content[0].text
    assert results["a"].message.usage.input_tokens == direct.usage.input_tokens
    assert results["b"].message.content[0].text == "plain"


def test_each_request_ends_as_its_rule_says(emulator):
    client = client_of(emulator)
    prompts = {"ok": "hello", "bad": "boom", "old": "late", "stop": "gone", "busy": "storm"}
    batch = client.messages.batches.create(requests=[request(k, p) for k, p in prompts.items()])
    while client.messages.batches.retrieve(batch.id).processing_status != "ended":
        pass

    counts = client.messages.batches.retrieve(batch.id).request_counts
    results = results_of(client, batch.id)

    assert (counts.succeeded, counts.errored, counts.expired, counts.canceled) == (1, 2, 1, 1)
    assert {k: r.type for k, r in results.items()} == {
        "ok": "succeeded",
        "bad": "errored",
        "old": "expired",
        "stop": "canceled",
        "busy": "errored",
    }
    assert results["bad"].error.error.type == "invalid_request_error"
    assert results["bad"].error.error.message == "prompt too long"
    # A fault that fails a direct request fails the same request in a batch.
    assert results["busy"].error.error.type == "overloaded_error"


@pytest.mark.parametrize("end", ["expired", "canceled"])
def test_a_whole_batch_can_expire_or_be_canceled(end):
    with EmulatorServer(script(end=end)) as server:
        client = client_of(server)
        batch = client.messages.batches.create(
            requests=[request("a", "hello"), request("b", "boom")]
        )
        ended = client.messages.batches.retrieve(batch.id)
        results = results_of(client, batch.id)

    assert ended.processing_status == "ended"
    assert getattr(ended.request_counts, end) == 1
    # The request its rule ends otherwise keeps that end.
    assert (results["a"].type, results["b"].type) == (end, "errored")


def test_processing_ms_keeps_a_batch_in_progress_until_it_is_that_old():
    with EmulatorServer(script(processing_ms=300)) as server:
        client = client_of(server)
        batch = client.messages.batches.create(requests=[request("a", "hello")])
        early = client.messages.batches.retrieve(batch.id).processing_status
        time.sleep(0.35)
        late = client.messages.batches.retrieve(batch.id).processing_status

    assert (early, late) == ("in_progress", "ended")


def test_cancel_ends_the_batch_with_its_requests_canceled(emulator):
    client = client_of(emulator)
    batch = client.messages.batches.create(requests=[request("a", "hello")])

    canceling = client.messages.batches.cancel(batch.id)
    ended = client.messages.batches.retrieve(batch.id)

    assert canceling.processing_status == "canceling"
    assert canceling.cancel_initiated_at is not None
    assert (ended.processing_status, ended.request_counts.canceled) == ("ended", 1)
    assert results_of(client, batch.id)["a"].type == "canceled"


def test_results_before_the_end_are_refused(emulator):
    client = client_of(emulator)
    batch = client.messages.batches.create(requests=[request("a", "hello")])

    with pytest.raises(anthropic.BadRequestError, match="in_progress: its results exist once"):
        client.get(f"/v1/messages/batches/{batch.id}/results", cast_to=object)


def test_list_and_delete(emulator):
    client = client_of(emulator)
    first = client.messages.batches.create(requests=[request("a", "hello")])
    second = client.messages.batches.create(requests=[request("a", "hello")])

    listed = [b.id for b in client.messages.batches.list()]
    with pytest.raises(anthropic.BadRequestError, match="still processing"):
        client.messages.batches.delete(first.id)
    client.messages.batches.retrieve(first.id)
    client.messages.batches.retrieve(first.id)
    client.messages.batches.retrieve(first.id)
    deleted = client.messages.batches.delete(first.id)

    assert set(listed) == {first.id, second.id}
    assert deleted.type == "message_batch_deleted"
    with pytest.raises(anthropic.NotFoundError, match="no message batch"):
        client.messages.batches.retrieve(first.id)


@pytest.mark.parametrize(
    ("requests", "message"),
    [
        ([], "a non-empty list 'requests'"),
        ([request("has space", "hello")], r"requests.0.custom_id: must match"),
        ([request("a", "x"), request("a", "y")], "requests.1.custom_id: 'a' is used twice"),
        ([{"custom_id": "a"}], r"requests.0: expected"),
    ],
)
def test_a_batch_the_api_would_refuse_is_refused(emulator, requests, message):
    with pytest.raises(anthropic.BadRequestError, match=message):
        client_of(emulator).messages.batches.create(requests=requests)


def test_a_request_that_is_not_a_message_request_errors_alone(emulator):
    client = client_of(emulator)
    batch = client.messages.batches.create(
        requests=[request("a", "hello"), {"custom_id": "b", "params": {"model": MODEL}}]
    )
    for _ in range(3):
        client.messages.batches.retrieve(batch.id)

    results = results_of(client, batch.id)

    assert results["a"].type == "succeeded"
    assert results["b"].type == "errored"
    assert results["b"].error.error.type == "invalid_request_error"


def test_batches_in_a_folder_outlive_the_emulator(tmp_path: Path):
    with EmulatorServer(script(polls=1), batch_dir=tmp_path) as server:
        client = client_of(server)
        batch = client.messages.batches.create(requests=[request("a", "hello")])
        assert client.messages.batches.retrieve(batch.id).processing_status == "in_progress"
        assert server.batches.created == 1

    with EmulatorServer(script(polls=1), batch_dir=tmp_path) as again:
        client = client_of(again)
        ended = client.messages.batches.retrieve(batch.id)
        text = results_of(client, batch.id)["a"].message.content[0].text
        created = again.batches.created

    assert ended.processing_status == "ended"
    assert text == "Hello from the batch."
    assert created == 0
    assert [p.name for p in tmp_path.iterdir()] == [f"{batch.id}.json"]


def test_every_batch_call_is_in_the_request_log(emulator):
    client = client_of(emulator)
    batch = client.messages.batches.create(requests=[request("a", "hello")])
    for _ in range(3):
        client.messages.batches.retrieve(batch.id)
    results_of(client, batch.id)

    calls = [(r.method, r.path.replace(batch.id, "ID"), r.status) for r in emulator.requests]

    assert calls == [
        ("POST", "/v1/messages/batches", 200),
        ("GET", "/v1/messages/batches/ID", 200),
        ("GET", "/v1/messages/batches/ID", 200),
        ("GET", "/v1/messages/batches/ID", 200),
        # The SDK's results() retrieves the batch for its results_url first.
        ("GET", "/v1/messages/batches/ID", 200),
        ("GET", "/v1/messages/batches/ID/results", 200),
    ]
