"""One run's world: the variables and settings a run is given, real clients reaching the fakes
through them, what is recorded, and runs side by side that share nothing."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from skilltest.errors import WorldError
from skilltest.world import instance as instance_module
from skilltest.world.calls import Call
from skilltest.world.instance import WorldInstance, sandbox_available
from skilltest.world.model import World, load_world

WORLDS = Path(__file__).parent / "worlds"
HOST = "https://api.tickets.example.com"


@pytest.fixture(scope="module")
def world() -> World:
    return load_world(WORLDS / "tickets.yaml")


@pytest.fixture
def make_instance(world, tmp_path):
    made: list[WorldInstance] = []

    def make(profile: str | None = None, mode: str | None = "proxy-env") -> WorldInstance:
        instance = WorldInstance(
            world, profile=profile, folder=tmp_path / f"world{len(made)}", mode=mode
        ).start()
        made.append(instance)
        return instance

    yield make
    for instance in made:
        instance.close()


class Client:
    """An HTTP client configured only from the run's variables, as the agent's tools are."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({"https": env["HTTPS_PROXY"], "http": env["http_proxy"]}),
            urllib.request.HTTPSHandler(
                context=ssl.create_default_context(cafile=env["SSL_CERT_FILE"])
            ),
        )

    def send(
        self,
        method: str,
        url: str,
        body: Any = None,
        *,
        token: str | None = "agent",
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], Any]:
        all_headers = dict(headers or {})
        if token == "agent":
            all_headers["Authorization"] = f"Bearer {self.env['TICKETS_API_TOKEN']}"
        elif token is not None:
            all_headers["Authorization"] = f"Bearer {token}"
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            all_headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=all_headers)
        try:
            with self.opener.open(request, timeout=60) as response:
                status, raw, got = response.status, response.read(), dict(response.headers)
        except urllib.error.HTTPError as error:
            status, raw, got = error.code, error.read(), dict(error.headers)
            error.close()
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = raw.decode()
        return status, {k.lower(): v for k, v in got.items()}, payload


def labels(instance: WorldInstance) -> list[tuple[str, int]]:
    return [(call.label(), call.status) for call in instance.calls]


# -- what a run is given -----------------------------------------------------------------------


def test_env_carries_the_agent_token_the_proxy_and_the_ca(make_instance):
    instance = make_instance()
    env = instance.env()
    proxy = f"http://127.0.0.1:{instance.proxy.port}"
    assert env["TICKETS_API_TOKEN"] == env["ORDERS_KEY"] == instance.agent_token
    assert {env[name] for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")} == {
        proxy
    }
    assert env["NO_PROXY"] == env["no_proxy"] == "localhost,127.0.0.1,::1"
    assert env["NODE_EXTRA_CA_CERTS"] == str(instance.ca.ca_file)
    for name in ("SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE"):
        assert env[name] == str(instance.ca.bundle_file)
    assert instance.control_token not in env.values()  # the control plane stays out of the run


def test_tokens_are_random_per_run_and_never_read_from_the_environment(make_instance, monkeypatch):
    monkeypatch.setenv("TICKETS_API_TOKEN", "a-real-token")
    first, second = make_instance(), make_instance()
    tokens = {first.agent_token, first.control_token, second.agent_token, second.control_token}
    assert len(tokens) == 4 and "a-real-token" not in tokens
    assert all(len(token) >= 32 for token in tokens)


def test_settings_in_sandbox_mode_send_the_sandboxs_traffic_to_this_proxy(make_instance):
    instance = make_instance(mode="sandbox")
    assert instance.mode == "sandbox"
    settings = instance.settings()
    assert list(settings) == ["sandbox"]
    sandbox = dict(settings["sandbox"])
    # The sandbox's network goes through this world's proxy, HTTP and SOCKS ...
    assert sandbox.pop("network") == {
        "httpProxyPort": instance.proxy.port,
        "socksProxyPort": instance.proxy.socks_port,
    }
    # ... and a command runs in the sandbox or not at all.
    assert sandbox == {
        "enabled": True,
        "autoAllowBashIfSandboxed": True,
        "failIfUnavailable": True,
        "allowUnsandboxedCommands": False,
    }


