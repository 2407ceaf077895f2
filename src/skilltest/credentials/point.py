"""The credential point: a loopback endpoint that adds the real credential to a run's requests.

A run's ``claude`` CLI gets ``ANTHROPIC_BASE_URL`` pointing here and, in each credential
variable the caller set, a placeholder made for this point alone. The point is the recording
proxy's forwarding (:class:`~skilltest.replay.proxy.RecordingProxy`, recording nothing) with an
``authorise`` step: a request whose ``x-api-key`` or ``Authorization: Bearer`` is not one of
this point's placeholders is refused with HTTP 401; an accepted one is forwarded with the real
credential in its place, in the header the variable has on the wire:

=========================== ==============================
``ANTHROPIC_API_KEY``       ``x-api-key: <key>``
``ANTHROPIC_AUTH_TOKEN``    ``Authorization: Bearer <token>``
``CLAUDE_CODE_OAUTH_TOKEN`` ``Authorization: Bearer <token>``
=========================== ==============================

It forwards to one upstream only (the caller's ``ANTHROPIC_BASE_URL``, else the Anthropic API),
never follows a redirect, and refuses a request target that is not a path on that host.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Mapping

from skilltest.redact import CREDENTIAL_VARIABLES
from skilltest.replay.proxy import RecordingProxy, upstream_of

PLACEHOLDER_PREFIX = "sk-skilltest-placeholder-"
"""How every placeholder key begins; the rest is random, new for each point."""

_WIRE: dict[str, tuple[str, str]] = {
    "ANTHROPIC_API_KEY": ("x-api-key", "{}"),
    "ANTHROPIC_AUTH_TOKEN": ("authorization", "Bearer {}"),
    "CLAUDE_CODE_OAUTH_TOKEN": ("authorization", "Bearer {}"),
}
"""The header each credential variable is sent in, and its value's form."""

_CREDENTIAL_HEADERS = frozenset(header for header, _ in _WIRE.values())


def credential_headers(name: str, value: str) -> tuple[str, str]:
    """The header (lower-case name, value) that carries credential variable ``name``."""
    header, form = _WIRE[name]
    return header, form.format(value)


def _presented(headers: Mapping[str, str]) -> list[str]:
    """The keys and tokens a request carries (``x-api-key``, ``Authorization: Bearer``)."""
    found = []
    for key, value in headers.items():
        lowered = key.lower()
        if lowered == "x-api-key":
            found.append(value.strip())
        elif lowered == "authorization":
            scheme, _, token = value.strip().partition(" ")
            found.append(token.strip() if scheme.lower() == "bearer" else value.strip())
    return found


class CredentialPoint(RecordingProxy):
    """Holds a run's real credentials and hands out placeholders for them (``with`` starts and
    stops it, as every :class:`~skilltest.loopback.LocalServer`).

    Example::

        with CredentialPoint(os.environ) as point:
            env.update(point.env())   # ANTHROPIC_BASE_URL and placeholders only
    """

    name = "skilltest credential point"

    def __init__(self, environ: Mapping[str, str], *, timeout_s: float = 600.0) -> None:
        """
        Args:
            environ: Where the credential variables and ``ANTHROPIC_BASE_URL`` are read.
            timeout_s: Time limit of one upstream request.

        Raises:
            ValueError: ``environ`` holds no credential.
        """
        self.credentials = {
            name: environ[name] for name in CREDENTIAL_VARIABLES if environ.get(name)
        }
        if not self.credentials:
            raise ValueError("a credential point needs a credential")
        self.placeholders = {
            name: PLACEHOLDER_PREFIX + secrets.token_hex(20) for name in self.credentials
        }
        self._variable_of = {value: name for name, value in self.placeholders.items()}
        self.refused = 0
        """Requests refused for want of a placeholder."""
        self._lock = threading.Lock()
        super().__init__(
            upstream_of(environ),
            on_exchange=lambda _exchange: None,
            timeout_s=timeout_s,
            authorise=self._authorise,
        )

    def _authorise(self, headers: dict[str, str]) -> dict[str, str] | None:
        """The headers to forward: the placeholders presented replaced by what they stand for;
        ``None`` when a request carries none, or any key that is not one of them."""
        presented = _presented(headers)
        variables = [self._variable_of.get(value) for value in presented]
        if not variables or None in variables:
            with self._lock:
                self.refused += 1
            return None
        forwarded = {k: v for k, v in headers.items() if k.lower() not in _CREDENTIAL_HEADERS}
        for name in dict.fromkeys(variables):
            assert name is not None
            header, value = credential_headers(name, self.credentials[name])
            forwarded[header] = value
        return forwarded

    def env(self) -> dict[str, str]:
        """What the CLI's environment gets: this point's URL and the placeholders."""
        return {"ANTHROPIC_BASE_URL": self.base_url, **self.placeholders}

    def secrets(self) -> dict[str, str]:
        """Every value to keep out of what is stored, by name: the real credentials, and the
        placeholders (new in every run, so a recording holds neither)."""
        return {
            **self.credentials,
            **{f"{name}_PLACEHOLDER": value for name, value in self.placeholders.items()},
        }
