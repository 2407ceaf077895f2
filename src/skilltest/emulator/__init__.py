"""The offline model emulator: a scripted stand-in for the Anthropic Messages API and OpenAI's
Responses and Chat Completions APIs, and Google's Gemini API (``generateContent``).

The real ``anthropic`` SDK and the real ``claude`` CLI talk to it through ``base_url`` /
``ANTHROPIC_BASE_URL`` exactly as they would to the live API, and get the answers a model
script (YAML) prescribes, with faults on demand. It is not a model: it never generates text.

::

    script = ModelScript.load("model.yaml")
    with EmulatorServer(script) as server:
        run_claude(env={"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-fake"})
        assert server.requests[0].rule_id == "call-bash"

Modules: ``script`` (format, loading, rule selection), ``request_view`` (what rules see of a
request), ``described`` (a skill chosen by how well its listed description fits the prompt),
``side_requests`` (Claude Code's helper requests), ``faults``, ``sse`` (wire encoding),
``scripted_model`` (per-request decisions) and ``server`` (HTTP).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skilltest.emulator.faults import Fault, FaultDecision
    from skilltest.emulator.request_view import RequestView
    from skilltest.emulator.script import Conditions, ModelScript, Reply, Rule, ToolCall
    from skilltest.emulator.scripted_model import Answer, Responder, ScriptedModel
    from skilltest.emulator.server import EmulatorServer, RecordedRequest
    from skilltest.emulator.side_requests import SIDE_REQUEST_KINDS, classify_side_request

_HOMES = {
    "Fault": "faults",
    "FaultDecision": "faults",
    "RequestView": "request_view",
    "Conditions": "script",
    "ModelScript": "script",
    "Reply": "script",
    "Rule": "script",
    "ToolCall": "script",
    "Answer": "scripted_model",
    "Responder": "scripted_model",
    "ScriptedModel": "scripted_model",
    "EmulatorServer": "server",
    "RecordedRequest": "server",
    "SIDE_REQUEST_KINDS": "side_requests",
    "classify_side_request": "side_requests",
}
"""Where each name lives: imported when first used, so that reading a model script (``skilltest
validate``) does not import the HTTP server."""


def __getattr__(name: str) -> Any:
    import importlib

    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"skilltest.emulator.{_HOMES[name]}"), name)


__all__ = [
    "SIDE_REQUEST_KINDS",
    "Answer",
    "Conditions",
    "EmulatorServer",
    "Fault",
    "FaultDecision",
    "ModelScript",
    "RecordedRequest",
    "Reply",
    "RequestView",
    "Responder",
    "Rule",
    "ScriptedModel",
    "ToolCall",
    "classify_side_request",
]
