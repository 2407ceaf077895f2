"""Codex's ``codex exec --json`` events read into the one transcript, and when a skill fired.

Verified against Codex 0.171.0's streams captured offline (``tests/fixtures/agents/codex/``):

* **parse**: :func:`parse_codex_events` reads its JSONL events into the one
  :class:`~skilltest.transcript.Transcript`, tools named as suites name them
  (:data:`TOOL_NAMES`); the events of a run's several processes (one per user message) read in
  order. :func:`session_of` is the conversation's id, for the next message.
* **fired**: :func:`skill_fired`. Codex has no skill tool: it lists each skill's name,
  description and file to the model, and the model loads one by reading its ``SKILL.md``
  through the shell. The skill fired when a shell command that ran reads ``<name>/SKILL.md``
  (:func:`skills_read`).

Pure functions: no process is started here (:mod:`skilltest.agents.codex` runs Codex).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from skilltest.agents.json_lines import json_lines
from skilltest.transcript.model import ResultEvent, ToolCall, Transcript, Usage


def session_of(lines: Iterable[str]) -> str | None:
    """The conversation's id (``thread.started``'s ``thread_id``), for the next message."""
    events, _ = _events(lines)
    found = [e.get("thread_id") for e in events if e.get("type") == "thread.started"]
    return str(found[0]) if found and found[0] else None


# -- events ----------------------------------------------------------------------------------

TOOL_NAMES: dict[str, str] = {
    "command_execution": "Bash",
    "file_change:add": "Write",
    "file_change:update": "Edit",
    "file_change:delete": "Delete",
    "web_search": "WebSearch",
    "todo_list": "TodoWrite",
}
"""Codex's items (``file_change`` by the kind of change) as suites name the tool; an
``mcp_tool_call`` is ``mcp__<server>__<tool>``. The item type stays in the call's input as
``codex_item``."""

_SHELLS = ("bash", "sh", "zsh", "dash")


def shell_command(command: str) -> str:
    """The command line inside Codex's shell wrapper (``/bin/bash -lc 'echo hi'`` gives
    ``echo hi``); any other command as it is."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if len(words) == 3 and Path(words[0]).name in _SHELLS and words[1] in ("-c", "-lc"):
        return words[2]
    return command


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _usage(data: object) -> Usage:
    if not isinstance(data, dict):
        return Usage()
    cached = _int(data.get("cached_input_tokens"))
    return Usage(
        input_tokens=max(_int(data.get("input_tokens")) - cached, 0),
        output_tokens=_int(data.get("output_tokens")),
        cache_creation_input_tokens=_int(data.get("cache_write_input_tokens")),
        cache_read_input_tokens=cached,
    )


def _command_call(item: Mapping[str, Any]) -> ToolCall:
    raw = str(item.get("command") or "")
    status = item.get("status")
    exit_code = item.get("exit_code")
    output = str(item.get("aggregated_output") or "")
    ended = status in ("completed", "failed") or isinstance(exit_code, int)
    failed = status == "failed" or (isinstance(exit_code, int) and exit_code != 0)
    result: str | None = None
    if ended:
        # As Claude Code words a failing Bash call's result, so one pattern reads both.
        result = f"Exit code {exit_code}\n{output}" if failed and exit_code is not None else output
    return ToolCall(
        id=str(item.get("id") or ""),
        name=TOOL_NAMES["command_execution"],
        input={"command": shell_command(raw), "codex_item": "command_execution"},
        result=result,
        is_error=failed,
        refused=status == "declined",
    )


def _file_calls(item: Mapping[str, Any]) -> list[ToolCall]:
    status = item.get("status")
    ended = status in ("completed", "failed")
    calls = []
    changes = item.get("changes")
    for index, change in enumerate(changes if isinstance(changes, list) else []):
        if not isinstance(change, dict):
            continue
        kind = str(change.get("kind") or "update")
        path = str(change.get("path") or "")
        calls.append(
            ToolCall(
                id=f"{item.get('id') or ''}:{index}",
                name=TOOL_NAMES.get(f"file_change:{kind}", "Edit"),
                input={"file_path": path, "kind": kind, "codex_item": "file_change"},
                result=f"{kind} {path}" if ended else None,
                is_error=status == "failed",
            )
        )
    return calls


