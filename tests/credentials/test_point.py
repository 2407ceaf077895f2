"""The credential point: a run's placeholder in, the caller's real credential out, one host only."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from skilltest.credentials import PLACEHOLDER_PREFIX, CredentialPoint

KEY = "sk-ant-api03-" + "Q7x" * 14


class _Upstream(ThreadingHTTPServer):
    seen: list[dict[str, str]]


class _Handler(BaseHTTPRequestHandler):
    server: _Upstream

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.server.seen.append({k.lower(): v for k, v in self.headers.items()})
        data = json.dumps({"ok": True}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def upstream() -> Iterator[_Upstream]:
    server = _Upstream(("127.0.0.1", 0), _Handler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _post(point: CredentialPoint, path: str, headers: dict[str, str]) -> int:
    connection = http.client.HTTPConnection(point.host, point.port, timeout=60)
    try:
        connection.request("POST", path, body=b"{}", headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def _url(server: _Upstream) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


@pytest.mark.parametrize(
    ("variable", "sent", "received"),
    [
        ("ANTHROPIC_API_KEY", ("x-api-key", "{}"), ("x-api-key", KEY)),
        (
            "ANTHROPIC_AUTH_TOKEN",
            ("authorization", "Bearer {}"),
            ("authorization", f"Bearer {KEY}"),
        ),
        (
            "CLAUDE_CODE_OAUTH_TOKEN",
            ("authorization", "Bearer {}"),
            ("authorization", f"Bearer {KEY}"),
        ),
    ],
)
def test_the_placeholder_is_swapped_for_the_real_credential_on_the_way_out(
    upstream, variable, sent, received
):
    with CredentialPoint({variable: KEY, "ANTHROPIC_BASE_URL": _url(upstream)}) as point:
        env = point.env()
        assert env["ANTHROPIC_BASE_URL"] == point.base_url
        assert env[variable].startswith(PLACEHOLDER_PREFIX)
        assert KEY not in json.dumps(env)
        status = _post(point, "/v1/messages", {sent[0]: sent[1].format(env[variable])})
    assert status == 200
    (headers,) = upstream.seen
    assert headers[received[0]] == received[1]
    assert env[variable] not in json.dumps(headers)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"x-api-key": KEY},
        {"x-api-key": PLACEHOLDER_PREFIX + "0" * 40},
        {"authorization": "Bearer sk-skilltest-emulator"},
    ],
    ids=["no key", "the real key", "another run's placeholder", "another key"],
)
def test_a_request_without_this_runs_placeholder_is_refused_and_never_forwarded(upstream, headers):
    with CredentialPoint({"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": _url(upstream)}) as point:
        assert _post(point, "/v1/messages", headers) == 401
        assert point.refused == 1
    assert upstream.seen == []


def test_a_placeholder_beside_a_foreign_key_is_refused(upstream):
    with CredentialPoint({"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": _url(upstream)}) as point:
        placeholder = point.env()["ANTHROPIC_API_KEY"]
        headers = {"x-api-key": placeholder, "authorization": "Bearer sk-other-0123456789"}
        assert _post(point, "/v1/messages", headers) == 401
    assert upstream.seen == []


@pytest.mark.parametrize("target", ["@127.0.0.2:9/v1/messages", "http://127.0.0.2:9/v1/messages"])
def test_a_target_that_names_another_host_is_refused(upstream, target):
    with CredentialPoint({"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": _url(upstream)}) as point:
        placeholder = point.env()["ANTHROPIC_API_KEY"]
        assert _post(point, target, {"x-api-key": placeholder}) == 400
    assert upstream.seen == []


def test_each_point_makes_its_own_placeholder():
    first = CredentialPoint({"ANTHROPIC_API_KEY": KEY})
    second = CredentialPoint({"ANTHROPIC_API_KEY": KEY})
    try:
        assert first.placeholders != second.placeholders
        assert first.secrets()["ANTHROPIC_API_KEY"] == KEY
    finally:
        first.close()
        second.close()


def test_a_sandbox_environment_refuses_the_callers_own_credential(tmp_path):
    from skilltest.claude.isolation import isolated_env

    caller = {"PATH": "/usr/bin", "ANTHROPIC_API_KEY": KEY}
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY would give the run"):
        isolated_env(home=tmp_path, credentials={"ANTHROPIC_API_KEY": KEY}, base=caller)
    env = isolated_env(home=tmp_path, credentials={"ANTHROPIC_API_KEY": "sk-run"}, base=caller)
    assert env["ANTHROPIC_API_KEY"] == "sk-run"
