"""A world against the live service: each probe's answer from the real host beside the fake's.

A service's ``contract: {probe: ["GET /tickets?status=P1"]}`` names reads that are safe to send
to the real service (the loader refuses anything but ``GET`` and ``HEAD``). For each probe,
:func:`check_probe` asks the fake (its handler, in-process, with a token of its own) and the
live host (``https://HOST/path``, the service's first host, with the credential from the
service's ``auth: {env: ...}`` variable), then :func:`compare` sets the two answers side by
side: status, content type and the body's **shape** (field names and JSON types, recursively;
an array is the union of its first :data:`SAMPLED_ITEMS` items' shapes, and a pointer into it
names index 0).

Nothing is sent to a host the world does not name: every URL passes the world's
:class:`~skilltest.world.policy.DestinationPolicy` before a socket is opened. A ``resolve``
entry (``api.tickets.example.com=127.0.0.1:8443``, as curl's ``--resolve``) sends a declared
host's traffic to a loopback address instead (a stand-in, a local gateway); any other address
is refused. Redirects are not followed.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import secrets
import socket
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from skilltest.errors import ConfigurationError
from skilltest.world.fake import FakeService
from skilltest.world.http import HttpRequest
from skilltest.world.model import Probe, Service, World
from skilltest.world.policy import DestinationPolicy

SAMPLED_ITEMS = 5
"""How many items of an array are sampled: its shape is the union of theirs."""
MAX_BODY_BYTES = 10 * 1024 * 1024
"""The most of a live answer read."""
TIMEOUT_S = 30.0
"""Seconds to wait for the live service to connect and answer."""

DRIFT_KINDS = (
    "status changed",
    "content type changed",
    "field added",
    "field removed",
    "type changed",
)
"""What a probe can find different, in the order reported."""


# --- what is sent ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedProbe:
    """One probe as it would be sent."""

    service: Service
    """The service it belongs to."""
    probe: Probe
    """The probe as the world file declares it."""

    @property
    def url(self) -> str:
        """``https://<the service's first host><path?query>``."""
        return f"https://{self.service.hosts[0]}{self.probe.target}"

    @property
    def credential(self) -> str | None:
        """The variable the credential is read from, or ``None`` (no ``auth:``)."""
        return self.service.auth_env

    def describe(self) -> str:
        """``GET https://api.tickets.example.com/tickets?status=P1 (TICKETS_API_TOKEN in
        Authorization: Bearer)``: never the credential's value."""
        service = self.service
        if service.auth_env is None:
            how = "no credential"
        else:
            scheme = f": {service.auth_scheme}" if service.auth_scheme else ""
            how = f"{service.auth_env} in {service.auth_header}{scheme}"
        return f"{self.probe.method} {self.url} ({how})"


def plan(world: World) -> list[PlannedProbe]:
    """Every probe of every service, in the order written."""
    return [PlannedProbe(service, probe) for service in world.services for probe in service.probes]


def credentials(planned: list[PlannedProbe], env: Mapping[str, str]) -> dict[str, str]:
    """The credential values the probes need, by variable.

    Raises:
        ConfigurationError: a variable is not set (its name only is said).
    """
    names = list(dict.fromkeys(p.credential for p in planned if p.credential is not None))
    missing = [name for name in names if not env.get(name)]
    if missing:
        raise ConfigurationError(
            f"the probes need the live service's credential in {', '.join(missing)}, "
            "which is not set\n"
            f"  fix: export {missing[0]}=<a token for the real service> (a read-only one will do)"
        )
    return {name: env[name] for name in names}


def parse_resolve(text: str, policy: DestinationPolicy) -> tuple[str, str, int]:
    """``HOST=ADDRESS:PORT`` (``api.tickets.example.com=127.0.0.1:8443``, ``[::1]:8443``) ->
    ``(host, address, port)``.

    Raises:
        ConfigurationError: not of that form, the address not loopback, or the host not one
            the world declares (the policy's reason is given).
    """
    host, sep, target = text.partition("=")
    address, _, port_text = target.rpartition(":")
    address = address.strip("[]")
    if not sep or not host or not address or not port_text.isdigit():
        raise ConfigurationError(
            f"--resolve {text!r}: expected HOST=ADDRESS:PORT\n"
            "  fix: e.g. --resolve api.tickets.example.com=127.0.0.1:8443"
        )
    try:
        loopback = ipaddress.ip_address(address).is_loopback
    except ValueError:
        loopback = False
    port = int(port_text)
    if not loopback or not 0 < port < 65536:
        raise ConfigurationError(
            f"--resolve {text!r}: {address}:{port} is not a loopback address and port; "
            "only a stand-in on this machine may take a declared host's place\n"
            "  fix: use 127.0.0.1 or ::1 (a gateway elsewhere: reach it through a local tunnel)"
        )
    decision = policy.check(host, scheme="https")
    if not decision.allowed:
        raise ConfigurationError(
            f"--resolve {text!r}: {host} is refused by the world's destination policy "
            f"({decision.reason})\n"
            f"  fix: resolve a host the world declares ({', '.join(sorted(policy.hosts))})"
        )
    return decision.host, address, port


