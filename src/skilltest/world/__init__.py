"""The controlled world: fake services on the real hostnames, every call recorded, egress refused.

A world file (:func:`load_world`) declares the services a skill talks to, their fixture data,
routes and fault profiles. Each run gets its own :class:`FakeService` per service, reached
through the world's proxy; :class:`DestinationPolicy` decides what else may be reached (only the
model API). What the fakes recorded (:class:`Call`) and what the proxy refused
(:class:`EgressViolation`) are what a scenario is judged on.
"""

from __future__ import annotations

from skilltest.world.calls import Call, EgressViolation, is_write
from skilltest.world.http import HttpRequest, HttpResponse, json_response, parse_query

__all__ = [
    "Call",
    "EgressViolation",
    "HttpRequest",
    "HttpResponse",
    "is_write",
    "json_response",
    "parse_query",
]
