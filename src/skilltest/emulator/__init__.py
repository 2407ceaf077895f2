"""The offline model emulator: a scripted stand-in for the Anthropic Messages API.

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

from skilltest.emulator.faults import Fault, FaultDecision
from skilltest.emulator.request_view import RequestView
from skilltest.emulator.script import Conditions, ModelScript, Reply, Rule, ToolCall
from skilltest.emulator.scripted_model import Answer, Responder, ScriptedModel
from skilltest.emulator.server import EmulatorServer, RecordedRequest
from skilltest.emulator.side_requests import SIDE_REQUEST_KINDS, classify_side_request

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