def _mcp_call(item: Mapping[str, Any]) -> ToolCall:
    status = item.get("status")
    arguments = item.get("arguments")
    error = item.get("error")
    failed = status == "failed" or isinstance(error, dict)
    result: str | None = None
    if isinstance(error, dict):
        result = str(error.get("message") or "")
    elif status in ("completed", "failed"):
        answer = item.get("result")
        content = answer.get("content") if isinstance(answer, dict) else None
        blocks = content if isinstance(content, list) else []
        result = "\n".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
    given = arguments if isinstance(arguments, dict) else {}
    return ToolCall(
        id=str(item.get("id") or ""),
        name=f"mcp__{item.get('server')}__{item.get('tool')}",
        input={**given, "codex_item": "mcp_tool_call"},
        result=result,
        is_error=failed,
    )


def _other_call(item: Mapping[str, Any], kind: str) -> ToolCall:
    fields = {key: value for key, value in item.items() if key not in ("id", "type", "status")}
    return ToolCall(
        id=str(item.get("id") or ""),
        name=TOOL_NAMES[kind],
        input={**fields, "codex_item": kind},
        result="",
    )


def _calls(item: Mapping[str, Any]) -> list[ToolCall]:
    kind = str(item.get("type"))
    if kind == "command_execution":
        return [_command_call(item)]
    if kind == "file_change":
        return _file_calls(item)
    if kind == "mcp_tool_call":
        return [_mcp_call(item)]
    if kind in TOOL_NAMES:
        return [_other_call(item, kind)]
    return []


def _events(lines: Iterable[str]) -> tuple[list[dict[str, Any]], int]:
    events: list[dict[str, Any]] = []
    malformed = 0
    for event in json_lines(lines):
        if event is None:
            malformed += 1
        else:
            events.append(event)
    return events, malformed


_NOT_SAID = re.compile(r"^\s*(\d+\s*)?\|.*$|^Reading additional input from stdin")
"""Lines of Codex's stderr that say nothing on their own: the source excerpt and carets under
a config error (``23 | key = 1``, ``   | ^^^``), and the note that it reads stdin."""


def _stderr_tail(stderr: str) -> list[str]:
    """The last three lines of ``stderr`` that say something (not :data:`_NOT_SAID`)."""
    said = [line.strip() for line in stderr.splitlines() if line.strip()]
    return [line for line in said if not _NOT_SAID.match(line)][-3:]


