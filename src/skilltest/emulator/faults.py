"""Faults the emulator injects on demand: latency, HTTP errors, broken streams, hangs.

A :class:`Fault` is what a script asks for; a :class:`FaultGate` is its running state (how many
requests it has seen, its seeded random stream) and decides, request by request, whether the
failure hits. Both are pure: the server turns a :class:`FaultDecision` into bytes on the wire.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import Any, Literal

FailureKind = Literal["status", "malformed", "truncated", "midstream_error", "hang"]
FAILURE_KINDS: tuple[FailureKind, ...] = (
    "status",
    "malformed",
    "truncated",
    "midstream_error",
    "hang",
)

DEFAULT_RETRY_AFTER_MS = 1000
"""``retry-after-ms`` sent with a 429 or 529 when the script does not say."""

# Anthropic's error type for each status the emulator can answer with.
ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

_ERROR_MESSAGES: dict[int, str] = {
    400: "Invalid request (injected by the skilltest emulator)",
    401: "Invalid API key (injected by the skilltest emulator)",
    403: "Permission denied (injected by the skilltest emulator)",
    404: "Not found (injected by the skilltest emulator)",
    413: "Request too large (injected by the skilltest emulator)",
    429: "Rate limited (injected by the skilltest emulator)",
    500: "Internal server error (injected by the skilltest emulator)",
    529: "Overloaded (injected by the skilltest emulator)",
}


@dataclass(frozen=True)
class Fault:
    """Faults asked for by a script, globally or for one rule."""

    location: str
    """``file#/pointer`` of the fault in the script, for messages and seeding."""
    latency_ms: int = 0
    """Delay before answering; always applies."""
    failure: FailureKind | None = None
    """What goes wrong when the failure hits, or ``None`` for latency only."""
    status: int | None = None
    """HTTP status for ``failure == "status"``."""
    retry_after_ms: int = DEFAULT_RETRY_AFTER_MS
    """``retry-after-ms`` for 429 and 529 answers."""
    rate: float | None = None
    """Probability that the failure hits a request; ``None`` means every request."""
    first_n: int | None = None
    """Only the first N requests fail; ``None`` means no limit."""

    @classmethod
    def from_dict(cls, data: dict[str, Any], location: str) -> Fault:
        """Builds a fault from its (schema-validated) script entry."""
        failure: FailureKind | None = None
        for kind in FAILURE_KINDS:
            if kind in data:
                failure = kind
                break
        return cls(
            location=location,
            latency_ms=int(data.get("latency_ms", 0)),
            failure=failure,
            status=data.get("status"),
            retry_after_ms=int(data.get("retry_after_ms", DEFAULT_RETRY_AFTER_MS)),
            rate=data.get("rate"),
            first_n=data.get("first_n"),
        )


@dataclass(frozen=True)
class FaultDecision:
    """What to do to one request."""

    latency_ms: int = 0
    """Delay before answering."""
    failure: FailureKind | None = None
    """The failure to inflict, or ``None`` to answer normally."""
    status: int | None = None
    """HTTP status for a ``status`` failure."""
    retry_after_ms: int = DEFAULT_RETRY_AFTER_MS
    """``retry-after-ms`` for 429 and 529."""
    source: str | None = None
    """Location of the fault whose failure hit, for the request log."""

    @property
    def label(self) -> str | None:
        """Short description for the request log, e.g. ``status 429`` or ``hang``."""
        if self.failure is None:
            return f"latency {self.latency_ms}ms" if self.latency_ms else None
        if self.failure == "status":
            return f"status {self.status}"
        return self.failure


NO_FAULT = FaultDecision()


class FaultGate:
    """Running state of one fault: counts requests and draws from its own seeded stream."""

    def __init__(self, fault: Fault, seed: int) -> None:
        self.fault = fault
        self._lock = threading.Lock()
        self._seen = 0
        # One stream per fault, so another rule's traffic does not change which requests fail.
        self._random = random.Random(f"{seed}:{fault.location}")

    def hits(self) -> bool:
        """Whether the failure hits the next request (counts the request)."""
        fault = self.fault
        if fault.failure is None:
            return False
        with self._lock:
            self._seen += 1
            if fault.first_n is not None and self._seen > fault.first_n:
                return False
            if fault.rate is not None:
                return self._random.random() < fault.rate
            return True


def combine(rule_gate: FaultGate | None, global_gate: FaultGate | None) -> FaultDecision:
    """The decision for one request: latencies add up, a rule's failure wins over the global one.

    Each gate counts the request once, so ``first_n`` means "the first N requests this fault
    applies to".
    """
    latency = sum(gate.fault.latency_ms for gate in (rule_gate, global_gate) if gate is not None)
    hit: Fault | None = None
    for gate in (rule_gate, global_gate):
        if gate is not None and gate.hits() and hit is None:
            hit = gate.fault
    if hit is None:
        return FaultDecision(latency_ms=latency)
    return FaultDecision(
        latency_ms=latency,
        failure=hit.failure,
        status=hit.status,
        retry_after_ms=hit.retry_after_ms,
        source=hit.location,
    )


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    """Anthropic-style error JSON for ``status``."""
    return {
        "type": "error",
        "error": {
            "type": ERROR_TYPES.get(status, "api_error"),
            "message": message or _ERROR_MESSAGES.get(status, f"HTTP {status}"),
        },
    }


def retry_headers(decision: FaultDecision) -> dict[str, str]:
    """``retry-after`` headers for a 429 or 529 answer; none for other statuses."""
    if decision.status not in (429, 529):
        return {}
    ms = decision.retry_after_ms
    return {"retry-after": str(-(-ms // 1000)), "retry-after-ms": str(ms)}


# OpenAI's error type and code for each status the emulator can answer with.
OPENAI_ERRORS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "permission_denied"),
    404: ("invalid_request_error", "not_found"),
    413: ("invalid_request_error", "request_too_large"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", None),
}


def openai_error_body(
    status: int, message: str | None = None, *, retry_after_ms: int | None = None
) -> dict[str, Any]:
    """OpenAI-style error JSON for ``status`` (``{"error": {message, type, param, code}}``); a
    429 says when to try again in its message, as the API does and Codex reads it."""
    kind, code = OPENAI_ERRORS.get(status, ("server_error", None))
    text = message or _ERROR_MESSAGES.get(status, f"HTTP {status}")
    if status == 429 and retry_after_ms is not None and message is None:
        text += f". Please try again in {retry_after_ms / 1000:g}s."
    return {"error": {"message": text, "type": kind, "param": None, "code": code}}
