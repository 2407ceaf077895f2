"""The transcript: what a model (or an agent) did in one run, whatever produced it.

The Anthropic SDK runner, the ``claude`` CLI runner, the emulator and replay all return a
:class:`Transcript`, so scoring never knows where the output came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from skilltest.fields import field_dict, field_sum
from skilltest.names import TOOL_ALIASES as TOOL_ALIASES
from skilltest.names import canonical_tool_name as canonical_tool_name
from skilltest.transcript.origin import AnsweredBy, ScriptRule


def tool_name_matches(called: str, expected: str) -> bool:
    """Whether a call of tool ``called`` counts as a call of ``expected``.

    ``Task`` and ``Agent`` are one tool, and ``mcp__server__tool`` also answers to ``tool``.
    """
    if canonical_tool_name(called) == canonical_tool_name(expected):
        return True
    if called.startswith("mcp__") and called.count("__") >= 2:
        return called.split("__", 2)[2] == expected
    return False


@dataclass(frozen=True)
class Usage:
    """Token counts, summed over every model request of the run."""

    input_tokens: int = 0
    """Uncached input tokens."""
    output_tokens: int = 0
    """Generated tokens."""
    cache_creation_input_tokens: int = 0
    """Input tokens written to the prompt cache."""
    cache_read_input_tokens: int = 0
    """Input tokens read from the prompt cache."""

    def __add__(self, other: Usage) -> Usage:
        return field_sum(self, other)

    def to_dict(self) -> dict[str, int]:
        return field_dict(self)

    @classmethod
    def from_mapping(cls, data: Any) -> Usage:
        """Reads an Anthropic ``usage`` object; missing or null counts are 0."""
        if not isinstance(data, dict):
            return cls()

        def count(key: str) -> int:
            value = data.get(key)
            return int(value) if isinstance(value, int | float) else 0

        return cls(
            count("input_tokens"),
            count("output_tokens"),
            count("cache_creation_input_tokens"),
            count("cache_read_input_tokens"),
        )


CallStatus = Literal["ran", "failed", "refused", "no-result"]
"""What became of a tool call: it ``ran`` (a result, no error), it ran and ``failed`` (an error
result: a non-zero exit, an exception), it was ``refused`` and never ran (an unknown tool, a
permission or sandbox refusal, input the harness rejected), or ``no-result`` came back (the run
ended first)."""

REFUSAL_MARKERS: tuple[str, ...] = (
    "<tool_use_error>",
    "needs approval",
    "you haven't granted it yet",
    "has been denied",
    "while in plan mode",
)
"""Text Claude Code 2.1.328 writes in the error result of a call it did not run: an unknown tool
or invalid input (``<tool_use_error>``), and its permission refusals."""


MAIN_ARGUMENTS = ("skill", "command", "file_path", "pattern", "prompt", "url")
"""The arguments that say what a call does, first found first: a Bash call's ``command``, a
Skill call's ``skill``..."""


def call_argument(arguments: Any, width: int = 60) -> str:
    """What a call does in one short line: its main argument (:data:`MAIN_ARGUMENTS`), else its
    arguments as compact JSON, cut to ``width`` characters; empty when it has none."""
    import json

    if not isinstance(arguments, dict):
        return ""
    value = next(
        (arguments[key] for key in MAIN_ARGUMENTS if isinstance(arguments.get(key), str)), None
    )
    if value is None and arguments:
        value = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"), default=str)
    shown = " ".join(str(value).split()) if value is not None else ""
    return shown if len(shown) <= width else shown[: width - 1] + "…"


