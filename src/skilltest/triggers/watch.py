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

Another agent (``--agent opencode``, ``--agent codex``) has no stop hook: an
:class:`AgentWatch` reads its events into the one transcript as they come (the agent's own
parser), decides by that agent's firing rule (:meth:`skilltest.agents.base.Agent.fires`) with
the same budget, and stops the agent's process once the deciding call has come back: a call is
judged once it finished, since Codex's read of ``SKILL.md`` fires only when it ran.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from skilltest.transcript.model import call_argument
from skilltest.triggers.hook import fires

if TYPE_CHECKING:
    from skilltest.agents.base import Agent
    from skilltest.transcript import Transcript

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

    def settle(self, transcript: Transcript) -> None:
        """Nothing to add once the run ended: the stream was read as it came."""

    def fired_in(self, transcript: Transcript) -> bool:
        """Whether the finished run's transcript shows the skill loaded (by Claude Code's rule)."""
        return self.skill in transcript.skills_invoked or any(
            fires(self.skill, call.name, call.input) for call in transcript.tool_calls
        )


@dataclass
class AgentWatch:
    """A stop check for one run of another agent: every event it prints is read into its
    transcript by the agent's own parser, and the run is decided by the agent's firing rule,
    with the same tool-call budget as :class:`TriggerWatch`. A call counts once it came back
    (its result is what says whether it fired); the run is stopped at the event that shows the
    deciding call, so that call has run (a budget call too: there is no hook to refuse it)."""

    skill: str
    """The skill under test."""
    max_tool_calls: int
    """Other tool calls allowed before the skill."""
    agent: Agent
    """The agent the run goes through: its parser and its firing rule."""
    calls: list[SeenCall] = field(default_factory=list)
    """Every tool call seen, in order."""
    fired: bool = False
    """Whether the skill fired."""
    budget: bool = False
    """Whether the run was stopped for its tool-call budget."""
    reason: str | None = None
    """What decided the run: the firing call, or the call after the budget."""
    overran: bool = False
    """Never set: no hook is trusted to stop the agent, the watch stops it itself."""
    hooked: bool = False
    """No stop hook is installed in another agent."""
    _lines: list[str] = field(default_factory=list)

    def __call__(self, event: dict[str, Any]) -> str | None:
        if self.reason is not None:
            return self.reason
        self._lines.append(json.dumps(event))
        transcript = self.agent.parse(
            "\n".join(self._lines) + "\n", exit_code=None, stderr="", prompt=None
        )
        return self._read(transcript, final=False)

    def _read(self, transcript: Transcript, *, final: bool) -> str | None:
        if self.reason is not None:
            return self.reason
        seen: list[SeenCall] = []
        for call in transcript.tool_calls:
            if call.status == "no-result" and not final:
                break  # whether it fires shows when it comes back
            shown = SeenCall(call.name, call.input)
            seen.append(shown)
            if self.agent.fires(self.skill, call):
                self.fired = True
                self.reason = f"the skill fired ({shown.short()}, tool call {len(seen)})"
                break
            if len(seen) > self.max_tool_calls:
                self.budget = True
                self.reason = (
                    f"tool-call budget: {self.max_tool_calls} tool call(s) without the skill, "
                    f"then {shown.short()}"
                )
                break
        if len(seen) >= len(self.calls):
            self.calls = seen
        return self.reason

    @property
    def first_calls(self) -> tuple[SeenCall, ...]:
        """The first tool calls, for the report."""
        return tuple(self.calls[:FIRST_CALLS_KEPT])

    def settle(self, transcript: Transcript) -> None:
        """Reads the finished run's transcript: a call still without a result counts as one
        that did not fire."""
        self._read(transcript, final=True)

    def fired_in(self, transcript: Transcript) -> bool:
        """Whether the finished run's transcript shows the skill loaded, by the agent's rule."""
        return any(self.agent.fires(self.skill, call) for call in transcript.tool_calls)
