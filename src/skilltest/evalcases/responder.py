"""An agent responder: a model playing an MCP server, asked as Claude Code's plugin eval asks.

Its system prompt says which server it stands in for, how to answer (the tool's result only, an
``ERROR:`` line for an ordinary tool error) and, when the mock lists ``abort_when`` conditions,
when to stop the run with an ``ABORT:`` line; the author's description of the server follows.
Each call is one user message: the earlier calls of the run and their answers, then the current
call and its arguments. These texts are the CLI's own, so one model script answers a mock's
requests from both tools (a rule with ``when: {system: "standing in for the MCP server"}``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from skilltest.javascript import js_json, js_json_indented

ABORT, ERROR = "ABORT:", "ERROR:"
HISTORY_CALLS = 40
"""The most earlier calls a responder is shown."""
HISTORY_CHARS = 240_000
"""The most characters of earlier calls a responder is shown."""
ARGUMENTS_CHARS = 16_384
"""The most characters of the current call's arguments a responder is shown."""
MARK = "standing in for the MCP server"
"""Text every responder's system prompt holds (what a model script's rule matches)."""

Verdict = Literal["ok", "tool_error", "abort"]


@dataclass(frozen=True)
class Answered:
    """One call a responder answered, kept for the next calls' history."""

    tool: str
    input: Any
    verdict: Verdict
    output: str


def system_prompt(server: str, abort_when: str | None, description: str) -> str:
    """The responder's system prompt for one server."""
    parts = [
        f'You are standing in for the MCP server "{server}" inside an automated evaluation of a '
        "coding-agent plugin. Each user turn is one tool call the agent under test just made; "
        "earlier calls this run and your answers to them are listed first as history. Reply "
        "with ONLY the tool's result content, exactly as the real server would return it (JSON "
        "when the server returns JSON) — no commentary, no markdown fences unless the real "
        "result would contain them. Stay consistent with your earlier answers this run.",
        "To return an ordinary tool ERROR the agent should handle (bad arguments, not found, "
        f'rate limited), reply with a single line starting "{ERROR} " followed by the error '
        "text.",
    ]
    if abort_when and abort_when.strip():
        parts.append(
            "The evaluation author listed conditions under which this run must be STOPPED "
            "because the agent has gone off the rails. If — and only if — the current call "
            f'meets one of them, reply with a single line starting "{ABORT} " followed by a '
            f"short reason naming the condition. The conditions:\n{abort_when.strip()}"
        )
    else:
        parts.append(f'Never reply with a line starting "{ABORT}".')
    parts.append("The author's description of the server you are playing follows.")
    return "\n\n".join(parts) + "\n\n" + description


def _shortened(text: str, limit: int) -> str:
    return (
        text
        if len(text) <= limit
        else f"{text[:limit]}… [{len(text) - limit} more characters omitted]"
    )


def user_prompt(tool: str, arguments: Mapping[str, Any], history: Sequence[Answered]) -> str:
    """One call as the responder is asked it: the history, then the call."""
    recent = list(history)[-HISTORY_CALLS:]
    lines: list[str] = []
    used = 0
    for call in reversed(recent):
        shown = call.input if isinstance(call.input, str) else js_json(call.input)
        marker = "" if call.verdict == "ok" else f"[{call.verdict}] "
        line = f"- {call.tool}({shown}) → {marker}{call.output}"
        if used + len(line) > HISTORY_CHARS:
            break
        lines.insert(0, line)
        used += len(line)
    parts = []
    if lines:
        left_out = len(history) - len(lines)
        older = f" ({left_out} older omitted)" if left_out else ""
        parts.append(f"Earlier calls this run{older}:\n" + "\n".join(lines))
    arguments_text = _shortened(js_json_indented(dict(arguments)), ARGUMENTS_CHARS)
    parts.append(f"Current call: {tool}\nArguments:\n{arguments_text}")
    return "\n\n".join(parts)


def parse_reply(text: str, *, can_abort: bool) -> tuple[Verdict, str]:
    """A responder's answer: ``ABORT:`` stops the run (only with ``abort_when``; else it is a
    tool error), ``ERROR:`` is a tool error, anything else the tool's result."""
    reply = text.strip()
    if reply.startswith(ABORT):
        reason = reply[len(ABORT) :].strip() or "abort_when condition met"
        return ("abort" if can_abort else "tool_error"), reason
    if reply.startswith(ERROR):
        return "tool_error", reply[len(ERROR) :].strip() or "error"
    return "ok", reply