def parse_codex_events(
    lines: Iterable[str],
    *,
    exit_code: int | None = None,
    stderr: str | None = None,
    model: str | None = None,
    cli_version: str | None = None,
    latency_ms: float | None = None,
) -> Transcript:
    """The transcript of one ``codex exec --json`` run from the lines it printed.

    Tool calls are named as suites name them (:data:`TOOL_NAMES`); a command's exit code other
    than 0 makes its call fail. A run is unscored (``error`` set) when its turn failed
    (``turn.failed``), when it reported an ``error`` event and never completed its turn, or when
    it ended without completing one (a crash: the exit code and the end of ``stderr`` say so).
    An ``error`` *item* is a warning Codex prints and goes on (an unknown model name): it is
    not a failure.
    """
    events, malformed = _events(lines)
    texts: list[str] = []
    order: list[str] = []
    calls: dict[str, list[ToolCall]] = {}
    results: list[ResultEvent] = []
    api_errors: list[str] = []
    usage = Usage()
    session_id: str | None = None
    unknown = 0
    process = 0
    failure: str | None = None
    for event in events:
        kind = event.get("type")
        item = event.get("item")
        if kind == "thread.started":
            session_id = session_id or str(event.get("thread_id") or "") or None
            process += 1
        elif kind in ("item.started", "item.updated", "item.completed") and isinstance(item, dict):
            # Each process of a run (one per user message) numbers its items from item_0 again.
            key = f"{process}:{item.get('id') or len(order)}"
            if item.get("type") == "agent_message":
                if kind == "item.completed":
                    texts.append(str(item.get("text") or ""))
            elif item.get("type") in ("reasoning", "error"):
                pass
            else:
                made = _calls(item)
                if not made:
                    unknown += 1
                    continue
                if key not in calls:
                    order.append(key)
                calls[key] = made
        elif kind == "turn.completed":
            turn = _usage(event.get("usage"))
            usage += turn
            final = texts[-1] if texts else None
            results.append(ResultEvent("success", False, final, usage=turn))
        elif kind == "turn.failed":
            error = event.get("error")
            message = str(error.get("message")) if isinstance(error, dict) else str(error)
            failure = f"Codex's turn failed: {message}"
            results.append(ResultEvent("error_during_execution", True, errors=(message,)))
        elif kind == "error":
            api_errors.append(str(event.get("message") or ""))
        elif kind != "turn.started":
            unknown += 1
    completed = any(not result.is_error for result in results)
    if failure is None and not completed:
        if api_errors:
            failure = f"Codex reported an error and did not finish its turn: {api_errors[-1]}"
        else:
            tail = _stderr_tail(stderr or "")
            failure = f"Codex ended without finishing its turn (exit {exit_code})" + (
                ": " + " / ".join(tail) if tail else ""
            )
    tool_calls = tuple(call for key in order for call in calls[key])
    return Transcript(
        source="codex",
        assistant_text=tuple(texts),
        tool_calls=tool_calls,
        skills_invoked=skills_read(tool_calls),
        api_errors=tuple(api_errors),
        results=tuple(results),
        usage=usage,
        model=model,
        cli_version=cli_version,
        session_id=session_id,
        exit_code=exit_code,
        latency_ms=latency_ms,
        unknown_events=unknown,
        malformed_lines=malformed,
        error=failure,
    )


# -- firing ----------------------------------------------------------------------------------

READERS = frozenset(
    {"cat", "sed", "head", "tail", "less", "more", "nl", "awk", "bat", "batcat", "view"}
)
"""Programs whose naming of a file reads it."""
_SKILL_FILE = re.compile(r"(?:^|/)([A-Za-z0-9][A-Za-z0-9._-]*)/SKILL\.md$")


def _files_read(command: str) -> list[str]:
    """The files a command line reads with one of :data:`READERS`, in each of its pipeline and
    list parts (``cd x && cat a | head``)."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        words = command.split()
    read: list[str] = []
    program: str | None = None
    for word in words:
        if word and set(word) <= set(";&|()"):
            program = None
        elif program is None:
            program = Path(word).name
        elif program in READERS and not word.startswith("-"):
            read.append(word)
    return read


def skills_read(calls: Iterable[ToolCall]) -> tuple[str, ...]:
    """The skills whose ``SKILL.md`` a call that ran read, in order, each once: a shell command
    naming ``<name>/SKILL.md`` as a file of :data:`READERS` (``cat``, ``sed -n 1,80p``,
    ``head``...), or a ``Read`` of it."""
    names: list[str] = []
    for call in calls:
        if call.status != "ran":
            continue
        if call.answers_to("Bash"):
            files = _files_read(str(call.input.get("command") or ""))
        elif call.answers_to("Read"):
            files = [str(call.input.get("file_path") or "")]
        else:
            continue
        for file in files:
            found = _SKILL_FILE.search(file)
            if found and found.group(1) not in names:
                names.append(found.group(1))
    return tuple(names)


def skill_fired(transcript: Transcript, skill_name: str) -> bool:
    """Whether the run loaded the skill ``skill_name``: it read the skill's ``SKILL.md`` with a
    call that ran (:func:`skills_read`). Listing or searching the skills folder is not firing;
    nor is a read that failed."""
    return skill_name in skills_read(transcript.tool_calls)
