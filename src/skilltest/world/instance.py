"""One run's world: a fresh fake per service, fresh tokens, its own CA, and the proxy in front.

Every run (each arm, each repetition) gets its own :class:`WorldInstance`, so runs side by side
never share state, tokens or certificates. What the instance gives the run:

* :meth:`WorldInstance.env`: the agent token in each service's ``auth.env`` variable, the proxy
  in ``HTTPS_PROXY``/``HTTP_PROXY`` (both cases: curl reads only ``http_proxy`` for plain HTTP)
  with loopback in ``NO_PROXY``, and the CA in ``NODE_EXTRA_CA_CERTS`` (Node adds it to its
  roots), ``SSL_CERT_FILE``, ``CURL_CA_BUNDLE`` and ``REQUESTS_CA_BUNDLE`` (which replace a
  client's roots, so they name the CA followed by the system's roots);
* :meth:`WorldInstance.mcp_servers`: the world's mock MCP servers (``mcp:``) as ``--mcp-config``
  entries; each runs :mod:`skilltest.world.mcp_mock` and records its calls in the run's folder,
  which :attr:`WorldInstance.calls` merges with the fakes' calls;
* :meth:`WorldInstance.settings`: what goes into the CLI's ``--settings``. In ``sandbox`` mode,
  Claude Code's own sandbox runs every Bash command in a network namespace whose only way out
  is this proxy (``sandbox.network.httpProxyPort`` and ``socksProxyPort``): a client that
  ignores ``HTTPS_PROXY`` cannot leave, and the CLI refuses to start rather than run commands
  unsandboxed (``failIfUnavailable``) or let the model ask to leave the sandbox
  (``allowUnsandboxedCommands: false``). In ``proxy-env`` mode (no ``bwrap``/``socat``) egress
  is cooperative: a client that ignores the proxy variables is neither stopped nor recorded.

The tokens are random (:func:`secrets.token_urlsafe`) and never read from the environment, where
a real service's token could be mistaken for a fake's.
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Self

from skilltest.errors import WorldError
from skilltest.loopback import Lifecycle
from skilltest.plugins import McpServer
from skilltest.world.calls import Call, EgressViolation
from skilltest.world.fake import FakeService
from skilltest.world.http import HttpRequest, HttpResponse
from skilltest.world.mcp_mock import MATCHED, answer, read_calls, write_spec
from skilltest.world.model import World
from skilltest.world.policy import DestinationPolicy
from skilltest.world.proxy import WorldProxy
from skilltest.world.tls import CertificateAuthority

SANDBOX = "sandbox"
"""Claude Code's sandbox confines Bash; its only way out is the world's proxy."""
PROXY_ENV = "proxy-env"
"""Only the proxy variables point clients at the world's proxy: egress is cooperative."""
MODES = (SANDBOX, PROXY_ENV)

MCP_MOCK = (sys.executable, "-m", "skilltest.world.mcp_mock")
"""How a run starts a mock MCP server."""

LOOPBACK_NO_PROXY = "localhost,127.0.0.1,::1"
"""What goes direct: the emulator, a recording proxy and MCP servers on loopback."""

SANDBOX_PROBE = ("--unshare-user", "--unshare-net", "--dev-bind", "/", "/", "/bin/true")
"""What Claude Code 2.1.328 itself runs to see whether bubblewrap can make its namespaces."""


