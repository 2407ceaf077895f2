"""What answered a run's model requests, as the answers and their address showed it. Pure.

A results file says where its numbers came from by what answered, never by the ``--backend``
it was started with: ``skilltest emulator serve`` behind ``ANTHROPIC_BASE_URL`` answers a
``--backend claude`` run as it answers ``--backend emulator``. Every run records an
:class:`AnsweredBy`: where its requests went (the public API, loopback or another host, by its
base URL) and whether an answer carried the skilltest emulator's mark, the response header
:data:`EMULATOR_HEADER` that the emulator sets on every answer (recording proxies keep it in
cassettes, so a replay shows it too). A model named ``...-emulated`` (what ``skilltest init``'s
model scripts call theirs) or ``skilltest-emulator`` (the emulator's own default) marks the
stand-in as well.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

EMULATOR_HEADER = "x-skilltest-emulator"
"""The response header the skilltest emulator sets on every answer: its version."""
EMULATED_SUFFIX = "-emulated"
"""How the model name of a stand-in's script ends (``claude-sonnet-4-5-emulated``)."""
EMULATOR_MODEL = "skilltest-emulator"
"""The model the emulator names when neither its script nor the request names one."""
PUBLIC_API_HOST = "api.anthropic.com"
"""The Anthropic API's own host."""

API = "api"
"""The requests went to the public Anthropic API."""
LOOPBACK = "loopback"
"""The requests went to this machine (a local server: what it is, only its answers say)."""
OTHER = "other"
"""The requests went to another host (a gateway, a proxy: what answered behind it is unknown)."""
CASSETTE = "cassette"
"""The answers were replayed from cassettes."""


def endpoint_kind(url: str) -> str:
    """``api``, ``loopback`` or ``other``: where a base URL sends requests."""
    host = (urlsplit(url).hostname or "").lower()
    if host == PUBLIC_API_HOST:
        return API
    if host == "localhost" or host.endswith(".localhost"):
        return LOOPBACK
    try:
        return LOOPBACK if ipaddress.ip_address(host).is_loopback else OTHER
    except ValueError:
        return OTHER


def shown_url(url: str) -> str:
    """A base URL as a results file names it: scheme, host, port and path; never a user, a
    password or a query (which could hold a credential)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port is not None else ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


def emulated_model(name: str) -> bool:
    """Whether a model name, as an answer gave it, is the skilltest emulator's."""
    return name.endswith(EMULATED_SUFFIX) or name == EMULATOR_MODEL


def emulator_mark(headers: Mapping[str, Any] | None) -> str | None:
    """The emulator's mark among an answer's headers (any case); ``None`` without it."""
    for key, value in (headers or {}).items():
        if str(key).lower() == EMULATOR_HEADER:
            return str(value)
    return None


@dataclass(frozen=True)
class AnsweredBy:
    """What answered one run's model requests, as the run saw it."""

    endpoint: str
    """``api`` (the public Anthropic API), ``loopback``, ``other`` (another host) or
    ``cassette`` (replayed)."""
    base_url: str | None = None
    """Where the requests went (no credential, no query); ``None`` for a replay."""
    emulator: str | None = None
    """The skilltest emulator's mark (its version) when an answer carried it; ``None`` when no
    answer did."""

    @classmethod
    def at(cls, url: str, emulator: str | None = None) -> AnsweredBy:
        """The requests went to ``url``; ``emulator``: the mark an answer carried."""
        return cls(endpoint_kind(url), shown_url(url), emulator)

    @property
    def stand_in(self) -> bool:
        """Whether an answer carried the emulator's mark."""
        return self.emulator is not None

    @property
    def named(self) -> str:
        """``http://127.0.0.1:4000 (loopback)``, ``cassettes``: as messages name it."""
        if self.endpoint == CASSETTE:
            return "cassettes"
        return f"{self.base_url} ({self.endpoint})"

    def to_dict(self) -> dict[str, Any]:
        """As results files and traces store it."""
        return {"endpoint": self.endpoint, "base_url": self.base_url, "emulator": self.emulator}

    @classmethod
    def from_dict(cls, data: Any) -> AnsweredBy | None:
        """What :meth:`to_dict` wrote; ``None`` for anything else."""
        if not isinstance(data, Mapping) or not isinstance(data.get("endpoint"), str):
            return None
        url, mark = data.get("base_url"), data.get("emulator")
        return cls(
            data["endpoint"],
            url if isinstance(url, str) else None,
            mark if isinstance(mark, str) else None,
        )


def distinct(observed: Iterable[AnsweredBy | None]) -> tuple[AnsweredBy, ...]:
    """Each observation once, sorted."""
    found = {seen for seen in observed if seen is not None}
    return tuple(sorted(found, key=lambda s: (s.endpoint, s.base_url or "", s.emulator or "")))
