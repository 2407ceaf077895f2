"""The SDK runner: what it sends and what it makes of failures (against the emulator)."""

import asyncio
import http.server
import re
import threading

import pytest

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


FAILURES = [
    pytest.param(
        {"status": 400},
        {"max_retries": 2},
        1,
        re.escape(
            "API error 400: invalid_request_error: Invalid request (injected by the skilltest "
            "emulator)"
        ),
        id="an-error-that-is-not-retried-says-so",
    ),
    pytest.param(
        {"status": 529, "retry_after_ms": 1},
        {"max_retries": 2},
        3,
        r"API error 529: overloaded_error.*\(after 2 retries\)",
        id="a-retried-error-says-how-many-retries",
    ),
    pytest.param(
        {"malformed": True},
        {},
        1,
        r"unreadable API reply \(HTTP 200\): [^;]+: line 1 column \d+ \(char \d+\); body: "
        r"'\{\"id\": \"msg_\w+\", \"type\": \"message\", .*' … '.*'",
        id="a-reply-that-is-not-json-is-the-runs-error-with-status-and-excerpt",
    ),
    pytest.param(
        {"truncated": True},
        {"max_retries": 1},
        2,  # retried, as the SDK retries a broken connection
        r"API connection failed: peer closed connection without sending complete message body "
        r"\(received \d+ bytes, expected \d+\) \(after 1 retries\)",
        id="a-reply-cut-off-by-a-closed-connection-says-how-much-came",
    ),
]


@pytest.mark.parametrize(("faults", "options", "requests", "error"), FAILURES)
def test_a_failed_request_is_the_runs_error(faults, options, requests, error):
    with EmulatorServer(ModelScript.from_dict({**SCRIPT, "faults": faults})) as server:
        transcript = ask(server, TurnRequest(prompt="p", system=None, model="m"), **options)
        assert len(server.requests) == requests
    assert transcript.text == ""
    assert transcript.error is not None
    assert re.fullmatch(error, transcript.error), transcript.error


class _Proxy(http.server.BaseHTTPRequestHandler):
    """Answers every request with 200 and the body the test set: not the Messages API."""

    body = b""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            b"<html>\n  <body>Sign in to the corporate proxy</body>\n</html>",
            "unreadable API reply (HTTP 200): Expecting value: line 1 column 1 (char 0); "
            "body: '<html> <body>Sign in to the corporate proxy</body> </html>'",
        ),
        (
            b"",
            "unreadable API reply (HTTP 200): Expecting value: line 1 column 1 (char 0); "
            "body: (empty)",
        ),
        (
            b'{"type": "message", "note": "' + b"x" * 300 + b'"}',
            "unreadable API reply (HTTP 200): JSON, but not a Messages API message; "
            'body: \'{"type": "message", "note": "' + "x" * 51 + "' … '" + "x" * 38 + "\"}'",
        ),
    ],
    ids=["html-page", "empty", "json-not-a-message"],
)
def test_a_reply_that_is_not_a_message_is_the_runs_error(body, error):
    handler = type("Handler", (_Proxy,), {"body": body})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:

        async def one():
            runner = AnthropicRunner(
                api_key="sk-x", base_url=f"http://127.0.0.1:{server.server_port}", max_retries=0
            )
            try:
                return await runner.run_turn(TurnRequest(prompt="p", system=None, model="m"))
            finally:
                await runner.aclose()

        transcript = asyncio.run(one())
    finally:
        server.shutdown()
        server.server_close()
    assert transcript.error == error


def test_a_misspelt_client_setting_is_refused_not_ignored():
    with pytest.raises(TypeError, match="AnthropicRunner: no such client setting: max_retry"):
        AnthropicRunner(max_retry=0)  # type: ignore[call-arg]
