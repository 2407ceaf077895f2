"""The HTTP surface: routes, errors, the request log, concurrency and shutdown."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from skilltest.emulator import EmulatorServer, ModelScript, RecordedRequest

SCRIPT = ModelScript.from_dict(
    {
        "schema_version": 1,
        "model": "stand-in",
        "rules": [
            {"id": "slow", "when": {"user": "^slow"}, "reply": {"text": "ok"},
             "fault": {"latency_ms": 500}},
            {"id": "wait", "when": {"user": "^wait"}, "reply": {"text": "ok"},
             "fault": {"latency_ms": 600_000}},
            {"id": "hang", "when": {"user": "^hang"}, "reply": {"text": "x"},
             "fault": {"hang": True}},
        ],
        "default": {"text": "hello"},
    },
    source="server-script",
)  # fmt: skip


WAIT_S = 60.0
"""A bound for a hang only, on a client's answer or a close; load alone never reaches it."""


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer(SCRIPT) as running:
        yield running


def call(
    server: EmulatorServer, method: str, path: str, body: Any = None, timeout: float = WAIT_S
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    payload = None if body is None else json.dumps(body).encode()
    headers = {"content-type": "application/json", "x-api-key": "anything"}
    connection.request(method, path, body=payload, headers=headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def messages(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": text}],
        **extra,
    }


def test_base_url_is_loopback_with_the_picked_port(server: EmulatorServer) -> None:
    assert server.port > 0
    assert server.base_url == f"http://127.0.0.1:{server.port}"


def test_health_says_plainly_it_is_not_a_real_model(server: EmulatorServer) -> None:
    status, headers, data = call(server, "GET", "/health")
    document = json.loads(data)

    assert status == 200 and headers["content-type"] == "application/json"
    assert document["service"] == "skilltest-emulator"
    assert document["real_model"] is False
    assert "not a real model" in document["description"]
    assert document["script"] == "server-script"
    assert document["rules"] == ["slow", "wait", "hang"]


def test_unknown_route_is_a_404_with_an_anthropic_error(server: EmulatorServer) -> None:
    status, _, data = call(server, "POST", "/v1/complete", {"prompt": "x"})
    assert status == 404
    assert json.loads(data) == {
        "type": "error",
        "error": {
            "type": "not_found_error",
            "message": "POST /v1/complete is not a route of the skilltest emulator",
        },
    }


def test_claude_code_connectivity_check_and_model_list(server: EmulatorServer) -> None:
    assert call(server, "HEAD", "/api/hello")[0] == 200
    status, _, data = call(server, "GET", "/v1/models")
    assert status == 200 and json.loads(data)["data"][0]["id"] == "stand-in"


def test_query_string_is_ignored_as_claude_code_sends_beta_true(server: EmulatorServer) -> None:
    status, _, data = call(server, "POST", "/v1/messages?beta=true", messages("hi"))
    assert status == 200
    assert json.loads(data)["content"] == [{"type": "text", "text": "hello"}]
    assert json.loads(data)["model"] == "stand-in"


def test_invalid_body_is_a_400(server: EmulatorServer) -> None:
    status, _, data = call(server, "POST", "/v1/messages", {"model": "m"})
    assert status == 400
    assert json.loads(data)["error"] == {
        "type": "invalid_request_error",
        "message": "the body must be a JSON object with 'messages'",
    }


def test_count_tokens(server: EmulatorServer) -> None:
    status, _, data = call(server, "POST", "/v1/messages/count_tokens", messages("hi " * 40))
    assert status == 200 and json.loads(data)["input_tokens"] > 30


def test_every_request_is_recorded_and_reported(server: EmulatorServer) -> None:
    seen: list[RecordedRequest] = []
    with EmulatorServer(SCRIPT, on_request=seen.append) as other:
        call(other, "POST", "/v1/messages", messages("hi", stream=True))
        call(other, "GET", "/nowhere")
    assert [(r.method, r.path, r.status, r.rule_id, r.stream) for r in seen] == [
        ("POST", "/v1/messages", 200, None, True),
        ("GET", "/nowhere", 404, None, False),
    ]
    assert seen[0].body["messages"][0]["content"] == "hi"
    assert other.requests == seen


def test_sse_stream_is_chunked_and_well_formed(server: EmulatorServer) -> None:
    status, headers, data = call(server, "POST", "/v1/messages", messages("hi", stream=True))
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    events = [block.split("\n")[0] for block in data.decode().strip().split("\n\n")]
    assert events == [
        "event: message_start",
        "event: ping",
        "event: content_block_start",
        "event: content_block_delta",
        "event: content_block_stop",
        "event: message_delta",
        "event: message_stop",
    ]


def test_sixteen_concurrent_slow_requests_are_answered_in_parallel(
    server: EmulatorServer,
) -> None:
    with ThreadPoolExecutor(max_workers=16) as pool:
        statuses = list(
            pool.map(lambda _: call(server, "POST", "/v1/messages", messages("slow"))[0], range(32))
        )

    assert statuses == [200] * 32


def held_requests(
    server: EmulatorServer, texts: list[str]
) -> tuple[list[threading.Thread], list[BaseException]]:
    """Each of ``texts`` sent from a thread of its own, returning once every one of them is
    in the server; the threads, and the errors the clients see as their connections end."""
    errors: list[BaseException] = []

    def send(text: str) -> None:
        try:
            call(server, "POST", "/v1/messages", messages(text), timeout=2 * WAIT_S)
        except (ConnectionError, http.client.HTTPException) as exc:
            errors.append(exc)

    clients = [threading.Thread(target=send, args=(text,), daemon=True) for text in texts]
    for thread in clients:
        thread.start()
    deadline = time.monotonic() + WAIT_S
    while len(server.requests) < len(texts):
        assert time.monotonic() < deadline, (
            f"{len(server.requests)} of {len(texts)} requests reached the server while the "
            "others were held: it serves one connection at a time"
        )
        time.sleep(0.01)
    return clients, errors


def test_sixteen_held_requests_are_all_in_the_server_at_once() -> None:
    """A server that answered one connection at a time would never take the second of
    requests whose answers hang."""
    with EmulatorServer(SCRIPT) as server:
        held_requests(server, ["hang"] * 16)
    assert [r.fault for r in server.requests] == ["hang"] * 16


def test_close_is_prompt_while_requests_hang_and_wait() -> None:
    server = EmulatorServer(SCRIPT)
    server.close_grace_s = 2 * WAIT_S  # an answer the close did not wake is waited for
    server.start()
    clients, errors = held_requests(server, ["hang", "wait", "hang"])

    started = time.monotonic()
    server.close()
    assert time.monotonic() - started < WAIT_S
    # Every answer woke at the close and ended: none is left running.
    mine = f"{server.name}:{server.port}"
    assert not [t for t in threading.enumerate() if t.name.startswith(mine)]
    for thread in clients:
        thread.join(timeout=WAIT_S)
    assert not any(thread.is_alive() for thread in clients)
    assert len(errors) == 3  # the clients see the connection close, not an answer
