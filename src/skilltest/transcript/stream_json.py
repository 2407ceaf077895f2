"""Reads what ``claude -p`` printed into one :class:`~skilltest.transcript.Transcript`.

The main input is ``--output-format stream-json --verbose``: one JSON object per line. The
events read, by ``type`` (and ``subtype``):

``system/init``
    The CLI version (``claude_code_version``), the model, the session id, and the skills and
    tools the harness loaded. A run can hold several (one per turn); the first one counts.
``assistant``
    One content block per line in practice; a model response split over several lines repeats
    its message id and ``usage``. ``text`` blocks become the assistant's text, ``tool_use``
    blocks become tool calls tagged with the ``parent_tool_use_id`` of the subagent that made
    them, ``thinking`` blocks are ignored. A synthetic message (``is_api_error_message``, model
    ``<synthetic>``, an ``error`` field) is not model output: its text is a model API error.

    **Subagent text is assistant text**, in order with the main agent's, whenever the CLI
    printed it: a background subagent's always, a foreground subagent's only with
    ``--forward-subagent-text``, which the scenario runs pass so that the model's choice of
    background or foreground does not change the transcript. An output recorded without that
    flag lacks a foreground subagent's text; its hand-back to the main agent is the ``Agent``
    call's tool result, which is not assistant text.
``user``
    ``tool_result`` blocks give each tool call its result text and ``is_error``. Prompts, replayed
    user turns and the synthetic skill bodies the CLI injects after a ``Skill`` call are ignored.
``system/api_retry``
    The harness retried a model request.
``system/permission_denied``
    The harness refused a tool call (merged with the result's ``permission_denials``).
``result``
    Every one is kept (a background subagent or a multi-turn input gives several; the last is
    final), with its subtype, cost, usage and errors.
``stream_event`` (``--include-partial-messages``), ``rate_limit_event``, ``system`` hooks,
status, thinking-token estimates and background-task bookkeeping
    Recognised and skipped: the complete ``assistant`` lines carry the same content.

Any other event is counted in ``unknown_events``; a line that is not a JSON object (a stray
print, a truncated last line) is counted in ``malformed_lines``. Neither is ever fatal.

:func:`parse_cli_output` also reads the other output formats: ``--output-format json`` (a
single result object), ``--output-format json --verbose`` (a JSON array of the same events) and
the plain text format (only the final answer).

**Scored or not.** ``Transcript.error`` is set when the run did not execute, and such a run is
never scored: no events at all; a model API error (a synthetic error message, or a result flagged
``is_error`` with subtype ``success``); ``error_during_execution`` or any other error subtype we
do not know; no result event (whatever the exit status). ``error_max_turns`` and
``error_max_budget_usd`` are the agent running out of its budget, and an API refusal because
the conversation outgrew the context window ("prompt is too long") is the agent filling its own
context: the run executed, so it is scored, and ``Transcript.ended`` says how it was cut
short. Retries that ended in a success do not make a run unscored. When there is a result
event, the exit status does not change the verdict (the CLI exits 1 on ``error_max_turns``).

**Usage and cost.** Per-message ``usage`` repeats on every line of a split message and counts
only what the message stream reported, so it is a last resort. The result events' per-turn
``model_usage_since_last_result`` (which includes subagents) is summed when every result has
it; otherwise the final result's ``modelUsage`` and ``total_cost_usd`` are used. Those two are
totals for the whole *session*, so for a ``--resume``d session they include earlier runs.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.files import open_regular
from skilltest.transcript.model import (
    REFUSAL_MARKERS,
    ApiRetry,
    PermissionDenial,
    ResultEvent,
    ToolCall,
    Transcript,
    Usage,
)

BUDGET_SUBTYPES: frozenset[str] = frozenset({"error_max_turns", "error_max_budget_usd"})
"""Result subtypes of an agent that ran out of turns or money: executed, so scored."""

SKILL_TOOL = "Skill"
"""The tool through which an agent loads a skill."""

SKILL_BODY = "Base directory for this skill:"
"""How Claude Code's text of a loaded skill starts: this, the skill's folder in the run (which
differs run to run), a blank line, then its SKILL.md."""

# Events that are understood and deliberately carry nothing scoring needs.
_SKIPPED_TYPES: frozenset[str] = frozenset(
    {
        "stream_event",
        "rate_limit_event",
        "keep_alive",
        "tool_progress",
        "tool_use_summary",
        "auth_status",
        "prompt_suggestion",
    }
)
_SKIPPED_SYSTEM_SUBTYPES: frozenset[str] = frozenset(
    {
        "status",
        "thinking_tokens",
        "compact_boundary",
        "hook_started",
        "hook_progress",
        "hook_response",
        "task_started",
        "task_progress",
        "task_updated",
        "background_tasks_changed",
        "files_persisted",
        "ui_invalidate",
    }
)

# An assistant ``error`` that is the model stopping at its output limit, not an API failure.
_MODEL_STOP_ERRORS: frozenset[str] = frozenset({"max_output_tokens"})

_SYNTHETIC_MODEL = "<synthetic>"
_CONTEXT_OVERFLOW = re.compile(
    r"prompt is too long|context (window|length) (exceeded|limit)|exceeds? the context window",
    re.IGNORECASE,
)
_SLASH_COMMAND = re.compile(r"\s*/([A-Za-z0-9][\w.:-]*)")
_STDERR_TAIL_CHARS = 500


def parse_stream_json(
    lines: Iterable[str] | str,
    *,
    exit_code: int | None = None,
    stderr: str | None = None,
    source: str = "claude-cli",
    prompt: str | None = None,
) -> Transcript:
    """Turns ``--output-format stream-json --verbose`` output into a transcript.

    The output is read one line at a time: each event is parsed, what the transcript needs is
    kept and the rest is dropped before the next line is read.

    Args:
        lines: The output, as one string or as lines (a file object works); only "\\n" ends a
            line, and each string given ends one too.
        exit_code: The process's exit status, when known.
        stderr: What the process wrote on stderr; its tail explains a failed run.
        source: What produced the output (``claude-cli``, ``replay``...).
        prompt: The prompt the CLI was given: a leading ``/skill-name`` that names a skill the
            harness loaded counts as that skill invoked (the CLI expands it without any event).

    Returns:
        The transcript; malformed lines and unknown events are counted, never raised.
    """
    chunks = [lines] if isinstance(lines, str) else lines
    return _read_events(
        _chunk_lines(chunks), exit_code=exit_code, stderr=stderr, source=source, prompt=prompt
    )


def parse_cli_output(
    text: str,
    *,
    exit_code: int | None = None,
    stderr: str | None = None,
    source: str = "claude-cli",
    prompt: str | None = None,
) -> Transcript:
    """Reads the stdout of ``claude -p`` in whichever output format it was printed.

    The format is recognised from the text: a JSON array is ``--output-format json --verbose``,
    a single JSON object is ``--output-format json``, lines holding JSON objects are
    stream-json, anything else is the plain text format (the final answer only).

    Args:
        text: Everything the process printed on stdout.
        exit_code: The process's exit status, when known.
        stderr: What the process wrote on stderr.
        source: What produced the output.
        prompt: The prompt the CLI was given (see :func:`parse_stream_json`).
    """
    return _read_output(
        _Output(lambda: _text_lines(text), lambda: text),
        exit_code=exit_code,
        stderr=stderr,
        source=source,
        prompt=prompt,
    )


def load_transcript(
    path: str | Path,
    *,
    exit_code: int | None = None,
    stderr: str | None = None,
    source: str = "claude-cli",
    prompt: str | None = None,
) -> Transcript:
    """Reads a saved ``claude -p`` output file in any of its formats (see :func:`parse_cli_output`).

    A stream-json file is read line by line, never whole: its memory is about twice its longest
    line plus what the transcript keeps.

    Raises:
        InputError: the file cannot be read.
    """
    path = Path(path)
    output = _Output(lambda: _file_lines(path), lambda: _file_text(path))
    try:
        return _read_output(
            output, exit_code=exit_code, stderr=stderr, source=source, prompt=prompt
        )
    except FileNotFoundError:
        raise InputError(
            "transcript file not found", location=str(path), fix="check the path"
        ) from None
    except OSError as exc:
        raise InputError(f"cannot read the transcript: {exc}", location=str(path)) from exc


@dataclass(frozen=True)
class _Output:
    """What a process printed, read again from the top as often as recognising it takes."""

    lines: Callable[[], Iterator[str]]
    """Its lines from the first, stripped, blank ones left out."""
    text: Callable[[], str]
    """All of it, for the formats that are one document (plain text, indented JSON)."""


def _read_output(
    output: _Output,
    *,
    exit_code: int | None,
    stderr: str | None,
    source: str,
    prompt: str | None,
) -> Transcript:
    whole = _one_json_document(output)
    if isinstance(whole, list):
        reader = _EventReader()
        for item in whole:
            reader.read_event(item)
        return reader.transcript(exit_code=exit_code, stderr=stderr, source=source, prompt=prompt)
    if isinstance(whole, dict) or _looks_like_stream_json(output.lines()):
        del whole  # read again line by line below: one parsed copy at a time
        return _read_events(
            output.lines(), exit_code=exit_code, stderr=stderr, source=source, prompt=prompt
        )
    return _parse_plain_text(output.text(), exit_code=exit_code, stderr=stderr, source=source)


def _one_json_document(output: _Output) -> Any:
    """The output parsed as one JSON document (what ``json.loads(text.strip())`` gives), or
    ``None`` when it is not one.

    Reads the first two lines only, unless the first is a JSON value cut at the end of the line
    (indented JSON): a JSON string or number never spans lines, so an error inside the first
    line is an error of the whole document, and a value complete on the first line is the whole
    document only when no other line follows.
    """
    lines = output.lines()
    first = next(lines, None)
    if first is None or first[:1] not in ("[", "{"):
        return None
    try:
        value = json.loads(first)
    except json.JSONDecodeError as exc:
        if exc.pos < len(first):
            return None
        del first, lines  # closes the file before it is read whole
        return _loads(output.text().strip())
    except (ValueError, RecursionError):
        return None
    return value if next(lines, None) is None else None


def _read_events(
    lines: Iterable[str],
    *,
    exit_code: int | None,
    stderr: str | None,
    source: str,
    prompt: str | None,
) -> Transcript:
    reader = _EventReader()
    for line in lines:
        reader.read_line(line)
        del line  # not kept while the next line is read
    return reader.transcript(exit_code=exit_code, stderr=stderr, source=source, prompt=prompt)


# Only "\n" ends a line: str.splitlines() (and a text file's universal newlines) would also split
# on "\r", U+2028 and friends, which JSON allows unescaped inside strings. Each generator drops
# its line before reading the next, so that one line at a time is held.


def _text_lines(text: str) -> Iterator[str]:
    """The non-blank lines of ``text``, stripped, without splitting it into a list first."""
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", start)
        if end < 0:
            end = size
        line = text[start:end].strip()
        start = end + 1
        if line:
            yield line
        del line


def _chunk_lines(chunks: Iterable[str]) -> Iterator[str]:
    """The lines of each string in turn; the end of a string ends a line."""
    for chunk in chunks:
        yield from _text_lines(chunk)
        del chunk


def _file_lines(path: Path) -> Iterator[str]:
    """The non-blank lines of a file, stripped, read one at a time."""
    # errors="replace": a process killed mid-write can leave a cut multi-byte character.
    with io.TextIOWrapper(
        open_regular(path, what="the transcript", missing="transcript file not found"),
        encoding="utf-8",
        errors="replace",
        newline="\n",
    ) as file:
        for raw in file:
            line = raw.strip()
            del raw
            if line:
                yield line
            del line


def _file_text(path: Path) -> str:
    with open_regular(path, what="the transcript", missing="transcript file not found") as file:
        return file.read().decode("utf-8", errors="replace")


def stream_events(text: str) -> Iterator[dict[str, Any]]:
    """Each JSON object line of a CLI's stream-json output, in order (other lines skipped)."""
    for line in _text_lines(text):
        event = _loads(line)
        if isinstance(event, dict):
            yield event


