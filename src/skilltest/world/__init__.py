"""The controlled world: fake services on the real hostnames, every call recorded, egress refused.

A world file (:func:`load_world`) declares the services a skill talks to, their fixture data,
routes and fault profiles. Each run gets its own :class:`FakeService` per service, reached
through the world's proxy; :class:`DestinationPolicy` decides what else may be reached (only the
model API). What the fakes recorded (:class:`Call`) and what the proxy refused
(:class:`EgressViolation`) are what a scenario is judged on.

Modules, from data to I/O: ``model`` (the world file), ``http`` (plain requests and answers),
``calls`` (the records), ``policy`` (where traffic may go), ``fake`` (one service's fake),
``expect`` (a scenario's world expectations), ``score`` (judging a run's record against them),
``tls`` (the run's CA), ``wire`` (HTTP/1.1 on a socket), ``proxy`` (the run's proxy),
``mcp_mock`` (mock MCP servers), ``instance`` (one run's world: fakes, tokens, CA, proxy, mocks
and the CLI's settings). The scenario runner builds a ``WorldInstance`` per run and judges it
with ``score.judge_world``; ``skilltest world serve`` runs one on its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skilltest.world.calls import Call, EgressViolation, is_write
    from skilltest.world.fake import FakeService
    from skilltest.world.http import HttpRequest, HttpResponse, json_response, parse_query
    from skilltest.world.model import (
        Fault,
        McpMock,
        McpTool,
        Route,
        Service,
        World,
        load_world,
    )
    from skilltest.world.policy import Decision, DestinationPolicy, host_problem, normalise_host

_NAMES = {
    "Call": "calls",
    "EgressViolation": "calls",
    "is_write": "calls",
    "FakeService": "fake",
    "HttpRequest": "http",
    "HttpResponse": "http",
    "json_response": "http",
    "parse_query": "http",
    "Fault": "model",
    "McpMock": "model",
    "McpTool": "model",
    "Route": "model",
    "Service": "model",
    "World": "model",
    "load_world": "model",
    "Decision": "policy",
    "DestinationPolicy": "policy",
    "host_problem": "policy",
    "normalise_host": "policy",
}
"""Where each name of the package lives: a module is imported when one of its names is first
asked for, so that reading a world file (``skilltest.world.model``) does not import the fakes."""

__all__ = [
    "Call",
    "Decision",
    "DestinationPolicy",
    "EgressViolation",
    "FakeService",
    "Fault",
    "HttpRequest",
    "HttpResponse",
    "McpMock",
    "McpTool",
    "Route",
    "Service",
    "World",
    "host_problem",
    "is_write",
    "json_response",
    "load_world",
    "normalise_host",
    "parse_query",
]


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'skilltest.world' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"skilltest.world.{module}"), name)
