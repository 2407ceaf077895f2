"""The stand-in model: decides, request by request, what a model script answers.

:class:`ScriptedModel` holds the running state a script needs (per-rule cycle counters, seeded
random streams, fault counters) and is safe to call from many server threads at once. It does
no I/O: the HTTP server asks it for an :class:`Answer` and puts that on the wire. Anything with
the same ``answer`` method (a replayed recording, for instance) can stand behind the server.
"""

from __future__ import annotations

import dataclasses
import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from skilltest.emulator.batches import BatchOutcome
from skilltest.emulator.faults import NO_FAULT, FaultDecision, FaultGate, combine
from skilltest.emulator.openai_requests import as_messages_request
from skilltest.emulator.prompt_cache import PromptCache
from skilltest.emulator.request_view import RequestView
from skilltest.emulator.script import ModelScript, Reply, Rule
from skilltest.emulator.side_requests import DEFAULT_ANSWERS, SideRequestKind
from skilltest.emulator.sse import IdSource, Message, build_message
from skilltest.emulator.tool_names import as_offered
from skilltest.model_apis import AgentName, ApiFamily
from skilltest.transcript.origin import EMULATOR_MODEL, ScriptRule

NO_MATCH_TEXT = (
    "[skilltest emulator] No rule of the model script matched this request, and the script "
    "has no default reply. (This is a scripted stand-in, not a real model.)"
)
DEFAULT_MODEL = EMULATOR_MODEL


@dataclass(frozen=True)
class Answer:
    """What to send back for one Messages request."""

    message: Message
    """The assistant message (used unless the fault says otherwise)."""
    fault: FaultDecision
    """Latency and failure to apply."""
    rule_id: str | None
    """Rule that answered; ``None`` for the default reply; ``side:KIND`` for built-in answers."""
    side_request: SideRequestKind | None
    """Which side request this was, or ``None`` for a main request."""
    batch: BatchOutcome | None = None
    """How the request ends when it came in a Message Batch (the rule's ``batch:``)."""
    script_rule: ScriptRule | None = None
    """The rule (or the default reply) of which script answered a main request, and where it
    is written; ``None`` for a side request's built-in answer."""


class Responder(Protocol):
    """Anything that can answer model requests for the emulator's server."""

    def answer(
        self,
        body: Mapping[str, Any],
        *,
        api: ApiFamily = "anthropic",
        agent: AgentName | None = None,
    ) -> Answer:
        """The answer to one parsed request body of ``api`` (a ``POST /v1/messages`` body by
        default), sent by ``agent`` when its headers say; the server renders the answer's
        message in that API's shape."""
        ...


class ScriptedModel:
    """Answers requests the way a :class:`ModelScript` says."""

    def __init__(
        self, script: ModelScript, *, cycle_start: int = 0, cache: PromptCache | None = None
    ) -> None:
        """
        Args:
            script: The model script.
            cycle_start: Which reply a ``pick: cycle`` rule gives first (repetition r of a run
                starts at reply r, so K repetitions walk through the replies).
            cache: The prompt cache, shared by every model a server answers with.
        """
        self.script = script
        self.cache = cache if cache is not None else PromptCache()
        self._cycle_start = cycle_start
        self._ids = IdSource(script.seed)
        self._lock = threading.Lock()
        self._cycle: dict[str, int] = {}
        self._random = {rule.id: random.Random(f"{script.seed}:{rule.id}") for rule in script.rules}
        self._rule_gates = {
            rule.id: FaultGate(rule.fault, script.seed)
            for rule in script.rules
            if rule.fault is not None
        }
        self._global_gate = FaultGate(script.faults, script.seed) if script.faults else None

    def answer(
        self,
        body: Mapping[str, Any],
        *,
        api: ApiFamily = "anthropic",
        agent: AgentName | None = None,
    ) -> Answer:
        """The answer to one request of ``api`` (see :meth:`Responder.answer`); a scripted tool
        call is sent as the tool the request offers (:func:`~skilltest.emulator.tool_names.
        as_offered`).

        Raises:
            ModelScriptError: a pattern of the script exceeded its time limit.
        """
        view = RequestView.from_body(body, api=api, agent=agent)
        body = as_messages_request(api, body)
        rule = self.script.select(view)
        model = self.script.model or view.model or DEFAULT_MODEL
        if rule is not None:
            reply = self._pick(rule)
            rule_id: str | None = rule.id
            attributed: ScriptRule | None = ScriptRule(rule.id, self.script.source, rule.line)
            described = rule.when.described_skill(view)
            if described is not None:
                reply = reply.naming(described.skill)
        elif view.side_request is not None:
            reply = Reply(
                text=DEFAULT_ANSWERS[view.side_request],
                stop_reason="max_tokens" if view.side_request == "quota" else "end_turn",
            )
            rule_id = f"side:{view.side_request}"
            attributed = None
        else:
            reply = self.script.default or Reply(text=NO_MATCH_TEXT)
            rule_id = None
            line = self.script.default_line if self.script.default is not None else None
            attributed = ScriptRule(None, self.script.source, line)
        calls = tuple(as_offered(call, view.tool_names) for call in reply.tool_calls)
        if calls != reply.tool_calls:
            reply = dataclasses.replace(reply, tool_calls=calls)
        rule_gate = self._rule_gates.get(rule.id) if rule is not None else None
        gates = (rule_gate, self._global_gate)
        fault = combine(*gates) if any(gates) else NO_FAULT
        return Answer(
            message=build_message(
                reply,
                model=model,
                ids=self._ids,
                request=body,
                usage=dataclasses.asdict(self.cache.usage(body)),
            ),
            fault=fault,
            rule_id=rule_id,
            side_request=view.side_request,
            batch=rule.batch if rule is not None else None,
            script_rule=attributed,
        )

    def _pick(self, rule: Rule) -> Reply:
        if len(rule.replies) == 1:
            return rule.replies[0]
        with self._lock:
            if rule.pick == "random":
                return self._random[rule.id].choice(rule.replies)
            count = self._cycle.get(rule.id, self._cycle_start)
            self._cycle[rule.id] = count + 1
        return rule.replies[count % len(rule.replies)]