def test_settings_in_proxy_env_mode_are_empty(make_instance):
    instance = make_instance(mode="proxy-env")
    assert (instance.mode, instance.settings()) == ("proxy-env", {})


@pytest.mark.parametrize(("available", "mode"), [(True, "sandbox"), (False, "proxy-env")])
def test_the_mode_follows_whether_the_sandbox_can_run(make_instance, monkeypatch, available, mode):
    monkeypatch.setattr(instance_module, "sandbox_available", lambda: (available, "why"))
    assert make_instance(mode=None).mode == mode


def test_an_unknown_profile_is_refused_with_the_known_ones(world, tmp_path):
    with pytest.raises(WorldError) as caught:
        WorldInstance(world, profile="rate-limited", folder=tmp_path)
    assert str(caught.value) == (
        f"{WORLDS / 'tickets.yaml'}#/services: no service declares the fault profile "
        "'rate-limited'\n  fix: use one of the world's profiles (empty, malformed, partial, "
        "partial_207, rate_limited, replaced, schema_change, slow, timeout, unauthorized) or "
        "declare it under a service"
    )


# -- real clients through the run's variables --------------------------------------------------


def test_reads_and_writes_reach_the_fake_and_are_recorded_with_the_state_change(make_instance):
    instance = make_instance()
    client = Client(instance.env())

    status, _, page = client.send("GET", f"{HOST}/tickets?status=P1")
    assert status == 200 and [t["id"] for t in page["tickets"]] == ["INC-1001", "INC-1042"]
    status, headers, ticket = client.send(
        "PATCH", f"{HOST}/tickets/INC-1042", {"owner": "platform"}, headers={"If-Match": '"3"'}
    )
    assert (status, headers["etag"], ticket["owner"]) == (200, '"4"', "platform")

    assert labels(instance) == [("GET /tickets", 200), ("PATCH /tickets/INC-1042", 200)]
    write = instance.calls[1]
    assert (write.write, write.body, write.host) == (
        True,
        {"owner": "platform"},
        "api.tickets.example.com",
    )
    assert instance.state_diff() == {
        "tickets": {
            "tickets": {
                "added": [],
                "removed": [],
                "changed": {"INC-1042": {"owner": ["payments", "platform"], "version": [3, 4]}},
            }
        }
    }
    assert instance.violations == [] and instance.errors == []


def test_a_call_without_the_agent_token_is_refused_and_not_recorded(make_instance):
    instance = make_instance()
    client = Client(instance.env())
    assert client.send("DELETE", f"{HOST}/tickets/INC-1042", token=None)[0] == 401
    assert client.send("DELETE", f"{HOST}/tickets/INC-1042", token="guess")[0] == 401
    assert instance.calls == [] and instance.state_diff() == {}


def test_the_control_plane_answers_through_the_proxy_with_the_control_token(make_instance):
    instance = make_instance()
    client = Client(instance.env())
    client.send("GET", f"{HOST}/tickets/INC-1042")

    assert client.send("GET", f"{HOST}/health", token=None)[2] == {
        "service": "tickets",
        "mode": "fake",
    }
    assert client.send("GET", f"{HOST}/_skilltest/calls")[0] == 401  # the agent's token
    status, _, calls = client.send("GET", f"{HOST}/_skilltest/calls", token=instance.control_token)
    assert status == 200 and "/tickets/INC-1042" in json.dumps(calls)
    assert labels(instance) == [("GET /tickets/INC-1042", 200)]  # control calls not recorded


def test_other_destinations_are_refused_and_recorded_as_egress_violations(make_instance):
    instance = make_instance()
    client = Client(instance.env())
    with pytest.raises(urllib.error.URLError, match="403"):
        client.send("GET", "https://example.org/")
    status, _, text = client.send("GET", "http://169.254.169.254/latest/meta-data/")
    assert status == 403 and "cloud metadata address 169.254.169.254" in text
    assert [(v.host, v.reason) for v in instance.violations] == [
        ("example.org", "not a declared host"),
        ("169.254.169.254", "cloud metadata address 169.254.169.254"),
    ]
    assert instance.calls == []


def test_a_profile_applies_its_faults(make_instance):
    instance = make_instance(profile="rate_limited")
    client = Client(instance.env())
    status, headers, _ = client.send("GET", f"{HOST}/tickets")
    assert (status, headers["retry-after"]) == (429, "1")
    assert client.send("GET", f"{HOST}/tickets")[0] == 200
    assert labels(instance) == [("GET /tickets", 429), ("GET /tickets", 200)]


