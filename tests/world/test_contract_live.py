"""`skilltest world contract --live`: the probes' answers from a stand-in for the real service,
on loopback behind `--resolve`, set beside the fake's, as the user sees them."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.errors import ConfigurationError, WorldError
from skilltest.world.live_contract import Answer, compare, live_answer, plan, world_policy
from skilltest.world.model import load_world
from skilltest.world.tls import CertificateAuthority

HOST = "api.tickets.example.com"
TOKEN = "live-token-0123456789abcdef"

WORLD = """\
services:
  - name: tickets
    hosts: [api.tickets.example.com]
    auth: {env: TICKETS_API_TOKEN}
    data:
      tickets:
        - {id: INC-1042, title: Checkout errors, status: P1, owner: payments-team, version: 3}
        - {id: INC-1050, title: Payroll export, status: P2, owner: finance-team, version: 4}
    routes:
      - {method: GET, path: /tickets, action: list, collection: tickets, filters: [status]}
      - {method: GET, path: "/tickets/{id}", action: get, collection: tickets}
      - {method: PATCH, path: "/tickets/{id}", action: merge, collection: tickets}
    contract:
      probe: [PROBES]
"""
PROBES = '"GET /tickets?status=P1", "GET /tickets/INC-1042", "GET /tickets/INC-9999"'

# What the stand-in answers: the list as the fake does, INC-1042 with `owner` renamed and
# `version` a string, and an unknown ticket 410 where the fake answers 404.
LIVE: dict[str, tuple[int, object]] = {
    "/tickets?status=P1": (
        200,
        {
            "tickets": [
                {
                    "id": "INC-1042",
                    "title": "Checkout errors",
                    "status": "P1",
                    "owner": "payments-team",
                    "version": 3,
                }
            ]
        },
    ),
    "/tickets/INC-1042": (
        200,
        {
            "id": "INC-1042",
            "title": "Checkout errors",
            "status": "P1",
            "assignee": "payments-team",
            "version": "3",
        },
    ),
    "/tickets/INC-9999": (410, {"error": "Gone"}),
}


class StandIn:
    """An HTTPS stand-in for the real service on loopback, with a certificate for its name."""

    def __init__(self, folder: Path) -> None:
        self.ca = CertificateAuthority(folder)
        self.log: list[tuple[str, str, str | None]] = []
        log = self.log

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                log.append((self.command, self.path, self.headers.get("Authorization")))
                status, body = LIVE.get(self.path, (404, {"error": "Not Found"}))
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    status, body = 401, {"error": "Unauthorized"}
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = _answer

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = self.ca.server_context(HOST)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def args(self) -> list[str]:
        return ["--resolve", f"{HOST}=127.0.0.1:{self.port}", "--ca-file", str(self.ca.ca_file)]


@pytest.fixture
def stand_in(tmp_path: Path) -> Iterator[StandIn]:
    server = StandIn(tmp_path / "ca")
    yield server
    server.server.shutdown()
    server.server.server_close()


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TICKETS_API_TOKEN", TOKEN)
    path = tmp_path / "world.yaml"
    path.write_text(WORLD.replace("PROBES", PROBES))
    return path


def test_live_reports_exactly_the_stand_ins_drifts_and_sends_only_the_probes(
    world: Path, stand_in: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["world", "contract", str(world), "--live", *stand_in.args()]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"same   GET /tickets?status=P1 (tickets, https://{HOST}/tickets?status=P1)",
        f"drift  GET /tickets/INC-1042 (tickets, https://{HOST}/tickets/INC-1042): 3 difference(s)",
        "  field added at /assignee: the service answers it (string), the fake does not",
        "  field removed at /owner: the fake answers it (string), the service does not",
        "  type changed at /version: the fake answers number, the service string",
        f"drift  GET /tickets/INC-9999 (tickets, https://{HOST}/tickets/INC-9999): 1 difference(s)",
        "  status changed: the fake answers 404, the service 410",
        "3 probe(s): 1 same, 2 drifted",
    ]
    # docs/world.md shows the first two probes' lines of this output as printed.
    docs = (Path(__file__).resolve().parents[2] / "docs" / "world.md").read_text()
    shown = docs.split("prints one line per probe", 1)[1].split("```\n", 2)[1].splitlines()
    assert shown[:-1] == out.splitlines()[:5]
    assert err == ""
    assert stand_in.log == [
        ("GET", "/tickets?status=P1", f"Bearer {TOKEN}"),
        ("GET", "/tickets/INC-1042", f"Bearer {TOKEN}"),
        ("GET", "/tickets/INC-9999", f"Bearer {TOKEN}"),
    ]
    assert TOKEN not in out + err


def test_all_same_exits_0(tmp_path: Path, stand_in: StandIn, capsys, monkeypatch) -> None:
    monkeypatch.setenv("TICKETS_API_TOKEN", TOKEN)
    path = tmp_path / "world.yaml"
    path.write_text(WORLD.replace("PROBES", '"GET /tickets?status=P1"'))
    assert main(["world", "contract", str(path), "--live", *stand_in.args()]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 probe(s): 1 same, 0 drifted"


def test_a_write_probe_is_refused_at_load_and_nothing_is_sent(
    world: Path, stand_in: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    world.write_text(WORLD.replace("PROBES", '"GET /tickets", "PATCH /tickets/INC-1042"'))
    assert main(["world", "contract", str(world), "--live", *stand_in.args()]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"skilltest: error: {world}#/services/0/contract/probe/1: the contract probe "
        "'PATCH /tickets/INC-1042' would write to the real service: only GET and HEAD are "
        "sent to it\n"
        "  fix: probe a read (GET /tickets?status=P1); a write cannot be checked against a live "
        "service without changing it\n"
    )
    assert stand_in.log == []


def test_without_live_nothing_is_sent_and_the_plan_is_listed(
    world: Path, stand_in: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["world", "contract", str(world), *stand_in.args()]) == 2
    out, err = capsys.readouterr()
    via = f" via 127.0.0.1:{stand_in.port}"
    auth = "(TICKETS_API_TOKEN in Authorization: Bearer)"
    assert out.splitlines() == [
        "would send 3 read(s) to the live service:",
        f"  GET https://{HOST}/tickets?status=P1 {auth}{via}",
        f"  GET https://{HOST}/tickets/INC-1042 {auth}{via}",
        f"  GET https://{HOST}/tickets/INC-9999 {auth}{via}",
    ]
    assert err == (
        "skilltest: error: nothing was sent: world contract reaches the real service only with "
        f"--live\n  fix: skilltest world contract {world} --live\n"
    )
    assert TOKEN not in out + err
    assert stand_in.log == []


@pytest.mark.parametrize(
    ("resolve", "message"),
    [
        (
            "evil.example.net=127.0.0.1:8443",
            "--resolve 'evil.example.net=127.0.0.1:8443': evil.example.net is refused by the "
            "world's destination policy (not a declared host)",
        ),
        (
            f"{HOST}=10.0.0.5:8443",
            f"--resolve '{HOST}=10.0.0.5:8443': 10.0.0.5:8443 is not a loopback address and "
            "port; only a stand-in on this machine may take a declared host's place",
        ),
        (f"{HOST}=127.0.0.1", f"--resolve '{HOST}=127.0.0.1': expected HOST=ADDRESS:PORT"),
    ],
)
def test_resolve_accepts_only_a_declared_host_on_loopback(
    world: Path, capsys: pytest.CaptureFixture[str], resolve: str, message: str
) -> None:
    assert main(["world", "contract", str(world), "--live", "--resolve", resolve]) == 2
    assert capsys.readouterr().err.startswith(f"skilltest: error: {message}\n")


def test_a_host_not_in_the_world_is_refused_before_any_socket(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[object] = []

    def no_socket(*args: object, **kwargs: object) -> None:
        opened.append(args)
        raise AssertionError("a socket was opened")

    monkeypatch.setattr(socket, "create_connection", no_socket)
    monkeypatch.setattr(socket, "getaddrinfo", no_socket)
    loaded = load_world(world)
    probe = plan(loaded)[0]
    for url in ("https://evil.example.net/tickets", "https://169.254.169.254/latest/meta-data/"):
        with pytest.raises(ConfigurationError, match="refused to send to"):
            live_answer(probe, policy=world_policy(loaded), credential=TOKEN, url=url)
    assert opened == []


def test_a_missing_credential_is_named_never_sent(
    world: Path, stand_in: StandIn, capsys, monkeypatch
) -> None:
    monkeypatch.delenv("TICKETS_API_TOKEN")
    assert main(["world", "contract", str(world), "--live", *stand_in.args()]) == 2
    assert (
        "the probes need the live service's credential in TICKETS_API_TOKEN, which is not set"
        in (capsys.readouterr().err)
    )
    assert stand_in.log == []


def test_arrays_compare_the_union_of_their_first_items() -> None:
    fake = Answer(200, "application/json", {"items": [{"a": 1}, {"b": "x"}]}, True)
    live = Answer(200, "text/html", {"items": [{"a": 1, "b": None}]}, True)
    assert [str(drift) for drift in compare(fake, live)] == [
        "content type changed: the fake answers application/json, the service text/html",
        "type changed at /items/0/b: the fake answers string, the service null",
    ]


@pytest.mark.parametrize(
    ("probe", "message"),
    [
        (
            '"DELETE /tickets/INC-1042"',
            "the contract probe 'DELETE /tickets/INC-1042' would write to the real service",
        ),
        ('"GET /tickets/{id}"', "the contract probe 'GET /tickets/{id}' is not one concrete"),
        ('"GET /orders"', "no GET route of 'tickets' serves the contract probe 'GET /orders'"),
    ],
)
def test_a_probe_the_world_cannot_send_is_refused_at_load(
    world: Path, probe: str, message: str
) -> None:
    world.write_text(WORLD.replace("PROBES", probe))
    with pytest.raises(WorldError) as caught:
        load_world(world)
    assert str(caught.value).startswith(f"{world}#/services/0/contract/probe/0: {message}")


def test_a_stand_in_whose_certificate_is_not_trusted_is_not_sent_the_probe(
    world: Path, stand_in: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    resolve = f"{HOST}=127.0.0.1:{stand_in.port}"
    assert main(["world", "contract", str(world), "--live", "--resolve", resolve]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"skilltest: error: GET /tickets?status=P1: https://{HOST}/tickets?status=P1 could not "
        "be reached: [SSL: CERTIFICATE_VERIFY_FAILED]"
    )
    assert TOKEN not in err
    assert stand_in.log == []