@dataclass(frozen=True)
class ToolCall:
    """One ``tool_use`` block and, when it came back, its ``tool_result``."""

    id: str
    """The ``tool_use`` id."""
    name: str
    """The tool's name as the model called it (``Task``, ``Bash``, ``mcp__srv__tool``...)."""
    input: dict[str, Any]
    """The arguments, as sent."""
    result: str | None = None
    """The tool result's text (blocks joined by newlines); ``None`` when no result came back."""
    is_error: bool = False
    """Whether the tool result was flagged ``is_error``."""
    parent_tool_use_id: str | None = None
    """The ``Agent``/``Task`` call whose subagent made this call; ``None`` for the main agent."""
    refused: bool = False
    """The harness never ran the call: it listed it as a permission denial, or its error result
    says it refused it (:data:`REFUSAL_MARKERS`)."""
    background: str | None = None
    """For a command run in the background (``run_in_background``), how it ended as the
    harness reported it (``completed``, ``failed``, ``killed``); ``None`` when no end was
    reported or the call was not a background one."""
    agent_name: str | None = None
    """The tool's own name in the agent that ran it, when the agent names it otherwise than
    the suite's vocabulary (OpenCode's ``bash`` for ``Bash``); ``None`` for Claude Code's."""

    @property
    def in_background(self) -> bool:
        """Whether the call started a background command: its result only says it started."""
        return self.input.get("run_in_background") is True

    @property
    def succeeded(self) -> bool:
        """Whether the call is known to have run without an error. A background command's
        immediate result says only that it started: it succeeded when the harness later
        reported it ``completed`` or a later output read showed exit code 0."""
        if self.status != "ran":
            return False
        return not self.in_background or self.background == "completed"

    @property
    def status(self) -> CallStatus:
        """What became of the call (:data:`CallStatus`)."""
        if self.refused:
            return "refused"
        if self.result is None:
            return "no-result"
        if self.is_error or self.background in ("failed", "killed"):
            return "failed"
        return "ran"

    @property
    def canonical_name(self) -> str:
        """The name this call is scored under (``Task`` is ``Agent``)."""
        return canonical_tool_name(self.name)

    def answers_to(self, expected: str) -> bool:
        """Whether this call counts as a call of the tool named ``expected`` (in the suite's
        vocabulary, or by the agent's own name for it)."""
        return tool_name_matches(self.name, expected) or self.agent_name == expected


@dataclass(frozen=True)
class PermissionDenial:
    """A tool call the harness refused to run."""

    tool_name: str
    """The refused tool."""
    tool_use_id: str | None = None
    """The refused ``tool_use`` id."""
    tool_input: dict[str, Any] = field(default_factory=dict)
    """The refused call's arguments."""


@dataclass(frozen=True)
class ApiRetry:
    """The harness retried a model request (``system/api_retry``)."""

    attempt: int | None = None
    """Which attempt failed (1-based)."""
    max_retries: int | None = None
    """The harness's retry budget."""
    error: str | None = None
    """The error kind the harness reported (``rate_limit``, ``overloaded``...)."""
    error_status: int | None = None
    """The HTTP status, ``None`` when the connection itself failed."""
    retry_delay_ms: float | None = None
    """How long the harness waited before retrying."""


@dataclass(frozen=True)
class ResultEvent:
    """One ``result`` event; a run can end with several (background subagents)."""

    subtype: str
    """``success``, ``error_max_turns``, ``error_during_execution``..."""
    is_error: bool
    """The harness's own error flag."""
    result: str | None = None
    """The final text, when the harness gave one."""
    num_turns: int | None = None
    """Turns the harness counted."""
    total_cost_usd: float | None = None
    """The harness's cost estimate."""
    duration_ms: float | None = None
    """Wall time the harness reported."""
    usage: Usage = field(default_factory=Usage)
    """Token usage of this result."""
    errors: tuple[str, ...] = ()
    """Error messages the harness attached."""
    terminal_reason: str | None = None
    """Why the harness stopped (``completed``, ``max_turns``, ``budget_exhausted``...)."""
    api_error_status: int | None = None
    """HTTP status of a failing model API, when the harness reported one."""
    api_error_type: str | None = None
    """The API's error type when the model API failed (``invalid_request_error``...)."""
    api_error: str | None = None
    """The harness's kind of model API failure when it gave one (``connection_failed``...)."""
    origin: str | None = None
    """What started the turn this result ends, when not the prompt (``task-notification``)."""