def test_runs_side_by_side_share_no_state_tokens_or_certificates(make_instance):
    first, second = make_instance(), make_instance()
    Client(first.env()).send("DELETE", f"{HOST}/tickets/INC-1042")

    assert first.state_diff()["tickets"]["tickets"]["removed"] == ["INC-1042"]
    assert second.state_diff() == {} and second.calls == []
    status, _, ticket = Client(second.env()).send("GET", f"{HOST}/tickets/INC-1042")
    assert (status, ticket["id"]) == (200, "INC-1042")
    # The first run's token is nothing to the second run's fake,
    crossed = Client({**second.env(), "TICKETS_API_TOKEN": first.agent_token})
    assert crossed.send("GET", f"{HOST}/tickets/INC-1042")[0] == 401
    # and a client trusting the first run's CA does not trust the second run's proxy.
    mixed = Client({**second.env(), "SSL_CERT_FILE": str(first.ca.ca_file)})
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        mixed.send("GET", f"{HOST}/tickets")


def test_calls_recorded_elsewhere_join_the_record_in_time_order(make_instance):
    instance = make_instance()
    Client(instance.env()).send("GET", f"{HOST}/tickets/INC-1042")
    fetched_at = instance.calls[0].at
    instance.record(
        Call(
            service="crm",
            method="mcp",
            host="",
            path="crm/send_email",
            status=200,
            at=fetched_at - 1,
            write=True,
            route=None,
        )
    )
    assert [call.label() for call in instance.calls] == [
        "mcp crm/send_email",
        "GET /tickets/INC-1042",
    ]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_with_nothing_but_the_runs_variables_reaches_the_fake(make_instance):
    instance = make_instance()
    env = {"PATH": "/usr/bin:/bin", **instance.env()}
    done = subprocess.run(
        [
            "sh",
            "-c",
            'curl -sS -m 10 -H "Authorization: Bearer $TICKETS_API_TOKEN" '
            f"{HOST}/tickets/INC-1042 && curl -sS -m 10 -o /dev/null -w '%{{http_code}}' "
            "http://example.org/",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout[: done.stdout.rindex("}") + 1])["id"] == "INC-1042"
    assert done.stdout.endswith("403")
    assert labels(instance) == [("GET /tickets/INC-1042", 200)]
    assert [v.url for v in instance.violations] == ["http://example.org/"]


# -- whether the sandbox can run ---------------------------------------------------------------


linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap is Claude Code's sandbox on Linux"
)


def stub(folder: Path, name: str, script: str) -> None:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)


@linux_only
def test_the_sandbox_needs_bwrap_and_socat(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert sandbox_available() == (
        False,
        "bubblewrap (bwrap) and socat not on PATH (apt-get install bubblewrap socat)",
    )
    stub(tmp_path / "bin", "socat", "exit 0")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert sandbox_available()[1].startswith("bubblewrap (bwrap) not on PATH")


@linux_only
def test_a_bwrap_that_cannot_make_namespaces_is_no_sandbox(tmp_path, monkeypatch):
    stub(tmp_path / "bin", "socat", "exit 0")
    stub(
        tmp_path / "bin", "bwrap", 'echo "bwrap: setting up uid map: Permission denied" >&2; exit 1'
    )
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert sandbox_available() == (
        False,
        "bubblewrap cannot create a user and network namespace here: "
        "bwrap: setting up uid map: Permission denied",
    )
    stub(tmp_path / "ok", "socat", "exit 0")
    stub(tmp_path / "ok", "bwrap", 'test "$1 $2" = "--unshare-user --unshare-net" || exit 9')
    monkeypatch.setenv("PATH", str(tmp_path / "ok"))  # (answers are kept per PATH)
    assert sandbox_available()[0] is True


@linux_only
def test_this_machine_runs_the_sandbox_when_bwrap_and_socat_are_installed():
    if not (shutil.which("bwrap") and shutil.which("socat")):
        pytest.skip("bwrap or socat not installed (apt-get install bubblewrap socat)")
    assert sandbox_available()[0] is True, sandbox_available()[1]
