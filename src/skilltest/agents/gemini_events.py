"""Gemini CLI's JSON event stream (``gemini -p ... --output-format stream-json``) read into a
transcript.

Gemini CLI 0.61.0 prints one JSON object per line, each with ``type`` and ``timestamp``:

* ``init``: the session (``session_id``) and the model asked for (``model``, ``auto`` when the
  CLI routes each turn itself);
* ``message``: ``role`` ``user`` (the prompt) or ``assistant`` (its text, in pieces marked
  ``delta: true``);
* ``tool_use``: a call (``tool_name``, ``tool_id``, ``parameters``);
* ``tool_result``: how it ended (``tool_id``, ``status`` ``success`` or ``error``, ``output``,
  and for an error ``error.type`` and ``error.message``);
* ``error``: a warning or error of the run (``severity``, ``message``);
* ``result``: the end (``status`` ``success`` or ``error``, ``error.message``; ``stats`` with
  the tokens used, per model as the API named it).

Tool names and inputs are read into the suite's vocabulary (:mod:`skilltest.agents.tools`); the
evidence rules are Claude Code's: a command that exits non-zero failed (its output says ``Exit
Code: N``), a call the CLI refused (a tool it does not have, input it rejected, a policy that
denied it) never ran. Pure functions; no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from skilltest.agents.json_lines import STDERR_TAIL, json_lines, json_object
from skilltest.agents.tools import as_suite_call, fired_skill
from skilltest.transcript.model import ToolCall, Transcript, Usage

AGENT = "gemini"
SOURCE = "gemini"
"""What a transcript read from Gemini CLI's events says produced it."""

KNOWN_EVENTS = frozenset({"init", "message", "tool_use", "tool_result", "error", "result"})

REFUSED_ERRORS = frozenset(
    {
        "tool_not_registered",
        "invalid_tool_params",
        "policy_violation",
        "execution_denied",
        "unauthorized_tool_call",
        "path_not_in_workspace",
    }
)
"""The ``error.type`` of a tool result that says Gemini CLI never ran the call."""

BLOCKED = re.compile(r"^Blocked: ")
"""How ``run_shell_command``'s output says the CLI refused to run a command it reported as a
success (``Blocked: command substitution detected in shell command.``)."""

EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)
"""How ``run_shell_command``'s output says a command exited non-zero."""


def session_of(stdout: str) -> str | None:
    """The session id of the first ``init`` event (what ``--resume`` takes)."""
    for event in json_lines(stdout.split("\n")):
        if event is not None and event.get("type") == "init":
            session = event.get("session_id")
            return session if isinstance(session, str) and session else None
    return None


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def _ended(call: ToolCall, tool: str, event: Mapping[str, Any]) -> ToolCall:
    """``call`` with the outcome a ``tool_result`` event reports."""
    error = json_object(event.get("error"))
    if event.get("status") == "success":
        result = _text(event.get("output"))
        if tool == "run_shell_command" and BLOCKED.match(result):
            # Gemini CLI never ran it (its shell refuses $(...), <(...) and >(...)).
            return _with(call, result, is_error=True, refused=True)
        exited = EXIT_CODE.search(result) if tool == "run_shell_command" else None
        if exited is not None and exited.group(1) != "0":
            return _with(call, f"Exit code {exited.group(1)}\n{result}", is_error=True)
        return _with(call, result, is_error=False)
    message = _text(error.get("message") or event.get("output") or "the call failed")
    refused = error.get("type") in REFUSED_ERRORS
    return _with(call, message, is_error=True, refused=refused)


def _with(call: ToolCall, result: str, *, is_error: bool, refused: bool = False) -> ToolCall:
    return ToolCall(
        id=call.id,
        name=call.name,
        input=call.input,
        result=result,
        is_error=is_error,
        refused=refused,
        agent_name=call.agent_name,
    )