@dataclass(frozen=True)
class Transcript:
    """Everything one run produced, in a form scoring can read."""

    source: str
    """What produced it: ``anthropic``, ``claude-cli``, ``emulator``, ``replay``."""
    assistant_text: tuple[str, ...] = ()
    """The assistant's text blocks in order (main agent and forwarded subagent text)."""
    answer_text: tuple[str, ...] | None = None
    """The main agent's own text blocks, what the user saw (a subagent's internal text left
    out); ``None`` when the source tells no agents apart: then :attr:`assistant_text`."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Every tool call in the order it was made."""
    skills_invoked: tuple[str, ...] = ()
    """Skills the agent invoked (``Skill`` tool calls and skills the CLI expanded itself)."""
    permission_denials: tuple[PermissionDenial, ...] = ()
    """Tool calls the harness refused."""
    api_errors: tuple[str, ...] = ()
    """Model API errors the harness surfaced (e.g. ``API Error: 429 ...``)."""
    api_retries: tuple[ApiRetry, ...] = ()
    """Model requests the harness retried."""
    results: tuple[ResultEvent, ...] = ()
    """Every ``result`` event; the last one is final."""
    usage: Usage = field(default_factory=Usage)
    """Token usage of the whole run."""
    cost_usd: float | None = None
    """Cost of the whole run, when known."""
    model: str | None = None
    """The model that answered (through the CLI: the model its session was started with)."""
    api_models: tuple[str, ...] = ()
    """The models the API named in its answers, in the order they first answered; empty when
    no answer came. What a run's provenance reports as its model."""
    recorded_with: str | None = None
    """For a replayed run: the backend its cassette was recorded with (``emulator`` for the
    scripted stand-in, ``unknown`` when the cassette does not say); ``None`` otherwise."""
    answered_by: AnsweredBy | None = None
    """What answered the run's model requests, as its answers showed it (where they went, the
    emulator's mark); ``None`` when the runner cannot tell."""
    emulator_rules: tuple[ScriptRule, ...] = ()
    """Offline: the rules of the emulator's model script (or its default reply) that answered
    the run's model requests, each once, in the order they first answered; empty when no
    emulator said."""
    cli_version: str | None = None
    """The ``claude`` version, when the run went through the CLI."""
    session_id: str | None = None
    """The harness's session id."""
    stop_reason: str | None = None
    """The last model response's stop reason."""
    exit_code: int | None = None
    """The process exit status, when the run was a process."""
    latency_ms: float | None = None
    """Wall time of the run."""
    unknown_events: int = 0
    """Events the parser did not recognise (kept out of scoring, counted)."""
    malformed_lines: int = 0
    """Lines that were not JSON objects (counted, never fatal)."""
    error: str | None = None
    """Why the run failed to execute (an infrastructure failure: the API failing after retries,
    a crashed CLI, a replay miss); a transcript with an error is never scored."""
    ended: str | None = None
    """How the agent's run was cut short when it was (a time limit, its turns or budget used
    up, its context full): behaviour, so the run is still scored on what it did."""
    skills_available: tuple[str, ...] = ()
    """Skills the harness loaded for the run (``system/init``), whether used or not."""
    tools_available: tuple[str, ...] = ()
    """Tools the harness offered the model (``system/init``)."""
    hung: str | None = None
    """Why the run's time limit cut it off while a tool call the agent made was still running
    (no result came back for it), naming the call: the agent's own hang, which is behaviour,
    so the run is scored and fails (its rubric vetoes it); ``None`` otherwise."""

    @property
    def text(self) -> str:
        """The assistant's text blocks joined by blank lines."""
        return "\n\n".join(self.assistant_text)

    @property
    def answer(self) -> str:
        """What the user saw: the main agent's text blocks joined by blank lines."""
        blocks = self.assistant_text if self.answer_text is None else self.answer_text
        return "\n\n".join(blocks)

    @property
    def final_answer(self) -> str:
        """The main agent's last text block: its answer at the end of the run."""
        blocks = self.assistant_text if self.answer_text is None else self.answer_text
        return blocks[-1] if blocks else ""

    @property
    def final_result(self) -> ResultEvent | None:
        """The last ``result`` event, which is the run's outcome."""
        return self.results[-1] if self.results else None

    @property
    def completed(self) -> bool:
        """Whether the run executed (it may still have done the wrong thing)."""
        return self.error is None

    @property
    def running_call(self) -> ToolCall | None:
        """The tool call the agent was still waiting on when the stream ended: the last call
        with no result that the harness did not refuse. An ``Agent`` (``Task``) call is never
        it: its subagent's own calls are in the list, and a subagent with none open is waiting
        on the model."""
        for call in reversed(self.tool_calls):
            if call.result is None and not call.refused and call.canonical_name != "Agent":
                return call
        return None


def claude_events(transcript: Transcript) -> tuple[dict[str, Any], ...]:
    """Another agent's run as Claude Code's ``stream-json`` would print it: each tool call an
    ``assistant`` event with its ``tool_use`` block (in the suite's vocabulary) and a ``user``
    event with its ``tool_result``, then the final answer as the last assistant event.

    What a ``plugin_eval`` check reads (the last message, the trace, the tools written) is then
    read alike whichever agent ran: the checks of ``claude plugin eval``'s cases keep their
    meaning for OpenCode and Codex.
    """
    events: list[dict[str, Any]] = []
    for call in transcript.tool_calls:
        events.append(
            {
                "type": "assistant",
                "parent_tool_use_id": call.parent_tool_use_id,
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}
                    ],
                },
            }
        )
        if call.result is not None:
            events.append(
                {
                    "type": "user",
                    "parent_tool_use_id": call.parent_tool_use_id,
                    "message": {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": call.id,
                                "content": call.result,
                                "is_error": call.is_error,
                            }
                        ],
                    },
                }
            )
    if transcript.final_answer:
        events.append(
            {
                "type": "assistant",
                "parent_tool_use_id": None,
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": transcript.final_answer}],
                },
            }
        )
    return tuple(events)
