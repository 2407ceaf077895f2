"""Watching one trigger run's stream and stopping it as soon as the answer is known.

A run *fires* when the agent calls the ``Skill`` tool for the skill under test (``{"skill":
"NAME"}``, also ``/NAME`` and a plugin's ``PLUGIN:NAME``) or reads its ``SKILL.md``, at any point
of the run: after other tool calls, or inside a subagent, it still counts. The call is taken when
it is made (its ``tool_use``), before its result: a Skill call for an installed skill loads it.

A run that has made ``max_tool_calls`` other tool calls and starts one more without the skill is
stopped as a *budget* stop: the agent had that many chances and went its own way. With the
default of 3, ``Bash, Bash, Bash, Skill`` fires and ``Bash, Bash, Bash, Bash`` is a budget stop
at the fourth call.

With the stop hook installed (:mod:`skilltest.triggers.hook`, ``hooked``), the CLI ends itself at
the deciding call, before running it, and the watch only notes the decision; should the CLI go on
to another model turn all the same (hooks turned off by managed settings, a hook that failed),
the watch stops it there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from skilltest.transcript.model import call_argument
from skilltest.triggers.hook import fires

Ended = Literal["fired", "not-fired", "budget", "timeout", "error"]
"""How one trigger run ended."""

ENDINGS: tuple[Ended, ...] = ("fired", "not-fired", "budget", "timeout", "error")
"""Every way a run can end, in report order."""

FIRST_CALLS_KEPT = 5
"""Tool calls kept per run for the report (the first ones)."""


@dataclass(frozen=True)
class SeenCall:
    """A tool call as the watch saw it in the stream."""

    name: str
    """The tool's name."""
    input: Mapping[str, Any]
    """Its arguments."""

    def short(self, width: int = 60) -> str:
        """``Bash(ls -la)``, ``Skill(lgtm)``: the call in one short line."""
        return f"{self.name}({call_argument(dict(self.input), width)})"


@dataclass
class TriggerWatch:
    """A stop check for one run (:data:`skilltest.claude.process.StopCheck`): called with every
    stdout event; returns a reason once the skill fired or the tool-call budget ran out (with
    ``hooked``, only once the CLI went on past that call)."""

    skill: str
    """The skill under test."""
    max_tool_calls: int
    """Other tool calls allowed before the skill."""
    hooked: bool = False
    """The stop hook ends the CLI at the deciding call: the watch does not stop it there."""
    calls: list[SeenCall] = field(default_factory=list)
    """Every tool call seen, in order."""
    fired: bool = False
    """Whether the skill fired."""
    budget: bool = False
    """Whether the run was stopped for its tool-call budget."""
    reason: str | None = None
    """What decided the run: the firing call, or the call after the budget."""
    overran: bool = False
    """The CLI asked the model again after a deciding call of the main agent (the hook did not
    stop it), and the watch stopped it. A background subagent's caller goes on beside it
    whatever the hook does, so a decision inside a subagent never sets this."""
    _ids: set[str] = field(default_factory=set)
    _decided_in: object = None
    _decided_by_subagent: bool = False

    def __call__(self, event: dict[str, Any]) -> str | None:
        if event.get("type") != "assistant":
            return None
        message = event.get("message")
        if self.reason is not None:
            # The message holding the deciding call may go on over more lines; a new message
            # means the CLI asked the model again.
            if isinstance(message, dict) and message.get("id") != self._decided_in:
                self.overran = not self._decided_by_subagent
                return self.reason
            return None
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            # A message split over several lines repeats its blocks: each call counts once.
            call_id = block.get("id")
            if isinstance(call_id, str):
                if call_id in self._ids:
                    continue
                self._ids.add(call_id)
            arguments = block.get("input")
            call = SeenCall(
                str(block.get("name")), arguments if isinstance(arguments, dict) else {}
            )
            self.calls.append(call)
            if fires(self.skill, call.name, call.input):
                self.fired = True
                return self._decide(
                    event, f"the skill fired ({call.short()}, tool call {len(self.calls)})"
                )
            if len(self.calls) > self.max_tool_calls:
                self.budget = True
                return self._decide(
                    event,
                    f"tool-call budget: {self.max_tool_calls} tool call(s) without the skill, "
                    f"then {call.short()}",
                )
        return None

    def _decide(self, event: dict[str, Any], reason: str) -> str | None:
        self.reason = reason
        message = event.get("message")
        self._decided_in = message.get("id") if isinstance(message, dict) else None
        self._decided_by_subagent = event.get("parent_tool_use_id") is not None
        return None if self.hooked else reason

    @property
    def first_calls(self) -> tuple[SeenCall, ...]:
        """The first tool calls, for the report."""
        return tuple(self.calls[:FIRST_CALLS_KEPT])
