"""The real Claude Code CLI in a world, offline against the emulator: a scripted agent runs
``curl`` through Bash, once in each mode.

* ``sandbox``: Claude Code's own sandbox (bubblewrap and socat) sends the command's HTTP(S) to the
  world's proxy, so the declared host is answered by its fake with a certificate curl trusts, an
  undeclared host is refused and recorded, and a client that ignores the proxy variables cannot
  leave at all. Link-local, private and loopback addresses are in the sandbox's own ``NO_PROXY``:
  they go direct, where the sandbox blocks them before the proxy can see them (not recorded).
* ``proxy-env``: only the proxy variables; the same curl calls reach the proxy and the metadata
  address is refused and recorded, but a client that ignores the variables is not stopped.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.world.instance import WorldInstance, sandbox_available
from skilltest.world.model import World, load_world
from tests.bare_claude import blocks, result_of, run_bare_claude
from tests.world.loopback import LoopbackServer

pytestmark = pytest.mark.cli

WORLD = Path(__file__).parent / "worlds" / "tickets.yaml"

# Each line prints its URL, curl's output and exit code, so one tool result tells all.
COMMAND = """\
probe() { echo "== $1"; shift; curl -sS -m 10 "$@"; echo " rc=$?"; }
probe fake -H "Authorization: Bearer $TICKETS_API_TOKEN" https://api.tickets.example.com/tickets/INC-1042
probe undeclared https://example.org/
probe metadata http://169.254.169.254/latest/meta-data/
probe direct --noproxy '*' http://127.0.0.1:LOOPBACK_PORT/
"""


class Listener(LoopbackServer):
    """A loopback port that counts connections: reached only by a client that goes direct."""

    def __init__(self) -> None:
        self.connections = 0
        super().__init__()

    def handle(self, connection: socket.socket) -> None:
        self.connections += 1


def run_agent(
    claude: Path, instance: WorldInstance, command: str, workdir: Path
) -> tuple[str, dict[str, Any]]:
    """Runs ``claude -p`` whose scripted agent runs ``command`` once; returns the command's
    output and the result event."""
    script = ModelScript.from_dict(
        {
            "schema_version": 1,
            "rules": [
                {
                    "id": "run",
                    "when": {"turn": 1, "tools": ["Bash"]},
                    "reply": {
                        "text": "Calling the API.",
                        "tool_calls": [
                            {"name": "Bash", "input": {"command": command, "description": "API"}}
                        ],
                    },
                },
                {"id": "done", "when": {"turn": [1, 2]}, "reply": {"text": "Done."}},
            ],
        }
    )
    with EmulatorServer(script) as server:
        events = run_bare_claude(
            claude,
            workdir,
            "Look up INC-1042.",
            "--allowedTools",
            "Bash",
            env={"ANTHROPIC_BASE_URL": server.base_url, **instance.env()},
            settings=instance.settings(),
        )
    outputs = [
        block["content"] if isinstance(block["content"], str) else json.dumps(block["content"])
        for block in blocks(events, "user", "tool_result")
    ]
    assert len(outputs) == 1, outputs
    return outputs[0], result_of(events)


def sections(output: str) -> dict[str, str]:
    """``== name`` sections of the command's output."""
    found: dict[str, str] = {}
    for part in output.split("== ")[1:]:
        name, _, rest = part.partition("\n")
        found[name.strip()] = rest.strip()
    return found


@pytest.fixture(scope="module")
def world() -> World:
    return load_world(WORLD)


def test_sandbox_mode_confines_bash_to_the_worlds_proxy(claude_bin, world, tmp_path):
    available, why = sandbox_available()
    if not available:
        pytest.skip(f"Claude Code's sandbox cannot run here: {why}")
    listener = Listener()
    with WorldInstance(world, profile=None, folder=tmp_path / "world", mode="sandbox") as instance:
        output, result = run_agent(
            claude_bin,
            instance,
            COMMAND.replace("LOOPBACK_PORT", str(listener.port))
            + "probe socks -x socks5h://localhost:1080 https://evil.test/\n",
            tmp_path,
        )
    listener.sock.close()
    seen = sections(output)

    # The declared host, reached as CONNECT and answered by the fake with the run's certificate
    # (the sandboxed curl reads CURL_CA_BUNDLE or SSL_CERT_FILE, passed through the sandbox).
    assert json.loads(seen["fake"].rsplit(" rc=", 1)[0])["id"] == "INC-1042"
    assert seen["fake"].endswith(" rc=0")
    assert [(c.label(), c.status) for c in instance.calls] == [("GET /tickets/INC-1042", 200)]
    # An undeclared host: refused at CONNECT and recorded.
    assert "CONNECT tunnel failed, response 403" in seen["undeclared"]
    # SOCKS (socks5h://localhost:1080 inside the sandbox) reaches the world's SOCKS port too.
    assert "Can't complete SOCKS5 connection to evil.test" in seen["socks"]
    assert [(v.host, v.port, v.reason) for v in instance.violations] == [
        ("example.org", 443, "not a declared host"),
        ("evil.test", 443, "not a declared host"),
    ]
    # The metadata address is in the sandbox's NO_PROXY: it goes direct and the sandbox blocks
    # it (curl exit 7) before the proxy sees it, so it cannot be recorded.
    assert "Failed to connect to 169.254.169.254" in seen["metadata"]
    assert seen["metadata"].endswith(" rc=7")
    # A client that ignores the proxy variables cannot leave the sandbox's network namespace.
    assert seen["direct"].endswith(" rc=7") and listener.connections == 0
    assert instance.errors == []
    assert result["is_error"] is False


def test_proxy_env_mode_sends_cooperative_clients_through_the_worlds_proxy(
    claude_bin, world, tmp_path
):
    listener = Listener()
    with WorldInstance(
        world, profile=None, folder=tmp_path / "world", mode="proxy-env"
    ) as instance:
        assert instance.settings() == {}
        output, result = run_agent(
            claude_bin, instance, COMMAND.replace("LOOPBACK_PORT", str(listener.port)), tmp_path
        )
    listener.sock.close()
    seen = sections(output)

    assert json.loads(seen["fake"].rsplit(" rc=", 1)[0])["id"] == "INC-1042"
    assert [(c.label(), c.status) for c in instance.calls] == [("GET /tickets/INC-1042", 200)]
    assert "CONNECT tunnel failed, response 403" in seen["undeclared"]
    # Through HTTP_PROXY the metadata address reaches the proxy: refused and recorded.
    assert "cloud metadata address 169.254.169.254" in seen["metadata"]
    assert [(v.host, v.reason) for v in instance.violations] == [
        ("example.org", "not a declared host"),
        ("169.254.169.254", "cloud metadata address 169.254.169.254"),
    ]
    # Egress is cooperative: a client that ignores the proxy variables is neither stopped nor
    # recorded (here it reaches a port on loopback).
    assert listener.connections == 1
    assert result["is_error"] is False
