"""The credential point: the real key stays with skilltest, the agent gets a placeholder.

Every CLI run against the live API (scenarios, triggers, ``pressure --backend claude``, the
judges and responders that ask through a run's endpoint) talks to a :class:`CredentialPoint`
on loopback with a placeholder key made for that run. The point refuses a request that does
not carry the placeholder, puts the real credential in its place and forwards the request to
the real API (or the caller's ``ANTHROPIC_BASE_URL``), and to that host only. Nothing the agent
can run (its Bash commands, its MCP servers, the hooks) ever holds the real key.
"""

from skilltest.credentials.point import (
    PLACEHOLDER_PREFIX,
    CredentialPoint,
    credential_headers,
)

__all__ = ["PLACEHOLDER_PREFIX", "CredentialPoint", "credential_headers"]