@functools.lru_cache(maxsize=8)
def _sandbox_check(path: str, platform: str) -> tuple[bool, str]:
    if platform == "darwin":
        # Seatbelt (sandbox-exec) ships with macOS; Claude Code needs nothing else there.
        found = shutil.which("sandbox-exec", path=path)
        return (True, "macOS Seatbelt") if found else (False, "sandbox-exec is not on PATH")
    if not platform.startswith("linux"):
        return False, f"Claude Code's sandbox does not run on {platform}"
    bwrap, socat = shutil.which("bwrap", path=path), shutil.which("socat", path=path)
    missing = [
        name for name, found in (("bubblewrap (bwrap)", bwrap), ("socat", socat)) if not found
    ]
    if missing:
        return False, f"{' and '.join(missing)} not on PATH (apt-get install bubblewrap socat)"
    assert bwrap is not None
    try:
        done = subprocess.run(
            [bwrap, *SANDBOX_PROBE],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bubblewrap does not start: {exc}"
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return False, f"bubblewrap cannot create a user and network namespace here: {detail}"
    return True, f"bubblewrap ({bwrap}) and socat ({socat})"


def sandbox_available() -> tuple[bool, str]:
    """Whether Claude Code's sandbox can run here, and why (not).

    On Linux it needs ``bwrap`` and ``socat`` on ``PATH`` and a kernel that lets bubblewrap
    create user and network namespaces (probed as Claude Code probes it); on macOS, Seatbelt.
    """
    return _sandbox_check(os.environ.get("PATH", os.defpath), sys.platform)


class WorldInstance(Lifecycle):
    """Everything one run's world needs: a fake per service with fresh state, random tokens,
    its own CA, and the proxy.

    Args:
        world: The loaded world file.
        profile: The fault profile the scenario picked (each service applies its own faults of
            that name), or ``None``.
        folder: A folder of this run's own, for the CA files.
        pass_through: Destinations the proxy tunnels untouched: the model API
            (``api.anthropic.com``, or a gateway's ``host[:port]``).
        mode: ``sandbox`` or ``proxy-env``; by default ``sandbox`` when
            :func:`sandbox_available`.
        host: The proxy's address; loopback unless something else must reach it.
        port: The HTTP proxy's port (0: a free one).
        socks_port: The SOCKS5 port (0: a free one).
        log: Told one line per request answered and per destination refused (``world serve``
            prints them).

    Raises:
        WorldError: no service declares ``profile``.
        ValueError: an unknown ``mode``.
    """

    def __init__(
        self,
        world: World,
        *,
        profile: str | None,
        folder: Path,
        pass_through: Iterable[str] = (),
        mode: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        socks_port: int = 0,
        log: Callable[[str], None] | None = None,
    ) -> None:
        if profile is not None and profile not in world.profiles():
            known = ", ".join(sorted(world.profiles())) or "none"
            raise WorldError(
                f"no service declares the fault profile {profile!r}",
                location=f"{world.path}#/services",
                fix=f"use one of the world's profiles ({known}) or declare it under a service",
            )
        if mode is not None and mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.world = world
        self.profile = profile
        self.mode: str = mode or (SANDBOX if sandbox_available()[0] else PROXY_ENV)
        """``sandbox`` (egress confined by Claude Code's sandbox) or ``proxy-env``
        (cooperative: only the proxy variables)."""
        self.agent_token: str = secrets.token_urlsafe(24)
        """What the agent presents to every service (in each ``auth.env`` variable)."""
        self.control_token: str = secrets.token_urlsafe(24)
        """What the control plane needs (``/_skilltest/calls``, ``state``, ``reset``)."""
        self.fakes: dict[str, FakeService] = {
            service.name: FakeService(
                service,
                agent_token=self.agent_token,
                control_token=self.control_token,
                profile=service.profiles.get(profile, ()) if profile else (),
            )
            for service in world.services
        }
        """The fake of each service, by name."""
        self.folder = folder
        """The run's own folder: the CA files, the mock MCP servers' specs and calls."""
        self.ca = CertificateAuthority(folder)
        """The run's own CA."""
        self.violations: list[EgressViolation] = []
        """Every destination the proxy refused, in order."""
        self._log = log
        self._extra_calls: list[Call] = []
        self._lock = threading.Lock()
        self.proxy = WorldProxy(
            dispatch=self._dispatch,
            policy=DestinationPolicy(world.hosts(), pass_through=pass_through),
            ca=self.ca,
            on_violation=self._violation,
            host=host,
            port=port,
            socks_port=socks_port,
        )

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> Self:
        """Starts the proxy."""
        self.proxy.start()
        return self

    def close(self) -> None:
        """Stops the proxy; the record and the state stay readable."""
        self.proxy.close()

    # -- what the run is given ---------------------------------------------------------------

    def env(self) -> dict[str, str]:
        """Variables for the CLI's environment (Bash and MCP servers inherit them)."""
        url = self.proxy.url
        env = {
            service.auth_env: self.agent_token
            for service in self.world.services
            if service.auth_env is not None
        }
        env.update(
            {
                "HTTPS_PROXY": url,
                "https_proxy": url,
                "HTTP_PROXY": url,
                "http_proxy": url,
                "NO_PROXY": LOOPBACK_NO_PROXY,
                "no_proxy": LOOPBACK_NO_PROXY,
                # Node's fetch ignores the proxy variables unless told (Node >= 22.21, 24.5).
                "NODE_USE_ENV_PROXY": "1",
                "NODE_EXTRA_CA_CERTS": str(self.ca.ca_file),
                "SSL_CERT_FILE": str(self.ca.bundle_file),
                "CURL_CA_BUNDLE": str(self.ca.bundle_file),
                "REQUESTS_CA_BUNDLE": str(self.ca.bundle_file),
            }
        )
        return env

    def mcp_servers(self, beside: Sequence[McpServer] = ()) -> tuple[McpServer, ...]:
        """The world's mock MCP servers as the run's ``--mcp-config`` starts them.

        Each is ``python -m skilltest.world.mcp_mock --spec SPEC --calls CALLS`` with this
        interpreter; the spec is written into the run's folder now. Their
        :meth:`~McpServer.to_config` entries are the ``mcpServers`` of the config.

        Args:
            beside: The run's other MCP servers (the suite's ``config.mcp_servers``, a
                plugin's), whose names a mock may not take.

        Raises:
            WorldError: a mock has the name of one of ``beside``.
        """
        taken = {server.name: server for server in beside}
        servers = []
        for mock in self.world.mcp:
            if mock.name in taken:
                other = taken[mock.name].origin or "the run's MCP servers"
                raise WorldError(
                    f"the world's mock MCP server {mock.name!r} has the name of the MCP server "
                    f"declared at {other}",
                    location=mock.location,
                    fix="rename one of them: both would be mcp__"
                    f"{mock.name}__* to the agent, and only one could answer",
                )
            spec = write_spec(mock, self._mcp_folder / f"{mock.name}.json")
            servers.append(
                McpServer(
                    name=mock.name,
                    command=MCP_MOCK[0],
                    args=(
                        *MCP_MOCK[1:],
                        "--spec",
                        str(spec),
                        "--calls",
                        str(self._calls(mock.name)),
                    ),
                    origin=mock.location,
                )
            )
        return tuple(servers)

    @property
    def _mcp_folder(self) -> Path:
        return self.folder / "mcp"

    def _calls(self, mock: str) -> Path:
        return self._mcp_folder / f"{mock}.calls.jsonl"

    def settings(self) -> dict[str, Any]:
        """What to merge into the CLI's ``--settings``: the sandbox section in ``sandbox``
        mode, nothing in ``proxy-env`` mode."""
        if self.mode != SANDBOX:
            return {}
        return {
            "sandbox": {
                "enabled": True,
                "autoAllowBashIfSandboxed": True,
                # Without these, a missing bwrap runs commands unsandboxed with a warning, and
                # the model may ask to run a command outside (dangerouslyDisableSandbox).
                "failIfUnavailable": True,
                "allowUnsandboxedCommands": False,
                "network": {
                    "httpProxyPort": self.proxy.port,
                    "socksProxyPort": self.proxy.socks_port,
                },
            }
        }

    # -- what the world saw ------------------------------------------------------------------

    @property
    def calls(self) -> list[Call]:
        """Every call any fake or mock MCP server recorded (and any :meth:`record` added), by
        arrival time."""
        with self._lock:
            extra = list(self._extra_calls)
        merged = [call for fake in self.fakes.values() for call in list(fake.calls)] + extra
        for mock in self.world.mcp:
            merged += read_calls(self._calls(mock.name))
        return sorted(merged, key=lambda call: call.at)

    def record(self, call: Call) -> None:
        """Adds a call seen elsewhere to the record."""
        with self._lock:
            self._extra_calls.append(call)

    def state_diff(self) -> dict[str, Any]:
        """What changed since the fixtures, by service then collection; services without a
        change are left out (``{}`` when nothing changed)."""
        return {name: diff for name, fake in self.fakes.items() if (diff := fake.state_diff())}

    @property
    def errors(self) -> list[str]:
        """What went wrong inside the proxy (failed TLS handshakes, a fake that raised), and
        each mock MCP call no response answered, with where to add one."""
        hints = []
        for call in self.calls:
            mock = next((m for m in self.world.mcp if call.host == f"mcp:{m.name}"), None)
            if mock is None or call.status == MATCHED:
                continue
            tool = call.path.split("/", 1)[-1]
            hint = answer(mock, tool, call.body if isinstance(call.body, dict) else {}, 0.0).hint
            if hint and hint not in hints:
                hints.append(hint)
        return list(self.proxy.errors) + hints

    # -- the proxy's callbacks ---------------------------------------------------------------

    def _dispatch(self, request: HttpRequest, now: float) -> HttpResponse | None:
        service = self.world.service_for(request.host)
        if service is None:
            return None
        response = self.fakes[service.name].handle(request, now)
        if self._log is not None:
            query = f"?{request.raw_query}" if request.raw_query else ""
            answer = "no answer (timeout fault)" if response.hang else str(response.status)
            self._log(f"{request.method} {request.host}{request.path}{query} -> {answer}")
        return response

    def _violation(self, violation: EgressViolation) -> None:
        with self._lock:
            self.violations.append(violation)
        if self._log is not None:
            where = violation.url or violation.host
            self._log(f"refused {where} ({violation.reason})")
