"""OpenCode's JSON event stream (``opencode run --format json``) read into a transcript.

OpenCode 1.18.33 prints one JSON object per line, each with ``type``, ``timestamp``,
``sessionID`` and a ``part``:

* ``step_start``: a model request begins;
* ``text``: the assistant's text (``part.text``);
* ``tool_use``: a tool call and how it ended (``part.tool``, ``part.callID``, ``part.state``:
  ``status`` ``completed`` with ``input``, ``output`` and ``metadata.exit`` for a command, or
  ``error`` with ``error``);
* ``step_finish``: the request's end (``part.reason``: ``tool-calls`` or ``stop``; ``tokens``,
  ``cost``);
* ``error``: what went wrong (``error.name``, ``error.data.message``).

Tool names and inputs are read into the suite's vocabulary (:mod:`skilltest.agents.tools`); the
evidence rules are Claude Code's: a command that exits non-zero failed, a call the agent refused
(a permission it was not given) was never run. Pure functions; no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from skilltest.agents.json_lines import STDERR_TAIL, json_lines, json_object
from skilltest.agents.tools import as_suite_call, fired_skill
from skilltest.transcript.model import ToolCall, Transcript, Usage

AGENT = "opencode"
SOURCE = "opencode"
"""What a transcript read from OpenCode's events says produced it."""

KNOWN_EVENTS = frozenset({"step_start", "text", "tool_use", "step_finish", "error", "reasoning"})

REFUSALS: tuple[str, ...] = (
    "permission",
    "rejected",
    "not allowed",
    "denied",
    "unavailable tool",
    "invalid tool",
)
"""Text in a tool call's error that says OpenCode never ran it (a permission it was not given,
a tool it does not have, input it refused), lowercased."""

INVALID_TOOL = "invalid"
"""The tool OpenCode answers a call of a tool it does not have with (``input.tool`` names it)."""


def session_of(stdout: str) -> str | None:
    """The session id the events carry (the first one)."""
    for event in json_lines(stdout.split("\n")):
        if event is not None and isinstance(event.get("sessionID"), str):
            return str(event["sessionID"])
    return None


def _error_text(error: Any) -> str:
    if isinstance(error, str):
        return error
    if isinstance(error, Mapping):
        data = error.get("data")
        if isinstance(data, Mapping) and isinstance(data.get("message"), str):
            return f"{error.get('name') or 'error'}: {data['message']}"
        if isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error.get("name"), str):
            return str(error["name"])
    return json.dumps(error, ensure_ascii=False)[:300]


def _call(part: Mapping[str, Any]) -> tuple[ToolCall, str | None]:
    """A ``tool_use`` part as a call in the suite's vocabulary, and the skill it loaded."""
    tool = str(part.get("tool") or "")
    state = json_object(part.get("state"))
    given = json_object(state.get("input"))
    status = state.get("status")
    if tool == INVALID_TOOL and isinstance(given.get("tool"), str):
        # A call of a tool OpenCode does not have comes back as its `invalid` tool: the call
        # the model made was refused, never run.
        asked = str(given["tool"])
        output = state.get("output") or given.get("error") or ""
        return ToolCall(
            id=str(part.get("callID") or part.get("id") or ""),
            name=asked,
            input={},
            result=str(output),
            is_error=True,
            refused=True,
        ), None
    name, arguments = as_suite_call(AGENT, tool, given)
    result: str | None = None
    is_error = refused = False
    if status == "completed":
        output = state.get("output")
        result = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        metadata = json_object(state.get("metadata"))
        exit_code = metadata.get("exit")
        is_error = isinstance(exit_code, int) and exit_code != 0
        if is_error:
            result = f"Exit code {exit_code}\n{result}"
    elif status == "error":
        result = _error_text(state.get("error"))
        is_error = True
        refused = any(marker in result.lower() for marker in REFUSALS)
    call = ToolCall(
        id=str(part.get("callID") or part.get("id") or ""),
        name=name,
        input=arguments,
        result=result,
        is_error=is_error,
        refused=refused,
        agent_name=tool if tool != name else None,
    )
    fired = fired_skill(AGENT, tool, given) if status == "completed" else None
    return call, fired


def parse_opencode(
    stdout: str, *, exit_code: int | None = None, stderr: str = "", prompt: str | None = None
) -> Transcript:
    """OpenCode's events as a transcript; a run that printed no step and exited non-zero, or
    whose events report an error before any answer, did not execute (``error`` set)."""
    del prompt  # OpenCode's events do not repeat the prompt
    texts: list[str] = []
    calls: dict[str, ToolCall] = {}
    order: list[str] = []
    fired: list[str] = []
    errors: list[str] = []
    usage = Usage()
    cost = 0.0
    costed = False
    stop_reason: str | None = None
    session: str | None = None
    unknown = malformed = 0
    for event in json_lines(stdout.split("\n")):
        if event is None:
            malformed += 1
            continue
        kind = event.get("type")
        if session is None and isinstance(event.get("sessionID"), str):
            session = event["sessionID"]
        part = json_object(event.get("part"))
        if kind not in KNOWN_EVENTS:
            unknown += 1
        elif kind == "text" and isinstance(part.get("text"), str) and part["text"].strip():
            texts.append(part["text"])
        elif kind == "tool_use":
            call, skill = _call(part)
            key = call.id or f"#{len(order)}"
            if key not in calls:
                order.append(key)
            calls[key] = call
            if skill is not None and skill not in fired:
                fired.append(skill)
        elif kind == "step_finish":
            reason = part.get("reason")
            stop_reason = reason if isinstance(reason, str) else stop_reason
            tokens = json_object(part.get("tokens"))
            cache = json_object(tokens.get("cache"))
            usage = usage + Usage.from_mapping(
                {
                    "input_tokens": tokens.get("input"),
                    "output_tokens": tokens.get("output"),
                    "cache_read_input_tokens": cache.get("read"),
                    "cache_creation_input_tokens": cache.get("write"),
                }
            )
            if isinstance(part.get("cost"), int | float):
                cost += float(part["cost"])
                costed = True
        elif kind == "error":
            errors.append(_error_text(event.get("error")))
    error = None
    if errors and stop_reason != "stop":
        error = f"opencode reported an error: {errors[-1]}"
    elif stop_reason is None and exit_code not in (None, 0):
        tail = stderr.strip()[-STDERR_TAIL:]
        error = f"opencode exited {exit_code} before any step" + (f": {tail}" if tail else "")
    return Transcript(
        source=SOURCE,
        assistant_text=tuple(texts),
        tool_calls=tuple(calls[key] for key in order),
        skills_invoked=tuple(fired),
        api_errors=tuple(errors),
        usage=usage,
        cost_usd=cost if costed else None,
        session_id=session,
        stop_reason=stop_reason,
        exit_code=exit_code,
        unknown_events=unknown,
        malformed_lines=malformed,
        error=error,
    )