# --- the two answers ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """One answer as compared: status, media type and the body parsed as JSON."""

    status: int
    content_type: str
    """The media type, lower case, without parameters (``application/json``); ``""`` when
    none is given."""
    body: Any = None
    """The body as JSON; ``None`` when empty or not JSON (see :attr:`json`)."""
    json: bool = False
    """Whether the body parsed as JSON."""


def _answer(status: int, content_type: str | None, body: bytes) -> Answer:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    try:
        return Answer(status, media, json.loads(body), True) if body else Answer(status, media)
    except ValueError:
        return Answer(status, media)


def fake_answer(planned: PlannedProbe) -> Answer:
    """What the world's fake answers the probe (in-process, with a token of its own)."""
    service = planned.service
    agent = secrets.token_urlsafe(24)
    fake = FakeService(service, agent_token=agent, control_token=secrets.token_urlsafe(24))
    headers = {}
    if service.auth_env is not None:
        headers[service.auth_header] = f"{service.auth_scheme} {agent}".strip()
    request = HttpRequest.from_url(planned.probe.method, planned.url, headers=headers)
    response = fake.handle(request, time.monotonic())
    content_type = next(
        (value for name, value in response.headers.items() if name.lower() == "content-type"),
        None,
    )
    return _answer(response.status, content_type, response.body)


class _PinnedConnection(http.client.HTTPSConnection):
    """HTTPS to a declared host whose connection goes to a loopback address instead (the
    certificate is still checked for the host's name)."""

    def __init__(
        self, host: str, address: str, port: int, context: ssl.SSLContext, timeout: float
    ) -> None:
        super().__init__(host, 443, context=context, timeout=timeout)
        self._pinned = (address, port)
        self._tls = context

    def connect(self) -> None:
        sock = socket.create_connection(self._pinned, self.timeout)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)


def live_answer(
    planned: PlannedProbe,
    *,
    policy: DestinationPolicy,
    credential: str | None,
    resolve: Mapping[str, tuple[str, int]] | None = None,
    context: ssl.SSLContext | None = None,
    url: str | None = None,
) -> Answer:
    """What the live service answers the probe.

    Args:
        planned: The probe.
        policy: The world's destination policy: the URL must pass it before any socket opens.
        credential: The credential's value, for the service's auth header.
        resolve: Declared hosts sent to a loopback ``(address, port)`` instead.
        context: The TLS context (default: the system's roots).
        url: Another URL than the planned one (for tests of the policy).

    Raises:
        ConfigurationError: refused by the policy, or the exchange failed.
    """
    url = url or planned.url
    decision = policy.check(url)
    if not decision.allowed or decision.pass_through or decision.scheme != "https":
        raise ConfigurationError(
            f"{planned.probe.label}: refused to send to {url}: "
            f"{decision.reason if not decision.allowed else 'not a declared https host'}"
        )
    host = decision.host
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    context = context or ssl.create_default_context()
    pinned = (resolve or {}).get(host)
    connection: http.client.HTTPSConnection
    if pinned is not None:
        connection = _PinnedConnection(host, pinned[0], pinned[1], context, TIMEOUT_S)
    else:
        connection = http.client.HTTPSConnection(
            host, decision.port or 443, context=context, timeout=TIMEOUT_S
        )
    headers = {"Accept": "application/json", "User-Agent": "skilltest-world-contract"}
    service = planned.service
    if service.auth_env is not None and credential is not None:
        headers[service.auth_header] = f"{service.auth_scheme} {credential}".strip()
    try:
        connection.request(planned.probe.method, target, headers=headers)
        response = connection.getresponse()
        body = response.read(MAX_BODY_BYTES + 1)
    except (OSError, http.client.HTTPException) as exc:
        raise ConfigurationError(
            f"{planned.probe.label}: {planned.url} could not be reached: {exc}"
        ) from exc
    finally:
        connection.close()
    if len(body) > MAX_BODY_BYTES:
        raise ConfigurationError(
            f"{planned.probe.label}: the answer is larger than {MAX_BODY_BYTES} bytes"
        )
    return _answer(response.status, response.getheader("Content-Type"), body)