def _loads(text: str) -> Any:
    """``text`` parsed as JSON, or ``None`` when it is not JSON (or nested too deep to parse: no
    event the CLI prints is)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _looks_like_stream_json(lines: Iterable[str]) -> bool:
    for line in lines:
        event = _loads(line)
        if isinstance(event, dict) and isinstance(event.get("type"), str):
            return True
        del line, event
    return False


@dataclass
class _ToolCallDraft:
    id: str
    name: str
    input: dict[str, Any]
    parent_tool_use_id: str | None
    result: str | None = None
    is_error: bool = False
    background: str | None = None

    def freeze(self, denied: Collection[str] = ()) -> ToolCall:
        refused = self.id in denied or (
            self.is_error
            and self.result is not None
            and any(marker in self.result for marker in REFUSAL_MARKERS)
        )
        return ToolCall(
            id=self.id,
            name=self.name,
            input=self.input,
            result=self.result,
            is_error=self.is_error,
            parent_tool_use_id=self.parent_tool_use_id,
            refused=refused,
            background=self.background,
        )


_BACKGROUND_ID = re.compile(r"running in background with ID: ([\w-]+)")
_OUTPUT_READERS = frozenset({"BashOutput", "TaskOutput"})
_READ_STATUS = re.compile(r"<status>(\w+)</status>")
_READ_EXIT = re.compile(r"<exit_code>(-?\d+)</exit_code>")


def _read_background_outputs(drafts: list[_ToolCallDraft]) -> None:
    """Gives each background command with no reported end the outcome a later output read
    (``BashOutput``, ``TaskOutput``) showed: exit code 0 or ``completed`` is success."""
    for index, draft in enumerate(drafts):
        if draft.background is not None or draft.input.get("run_in_background") is not True:
            continue
        started = _BACKGROUND_ID.search(draft.result or "")
        if started is None:
            continue
        for later in drafts[index + 1 :]:
            if later.name not in _OUTPUT_READERS or later.is_error or not later.result:
                continue
            if started.group(1) not in later.input.values():
                continue
            code, status = _READ_EXIT.search(later.result), _READ_STATUS.search(later.result)
            if code is not None:
                draft.background = "completed" if code.group(1) == "0" else "failed"
            elif status is not None and status.group(1) in ("completed", "failed", "killed"):
                draft.background = status.group(1)


@dataclass
class _ApiErrorSeen:
    text: str
    status: int | None


@dataclass
class _EventReader:
    """Accumulates events; :meth:`transcript` turns them into the frozen result."""

    events: int = 0
    unknown_events: int = 0
    malformed_lines: int = 0
    tool_calls: dict[str, _ToolCallDraft] = field(default_factory=dict)
    assistant_text: list[str] = field(default_factory=list)
    answer_text: list[str] = field(default_factory=list)
    api_errors: list[_ApiErrorSeen] = field(default_factory=list)
    api_retries: list[ApiRetry] = field(default_factory=list)
    denials: dict[str, PermissionDenial] = field(default_factory=dict)
    results: list[ResultEvent] = field(default_factory=list)
    turn_usages: list[tuple[Usage, float | None] | None] = field(default_factory=list)
    """Per result, its ``model_usage_since_last_result`` summed (``None`` when it had none)."""
    session_usage: Mapping[str, Any] | None = None
    session_cost: float | None = None
    message_usage: dict[str, Usage] = field(default_factory=dict)
    cli_version: str | None = None
    init_model: str | None = None
    answering_model: str | None = None
    answering_models: list[str] = field(default_factory=list)
    session_id: str | None = None
    skills_available: tuple[str, ...] | None = None
    tools_available: tuple[str, ...] | None = None
    stop_reason: str | None = None

    def read_line(self, line: str) -> None:
        event = _loads(line)
        if isinstance(event, dict):
            self.read_event(event)
        else:
            self.malformed_lines += 1

    def read_event(self, event: object) -> None:
        if not isinstance(event, dict):
            self.malformed_lines += 1
            return
        self.events += 1
        if self.session_id is None and isinstance(event.get("session_id"), str):
            self.session_id = event["session_id"]
        kind = _str(event.get("type"))
        if kind == "assistant":
            self._assistant(event)
        elif kind == "user":
            self._user(event)
        elif kind == "result":
            self._result(event)
        elif kind == "system":
            self._system(event)
        elif kind not in _SKIPPED_TYPES:
            self.unknown_events += 1

    def _system(self, event: dict[str, Any]) -> None:
        subtype = _str(event.get("subtype"))
        if subtype == "init":
            self._init(event)
        elif subtype == "api_retry":
            self.api_retries.append(
                ApiRetry(
                    attempt=_int(event.get("attempt")),
                    max_retries=_int(event.get("max_retries")),
                    error=_str(event.get("error")),
                    error_status=_int(event.get("error_status")),
                    retry_delay_ms=_float(event.get("retry_delay_ms")),
                )
            )
        elif subtype == "task_notification":
            # A background command's end: how it exited is known only from this.
            draft = self.tool_calls.get(_str(event.get("tool_use_id")) or "")
            if draft is not None:
                draft.background = _str(event.get("status")) or "ended"
        elif subtype == "permission_denied":
            tool_use_id = _str(event.get("tool_use_id"))
            draft = self.tool_calls.get(tool_use_id) if tool_use_id else None
            self._deny(
                PermissionDenial(
                    tool_name=_str(event.get("tool_name")) or (draft.name if draft else "?"),
                    tool_use_id=tool_use_id,
                    tool_input=dict(draft.input) if draft else {},
                ),
                prefer=False,
            )
        elif subtype not in _SKIPPED_SYSTEM_SUBTYPES:
            self.unknown_events += 1

    def _init(self, event: dict[str, Any]) -> None:
        # Later inits (one per turn, or after a background task) repeat the first one.
        self.cli_version = self.cli_version or _str(event.get("claude_code_version"))
        self.init_model = self.init_model or _str(event.get("model"))
        if self.skills_available is None and isinstance(event.get("skills"), list):
            self.skills_available = _strings(event["skills"])
        if self.tools_available is None and isinstance(event.get("tools"), list):
            self.tools_available = _strings(event["tools"])

    def _assistant(self, event: dict[str, Any]) -> None:
        message = event.get("message")
        if not isinstance(message, dict):
            self.unknown_events += 1
            return
        blocks = content_blocks(message.get("content"))
        if _is_api_error_message(event, message):
            texts = [b["text"] for b in blocks if b.get("type") == "text" and _str(b.get("text"))]
            text = "\n".join(texts) or f"API Error: {event.get('error')}"
            self.api_errors.append(_ApiErrorSeen(text, _int(event.get("api_error_status"))))
            return
        model = _str(message.get("model"))
        if model:
            self.answering_model = model
            if model not in self.answering_models:
                self.answering_models.append(model)
        message_id = _str(message.get("id"))
        if message_id and "usage" in message:
            self.message_usage[message_id] = Usage.from_mapping(message.get("usage"))
        stop_reason = _str(message.get("stop_reason"))
        if stop_reason:
            self.stop_reason = stop_reason
        parent = _str(event.get("parent_tool_use_id"))
        for block in blocks:
            block_type = block.get("type")
            if block_type == "text":
                block_text = _str(block.get("text"))
                if block_text and block_text.strip():
                    self.assistant_text.append(block_text)
                    if parent is None:
                        self.answer_text.append(block_text)
            elif block_type in ("tool_use", "server_tool_use", "mcp_tool_use"):
                self._tool_use(block, parent)

    def _tool_use(self, block: Mapping[str, Any], parent: str | None) -> None:
        tool_id = _str(block.get("id")) or f"tool_{len(self.tool_calls) + 1}"
        if tool_id in self.tool_calls:
            return
        arguments = block.get("input")
        self.tool_calls[tool_id] = _ToolCallDraft(
            id=tool_id,
            name=_str(block.get("name")) or "?",
            input=dict(arguments) if isinstance(arguments, dict) else {},
            parent_tool_use_id=parent,
        )

    def _user(self, event: dict[str, Any]) -> None:
        message = event.get("message")
        if not isinstance(message, dict):
            return
        for block in content_blocks(message.get("content")):
            if block.get("type") != "tool_result":
                continue
            draft = self.tool_calls.get(_str(block.get("tool_use_id")) or "")
            if draft is not None:
                draft.result = _result_text(block.get("content"))
                draft.is_error = block.get("is_error") is True

    def _result(self, event: dict[str, Any]) -> None:
        origin = event.get("origin")
        self.results.append(
            ResultEvent(
                subtype=_str(event.get("subtype")) or "unknown",
                is_error=event.get("is_error") is True,
                result=_str(event.get("result")),
                num_turns=_int(event.get("num_turns")),
                total_cost_usd=_float(event.get("total_cost_usd")),
                duration_ms=_float(event.get("duration_ms")),
                usage=Usage.from_mapping(event.get("usage")),
                errors=_strings(event.get("errors")),
                terminal_reason=_str(event.get("terminal_reason")),
                api_error_status=_int(event.get("api_error_status")),
                api_error_type=_str(event.get("api_error_type")),
                api_error=_str(event.get("api_error")),
                origin=_str(origin.get("kind")) if isinstance(origin, dict) else None,
            )
        )
        since_last = event.get("model_usage_since_last_result")
        self.turn_usages.append(_model_usage(since_last) if isinstance(since_last, dict) else None)
        if isinstance(event.get("modelUsage"), dict) and event["modelUsage"]:
            self.session_usage = event["modelUsage"]
        cost = _float(event.get("total_cost_usd"))
        if cost is not None:
            self.session_cost = cost
        stop_reason = _str(event.get("stop_reason"))
        if stop_reason:
            self.stop_reason = stop_reason
        denials = event.get("permission_denials")
        for denial in denials if isinstance(denials, list) else []:
            if isinstance(denial, dict):
                arguments = denial.get("tool_input")
                self._deny(
                    PermissionDenial(
                        tool_name=_str(denial.get("tool_name")) or "?",
                        tool_use_id=_str(denial.get("tool_use_id")),
                        tool_input=dict(arguments) if isinstance(arguments, dict) else {},
                    ),
                    prefer=True,
                )

    def _deny(self, denial: PermissionDenial, *, prefer: bool) -> None:
        # The system event and the result both report a denial; the result's copy carries the
        # arguments as the harness resolved them, so it wins, in the order first seen.
        key = denial.tool_use_id or f"{denial.tool_name} {json.dumps(denial.tool_input)}"
        if key not in self.denials or prefer:
            self.denials[key] = denial

    def transcript(
        self, *, exit_code: int | None, stderr: str | None, source: str, prompt: str | None
    ) -> Transcript:
        denied = {denial.tool_use_id for denial in self.denials.values() if denial.tool_use_id}
        _read_background_outputs(list(self.tool_calls.values()))
        tool_calls = tuple(draft.freeze(denied) for draft in self.tool_calls.values())
        usage, cost = self._usage_and_cost()
        assistant_text = tuple(self.assistant_text)
        answer_text = tuple(self.answer_text)
        final = self.results[-1] if self.results else None
        if not assistant_text and final and not final.is_error and final.result:
            # The ``json`` format has no assistant messages: the final answer stands in.
            assistant_text = answer_text = (final.result,)
        durations = [r.duration_ms for r in self.results if r.duration_ms is not None]
        return Transcript(
            source=source,
            assistant_text=assistant_text,
            answer_text=answer_text,
            tool_calls=tool_calls,
            skills_invoked=self._skills_invoked(tool_calls, prompt),
            permission_denials=tuple(self.denials.values()),
            api_errors=tuple(self._api_error_texts()),
            api_retries=tuple(self.api_retries),
            results=tuple(self.results),
            usage=usage,
            cost_usd=cost,
            model=self.init_model or self.answering_model or _first_key(self.session_usage),
            api_models=tuple(self.answering_models),
            cli_version=self.cli_version,
            session_id=self.session_id,
            stop_reason=self.stop_reason,
            exit_code=exit_code,
            latency_ms=sum(durations) if durations else None,
            unknown_events=self.unknown_events,
            malformed_lines=self.malformed_lines,
            error=self._run_error(exit_code, stderr),
            ended=self._ended(),
            skills_available=self.skills_available or (),
            tools_available=self.tools_available or (),
        )

    def _usage_and_cost(self) -> tuple[Usage, float | None]:
        if self.turn_usages and all(turn is not None for turn in self.turn_usages):
            usage, cost = Usage(), None
            for turn in self.turn_usages:
                turn_usage, turn_cost = turn or (Usage(), None)
                usage += turn_usage
                if turn_cost is not None:
                    cost = (cost or 0.0) + turn_cost
            return usage, cost if cost is not None else self.session_cost
        if self.session_usage:
            return _model_usage(self.session_usage)[0], self.session_cost
        if self.results:
            return sum((r.usage for r in self.results), Usage()), self.session_cost
        return sum(self.message_usage.values(), Usage()), None

    def _skills_invoked(
        self, tool_calls: tuple[ToolCall, ...], prompt: str | None
    ) -> tuple[str, ...]:
        names: list[str] = []
        if prompt and self.skills_available:
            match = _SLASH_COMMAND.match(prompt)
            if match and match.group(1) in self.skills_available:
                names.append(match.group(1))
        for call in tool_calls:
            # A refused or failed Skill call (unknown skill, permission) loaded nothing.
            if call.name != SKILL_TOOL or call.is_error:
                continue
            name = _str(call.input.get("skill")) or _str(call.input.get("command"))
            if name:
                names.append(name.lstrip("/"))
        return tuple(dict.fromkeys(names))

    def _context_overflow(self) -> str | None:
        """The API's refusal of a conversation that outgrew the context window, when it came.

        The agent filled its own context (huge tool results, a loop): that is behaviour, so the
        run is scored on what it did rather than left unscored like an outage.
        """
        for text in self._api_error_texts():
            if _CONTEXT_OVERFLOW.search(text):
                return text
        return None

    def _ended(self) -> str | None:
        overflow = self._context_overflow()
        if overflow is not None:
            return f"its context was full ({overflow.strip()[:120]})"
        final = self.results[-1] if self.results else None
        if final is not None and final.subtype == "error_max_turns":
            return "it ran out of turns (--max-turns)"
        if final is not None and final.subtype == "error_max_budget_usd":
            return "it ran out of budget (--max-budget-usd)"
        return None

    def _api_error_texts(self) -> list[str]:
        texts = [seen.text for seen in self.api_errors]
        for result in self.results:
            if _is_api_failure(result) and result.result and result.result not in texts:
                texts.append(result.result)
        return texts

    def _run_error(self, exit_code: int | None, stderr: str | None) -> str | None:
        after = _exit_and_stderr(exit_code, stderr)
        if self.events == 0:
            return "the CLI printed no stream-json events" + after
        if self._context_overflow() is not None:
            return None  # the agent filled its context: behaviour, scored (see ``ended``)
        api_failure = next((r for r in self.results if _is_api_failure(r)), None)
        if self.api_errors or api_failure is not None:
            first = self.api_errors[0] if self.api_errors else _ApiErrorSeen("", None)
            text = first.text or (api_failure.result if api_failure else None)
            status = first.status
            if status is None and api_failure is not None:
                status = api_failure.api_error_status
            details = [f"HTTP {status}"] if status is not None else []
            if self.api_retries:
                count = len(self.api_retries)
                details.append(f"after {count} {'retry' if count == 1 else 'retries'}")
            suffix = f" ({', '.join(details)})" if details else ""
            return f"model API error: {text or 'no message'}{suffix}"
        for result in self.results:
            scored = result.subtype in BUDGET_SUBTYPES or (
                result.subtype == "success" and not result.is_error
            )
            if not scored:
                detail = "; ".join(result.errors) or result.result or "no message"
                if result.subtype == "error_during_execution":
                    return f"the CLI failed during execution: {detail}"
                return f"the CLI ended with {result.subtype}: {detail}"
        if not self.results:
            return "the CLI stopped without a result event" + after
        return None


def _parse_plain_text(
    text: str, *, exit_code: int | None, stderr: str | None, source: str
) -> Transcript:
    answer = text.strip()
    error: str | None = None
    api_errors: tuple[str, ...] = ()
    # The text format prints only the final answer, or the API error in its place.
    if "\n" not in answer and "API Error" in answer and (exit_code is None or exit_code != 0):
        api_errors = (answer,)
        error = f"model API error: {answer}"
    elif exit_code not in (None, 0):
        first_line = answer.splitlines()[0] if answer else "no output"
        error = f"the CLI exited with status {exit_code}: {first_line}" + _exit_and_stderr(
            None, stderr
        )
    elif not answer:
        error = "the CLI printed nothing" + _exit_and_stderr(exit_code, stderr)
    return Transcript(
        source=source,
        assistant_text=(answer,) if answer and not api_errors else (),
        api_errors=api_errors,
        exit_code=exit_code,
        error=error,
    )


def _is_api_error_message(event: dict[str, Any], message: dict[str, Any]) -> bool:
    if event.get("is_api_error_message") is True:
        return True
    error = event.get("error")
    if isinstance(error, str) and error and error not in _MODEL_STOP_ERRORS:
        return True
    return message.get("model") == _SYNTHETIC_MODEL and bool(error)


def _is_api_failure(result: ResultEvent) -> bool:
    """A result that reports a failed model request rather than an agent outcome."""
    if result.subtype in BUDGET_SUBTYPES or not result.is_error:
        return False
    return (
        result.terminal_reason == "api_error"
        or result.api_error_status is not None
        or result.api_error is not None
        or (result.subtype == "success" and (result.result or "").lstrip().startswith("API Error"))
    )


def _model_usage(per_model: Mapping[str, Any]) -> tuple[Usage, float | None]:
    usage, cost = Usage(), None
    for counts in per_model.values():
        if not isinstance(counts, dict):
            continue
        usage += Usage.from_mapping(
            {
                "input_tokens": counts.get("inputTokens"),
                "output_tokens": counts.get("outputTokens"),
                "cache_creation_input_tokens": counts.get("cacheCreationInputTokens"),
                "cache_read_input_tokens": counts.get("cacheReadInputTokens"),
            }
        )
        model_cost = _float(counts.get("costUSD"))
        if model_cost is not None:
            cost = (cost or 0.0) + model_cost
    return usage, cost


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content_blocks(content):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "image":
            parts.append("[image]")
    return "\n".join(parts)


def _exit_and_stderr(exit_code: int | None, stderr: str | None) -> str:
    text = f" (exit status {exit_code})" if exit_code is not None else ""
    tail = (stderr or "").strip()[-_STDERR_TAIL_CHARS:]
    if tail:
        text += f"; stderr: {tail}"
    return text


def content_blocks(content: object) -> list[Mapping[str, Any]]:
    """The blocks of a Messages API message's ``content``: a string is one text block, and
    what is not a block is left out."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, Sequence):
        return [block for block in content if isinstance(block, Mapping)]
    return []


def _first_key(mapping: Mapping[str, Any] | None) -> str | None:
    return next(iter(mapping), None) if mapping else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str))