def parse_gemini(
    stdout: str, *, exit_code: int | None = None, stderr: str = "", prompt: str | None = None
) -> Transcript:
    """Gemini CLI's events (of every process of a run, in order) as a transcript; a run whose
    last ``result`` is an error, or that printed no ``result`` and exited non-zero, did not
    finish (``error`` set)."""
    del prompt  # the events repeat the prompt as a user message
    texts: list[str] = []
    pieces: list[str] = []
    calls: dict[str, ToolCall] = {}
    tools: dict[str, tuple[str, dict[str, Any]]] = {}
    order: list[str] = []
    fired: list[str] = []
    errors: list[str] = []
    usage = Usage()
    session: str | None = None
    asked: str | None = None
    answered: list[str] = []
    outcome: str | None = None
    outcome_error: str | None = None
    unknown = malformed = 0

    def flush() -> None:
        if "".join(pieces).strip():
            texts.append("".join(pieces))
        pieces.clear()

    for event in json_lines(stdout.split("\n")):
        if event is None:
            malformed += 1
            continue
        kind = event.get("type")
        if kind not in KNOWN_EVENTS:
            unknown += 1
        elif kind == "init":
            given = event.get("session_id")
            if session is None and isinstance(given, str) and given:
                session = given
            named = event.get("model")
            if asked is None and isinstance(named, str) and named and named != "auto":
                asked = named
        elif kind == "message":
            if event.get("role") == "assistant" and isinstance(event.get("content"), str):
                pieces.append(event["content"])
                if not event.get("delta"):
                    flush()
            else:
                flush()
        elif kind == "tool_use":
            flush()
            tool = str(event.get("tool_name") or "")
            given = dict(json_object(event.get("parameters")))
            key = str(event.get("tool_id") or f"#{len(order)}")
            name, arguments = as_suite_call(AGENT, tool, given)
            if key not in calls:
                order.append(key)
            tools[key] = (tool, given)
            calls[key] = ToolCall(
                id=key, name=name, input=arguments, agent_name=tool if tool != name else None
            )
        elif kind == "tool_result":
            flush()
            key = str(event.get("tool_id") or "")
            if key not in calls:
                order.append(key)
                calls[key] = ToolCall(id=key, name="", input={})
                tools[key] = ("", {})
            tool, given = tools[key]
            calls[key] = _ended(calls[key], tool, event)
            if event.get("status") == "success":
                skill = fired_skill(AGENT, tool, given)
                if skill is not None and skill not in fired:
                    fired.append(skill)
        elif kind == "error":
            flush()
            if event.get("severity") != "warning":
                errors.append(_text(event.get("message")))
        elif kind == "result":
            flush()
            outcome = str(event.get("status") or "")
            failure = json_object(event.get("error"))
            outcome_error = _text(failure.get("message")) if failure else None
            stats = json_object(event.get("stats"))
            for name, counted in json_object(stats.get("models")).items():
                if json_object(counted).get("total_tokens") and name not in answered:
                    answered.append(str(name))
            usage = usage + Usage.from_mapping(
                {
                    "input_tokens": stats.get("input_tokens"),
                    "output_tokens": stats.get("output_tokens"),
                    "cache_read_input_tokens": stats.get("cached"),
                }
            )
    flush()
    error = None
    if outcome == "error":
        error = f"gemini reported an error: {outcome_error or (errors[-1] if errors else '')}"
        if outcome_error:
            errors.append(outcome_error)
    elif outcome is None and exit_code not in (None, 0):
        tail = stderr.strip()[-STDERR_TAIL:]
        error = f"gemini exited {exit_code} before its result" + (f": {tail}" if tail else "")
    return Transcript(
        source=SOURCE,
        assistant_text=tuple(texts),
        tool_calls=tuple(calls[key] for key in order),
        skills_invoked=tuple(fired),
        api_errors=tuple(errors),
        usage=usage,
        cost_usd=None,
        model=asked,
        api_models=tuple(answered),
        session_id=session,
        stop_reason="end_turn" if outcome == "success" else None,
        exit_code=exit_code,
        unknown_events=unknown,
        malformed_lines=malformed,
        error=error,
    )