# --- comparing shapes --------------------------------------------------------------------------


@dataclass
class Shape:
    """The JSON types seen at one place, with the fields and items below it."""

    types: set[str] = field(default_factory=set)
    fields: dict[str, Shape] = field(default_factory=dict)
    items: Shape | None = None


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def shape_of(value: Any, into: Shape | None = None) -> Shape:
    """The shape of a JSON value; merged into ``into`` when given (a union)."""
    shape = into if into is not None else Shape()
    shape.types.add(_type(value))
    if isinstance(value, dict):
        for key, item in value.items():
            shape.fields[key] = shape_of(item, shape.fields.get(key))
    elif isinstance(value, list):
        for item in value[:SAMPLED_ITEMS]:
            shape.items = shape_of(item, shape.items)
    return shape


@dataclass(frozen=True)
class Drift:
    """One difference between the live answer and the fake's."""

    kind: str
    """One of :data:`DRIFT_KINDS`."""
    pointer: str
    """Where, as a JSON pointer into the body (``""``: the whole answer)."""
    detail: str
    """What each side answers."""

    def __str__(self) -> str:
        where = f" at {self.pointer}" if self.pointer else ""
        return f"{self.kind}{where}: {self.detail}"


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _types(shape: Shape) -> str:
    return " or ".join(sorted(shape.types))


def _compare_shapes(fake: Shape, live: Shape, pointer: str, out: list[Drift]) -> None:
    if fake.types != live.types:
        out.append(
            Drift(
                "type changed",
                pointer,
                f"the fake answers {_types(fake)}, the service {_types(live)}",
            )
        )
    for key in sorted(fake.fields.keys() - live.fields.keys()):
        out.append(
            Drift(
                "field removed",
                f"{pointer}/{_escape(key)}",
                f"the fake answers it ({_types(fake.fields[key])}), the service does not",
            )
        )
    for key in sorted(live.fields.keys() - fake.fields.keys()):
        out.append(
            Drift(
                "field added",
                f"{pointer}/{_escape(key)}",
                f"the service answers it ({_types(live.fields[key])}), the fake does not",
            )
        )
    for key in sorted(fake.fields.keys() & live.fields.keys()):
        _compare_shapes(fake.fields[key], live.fields[key], f"{pointer}/{_escape(key)}", out)
    if fake.items is not None and live.items is not None:
        _compare_shapes(fake.items, live.items, f"{pointer}/0", out)


def compare(fake: Answer, live: Answer) -> list[Drift]:
    """How the live answer differs from the fake's (empty: the same), in the order of
    :data:`DRIFT_KINDS`, each with its pointer. Bodies are compared only when both are JSON."""
    drifts: list[Drift] = []
    if fake.status != live.status:
        drifts.append(
            Drift(
                "status changed", "", f"the fake answers {fake.status}, the service {live.status}"
            )
        )
    if fake.content_type != live.content_type:
        drifts.append(
            Drift(
                "content type changed",
                "",
                f"the fake answers {fake.content_type or 'none'}, "
                f"the service {live.content_type or 'none'}",
            )
        )
    if fake.json and live.json:
        shapes: list[Drift] = []
        _compare_shapes(shape_of(fake.body), shape_of(live.body), "", shapes)
        drifts.extend(sorted(shapes, key=lambda d: DRIFT_KINDS.index(d.kind)))
    return drifts


@dataclass(frozen=True)
class ProbeResult:
    """One probe's verdict."""

    planned: PlannedProbe
    drifts: tuple[Drift, ...]
    """Empty when the live answer has the fake's shape."""


def check_probe(
    planned: PlannedProbe,
    *,
    policy: DestinationPolicy,
    credential: str | None,
    resolve: Mapping[str, tuple[str, int]] | None = None,
    context: ssl.SSLContext | None = None,
) -> ProbeResult:
    """Sends one probe to the live service and compares its answer with the fake's."""
    live = live_answer(
        planned, policy=policy, credential=credential, resolve=resolve, context=context
    )
    return ProbeResult(planned, tuple(compare(fake_answer(planned), live)))


def world_policy(world: World) -> DestinationPolicy:
    """The world's own destination policy: its declared hosts, nothing passed through."""
    return DestinationPolicy(world.hosts())


__all__ = [
    "Answer",
    "Drift",
    "PlannedProbe",
    "ProbeResult",
    "check_probe",
    "compare",
    "credentials",
    "fake_answer",
    "live_answer",
    "parse_resolve",
    "plan",
    "shape_of",
    "world_policy",
]
