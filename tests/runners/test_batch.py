"""The Message Batches runner: how a run's requests are cut into batches, and what it makes of
each way a batch request ends (against the emulator, through the real SDK)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.errors import InputError
from skilltest.runners.anthropic_api import SAMPLING_API_VERSION, AnthropicRunner
from skilltest.runners.base import TurnRequest
from skilltest.runners.batch import BatchError, BatchItem, BatchRunner, split

T = TypeVar("T")

SCRIPT: dict[str, Any] = {
    "schema_version": 1,
    "rules": [
        {"id": "skill", "when": {"system": "DEMO SKILL"}, "reply": {"text": "with"}},
        {"id": "echo-key", "when": {"user": "^echo"}, "reply": {"text": "key sk-secret-123456789"}},
        {"id": "bad", "when": {"user": "^bad"}, "reply": {"text": "x"},
         "batch": {"result": "errored", "status": 400, "message": "prompt is too long"}},
        {"id": "late", "when": {"user": "^late"}, "reply": {"text": "x"},
         "batch": {"result": "expired"}},
        {"id": "gone", "when": {"user": "^gone"}, "reply": {"text": "x"},
         "batch": {"result": "canceled"}},
    ],
    "default": {"text": "without"},
}  # fmt: skip


def item(custom_id: str, size: int = 10, version: str | None = None) -> BatchItem:
    return BatchItem(custom_id, {"messages": [{"role": "user", "content": "x" * size}]}, version)


def test_a_run_fits_one_batch_when_under_the_limits():
    items = [item(f"r{i}") for i in range(5)]
    assert split(items) == [items]


def test_batches_are_cut_by_count_and_by_bytes_in_order():
    items = [item(f"r{i}", size=100) for i in range(7)]

    by_count = split(items, max_requests=3)
    by_bytes = split(items, max_bytes=3 * items[0].size + 20)

    assert [[i.custom_id for i in b] for b in by_count] == [
        ["r0", "r1", "r2"],
        ["r3", "r4", "r5"],
        ["r6"],
    ]
    assert [len(b) for b in by_bytes] == [3, 3, 1]
    assert all(sum(i.size for i in b) + 16 <= 3 * items[0].size + 20 for b in by_bytes)


def test_requests_that_need_another_api_version_go_in_a_batch_of_their_own():
    items = [item("a"), item("b", version=SAMPLING_API_VERSION), item("c")]

    assert [[i.custom_id for i in b] for b in split(items)] == [["a", "c"], ["b"]]


def test_a_request_larger_than_a_batch_is_bad_input():
    with pytest.raises(InputError, match=r"one request is .* bytes; a batch holds at most 100"):
        split([item("huge", size=500)], max_bytes=100)


def on_emulator(
    script: dict[str, Any],
    work: Callable[[BatchRunner, EmulatorServer], Awaitable[T]],
    api_key: str | None = "sk-x",
) -> T:
    async def go(server: EmulatorServer) -> T:
        runner = BatchRunner(backend="emulator", api_key=api_key, base_url=server.base_url)
        try:
            return await work(runner, server)
        finally:
            await runner.aclose()

    with EmulatorServer(ModelScript.from_dict(script)) as server:
        return asyncio.run(go(server))


def request(prompt: str, system: str | None = None, **more: Any) -> TurnRequest:
    return TurnRequest(prompt=prompt, system=system, model="m", max_tokens=50, **more)


async def submit_and_read(runner: BatchRunner, prompts: dict[str, TurnRequest]) -> dict[str, Any]:
    batch = await runner.submit([runner.item(key, r) for key, r in prompts.items()])
    status = await runner.poll(batch)
    assert status.ended and status.requests == len(prompts)
    return await runner.results(batch)


def test_a_succeeded_request_is_the_transcript_a_direct_request_gives():
    request_ = request("p", system="DEMO SKILL")

    async def both(runner: BatchRunner, server: EmulatorServer) -> tuple[Any, Any]:
        answers = await submit_and_read(runner, {"a": request_})
        direct = AnthropicRunner(backend="emulator", api_key="sk-x", base_url=server.base_url)
        try:
            return answers["a"], await direct.run_turn(request_)
        finally:
            await direct.aclose()

    answer, direct = on_emulator(SCRIPT, both)

    assert answer.result == "succeeded"
    batched = answer.transcript
    assert (batched.text, batched.usage, batched.model) == (direct.text, direct.usage, direct.model)
    assert batched.stop_reason == direct.stop_reason
    assert batched.error is None
    assert answer.message["content"] == [{"type": "text", "text": "with"}]


def test_requests_that_did_not_succeed_are_errors_that_say_how_they_ended():
    prompts = {name: request(name) for name in ("bad", "late", "gone")}
    answers = on_emulator(SCRIPT, lambda runner, _: submit_and_read(runner, prompts))

    errors = {key: answer.transcript.error for key, answer in answers.items()}
    assert {key: answer.result for key, answer in answers.items()} == {
        "bad": "errored",
        "late": "expired",
        "gone": "canceled",
    }
    assert errors["bad"] == "batch request errored: invalid_request_error: prompt is too long"
    assert errors["late"] == (
        "batch request expired: the batch ended (24 hours after it was created) before this "
        "request was processed; run it again"
    )
    assert errors["gone"] == (
        "batch request canceled: the batch was canceled before this request was run"
    )
    assert all(answer.message is None for answer in answers.values())


def test_the_runs_are_named_for_the_emulator_and_a_temperature_asks_for_its_api_version():
    runner = BatchRunner(backend="emulator", api_key="sk-x", base_url="http://127.0.0.1:9")
    runner.name_runs = True
    plain = runner.item("a", request("p", run="suite.yaml#s:with_skill", rep=2))
    warm = runner.item("b", request("p", temperature=0.3))
    asyncio.run(runner.aclose())

    assert plain.params["metadata"] == {"user_id": "skilltest-run:2:suite.yaml#s:with_skill"}
    assert plain.version is None
    assert (warm.params["temperature"], warm.version) == (0.3, SAMPLING_API_VERSION)


def test_an_answer_that_repeats_the_key_is_redacted(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret-123456789")
    answers = on_emulator(
        SCRIPT, lambda runner, _: submit_and_read(runner, {"a": request("echo")}), api_key=None
    )

    assert "sk-secret-123456789" not in answers["a"].transcript.text
    assert "[REDACTED:ANTHROPIC_API_KEY]" in answers["a"].transcript.text


def test_a_batch_the_api_does_not_know_is_a_failed_poll_that_says_so():
    status = on_emulator(SCRIPT, lambda runner, _: runner.poll("msgbatch_01unknown"))

    assert (status.processing_status, status.missing, status.ended) == ("failed", True, False)
    assert status.problem is not None and status.problem.startswith("API error 404: not_found")


def test_a_batch_the_api_refuses_raises_with_the_reason():
    bad = BatchItem("has space", {"messages": [{"role": "user", "content": "p"}]})

    with pytest.raises(BatchError, match=r"API error 400: invalid_request_error: .*custom_id"):
        on_emulator(SCRIPT, lambda runner, _: runner.submit([bad]))
