"""``skilltest world serve``: what a person or a harness sees, and uses, on the terminal."""

from __future__ import annotations

import json
import signal
import socket
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from skilltest.cli import main

WORLD = Path(__file__).parent.parent / "world" / "worlds" / "tickets.yaml"


def read_banner(process: subprocess.Popen[str]) -> dict[str, str]:
    """The printed banner, by label (``proxy`` for the first line)."""
    assert process.stdout is not None
    first = process.stdout.readline().strip()
    assert first.startswith("world listening: proxy http://127.0.0.1:"), first
    fields = {"proxy": first.split(" ")[3]}
    while True:
        line = process.stdout.readline().strip()
        label, _, value = line.partition(":")
        fields[label] = value.strip()
        if label == "try":
            return fields


def opener(proxy: str, ca_file: str) -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(
        urllib.request.ProxyHandler({"https": proxy, "http": proxy}),
        urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=ca_file)),
    )


def test_serve_prints_what_a_client_needs_records_its_calls_and_stops_on_ctrl_c() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "skilltest", "world", "serve", str(WORLD), "--profile", "rate_limited"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        banner = read_banner(process)
        assert banner["services"] == (
            "tickets (api.tickets.example.com tickets.example.com), status (status.example.com), "
            "orders (orders.example.com)"
        )
        assert banner["profile"] == "rate_limited"
        agent = banner["agent token"].split(" ")[0]
        control = banner["control token"].split(" ")[0]
        assert banner["agent token"].endswith("(in ORDERS_KEY, TICKETS_API_TOKEN)")
        ca_file = banner["CA file"]
        env_file = Path(banner["variables"].split(" ")[0])
        assert f"export TICKETS_API_TOKEN={agent}\n" in env_file.read_text()
        assert control not in env_file.read_text()  # the agent never gets the control token

        client = opener(banner["proxy"], ca_file)
        ticket = urllib.request.Request(
            "https://api.tickets.example.com/tickets", headers={"Authorization": f"Bearer {agent}"}
        )
        with pytest.raises(urllib.error.HTTPError) as limited:
            client.open(ticket, timeout=60)
        limited.value.close()
        assert limited.value.code == 429 and limited.value.headers["Retry-After"] == "1"
        with client.open(ticket, timeout=60) as response:
            assert response.status == 200
        with pytest.raises(urllib.error.URLError, match="403"):
            client.open("https://example.org/", timeout=60)
        calls = urllib.request.Request(
            "https://api.tickets.example.com/_skilltest/calls",
            headers={"Authorization": f"Bearer {control}"},
        )
        with client.open(calls, timeout=60) as response:
            recorded = json.load(response)
        assert [(c["method"], c["path"], c["status"]) for c in recorded["calls"]] == [
            ("GET", "/tickets", 429),
            ("GET", "/tickets", 200),
        ]
    finally:
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=60)
    assert process.returncode == 130  # stopped by Ctrl-C, as every command says
    assert err.splitlines() == [
        "GET api.tickets.example.com/tickets -> 429",
        "GET api.tickets.example.com/tickets -> 200",
        "refused https://example.org:443/ (not a declared host)",
        "GET api.tickets.example.com/_skilltest/calls -> 200",
        "world stopped: 2 calls (0 writes), 1 egress violations",
    ]
    assert not Path(ca_file).exists()  # the run's CA goes with the world


def test_an_unknown_profile_is_bad_input_with_the_known_ones(capsys) -> None:
    assert main(["world", "serve", str(WORLD), "--profile", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"skilltest: error: {WORLD}#/services: no service declares the fault profile 'nope'\n"
    )
    assert "fix: use one of the world's profiles (empty, malformed," in err


def test_a_world_file_that_is_not_valid_is_bad_input(tmp_path, capsys) -> None:
    world = tmp_path / "world.yaml"
    world.write_text("services:\n  - name: tickets\n")
    assert main(["world", "serve", str(world)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"skilltest: error: {world}#/services/0")


def test_a_port_in_use_is_bad_input_with_the_fix(capsys) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["world", "serve", str(WORLD), "--port", str(port)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"cannot listen on 127.0.0.1 (ports {port} and 0): Address already in use" in err
    assert "pick free ports, or 0 to let the system choose" in err


def test_world_without_a_subcommand_shows_its_usage(capsys) -> None:
    assert main(["world"]) == 2
    assert "serve" in capsys.readouterr().err
