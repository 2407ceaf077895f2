"""What a run looks like to Claude Code's ``claude plugin eval`` graders, read from its events.

Checks written ``dialect: plugin_eval`` (every grader of an eval case is) read the run the way
the pinned CLI (2.1.328) grades its own runs, so a case scores the same here and there:

* **the trace** is every stream-json event of the run as compact JSON (``JSON.stringify``), one
  a line (:func:`trace_lines`);
* **the tool calls** are every ``tool_use`` block the model wrote, refused and failed ones and a
  subagent's included, by the name written, with its input as compact JSON
  (:func:`written_calls`);
* **the last message** is the text of the last assistant message that had text, its blocks
  joined by newlines (:func:`last_message`);
* **the files** are the paths of the files the run created (not those it only changed), sorted,
  one a line (:func:`created_paths`), and ``file_exists`` paths are globs over that list
  (:func:`glob_pattern`);
* **a judge** is asked three times with the CLI's own prompt and votes PASS when its answer says
  PASS and not FAIL (:func:`llm_prompt`, :func:`baseline_prompt`, :func:`vote`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skilltest.javascript import js_json

JUDGE_SYSTEM = "You are a strict, terse evaluation judge for coding-agent traces."
"""The judge's system prompt, as the CLI sends it (a model script's rule matches it)."""

VOTES = 3
"""The CLI asks its judge this many times; the majority decides."""

RESPOND = "Respond with exactly one word: PASS or FAIL."

TRACE_SHOWN = 12
"""A judge sees this many events from each end of a longer trace."""

EVIDENCE_HEAD, EVIDENCE_TAIL = 80_000, 20_000
"""How much of a long text a judge sees: its start and its end."""

LONG_FILE = 8000
"""A file longer than this gets the CLI's note that judges are noisy on long inputs."""

_PASS = re.compile(r"\bPASS\b", re.IGNORECASE)
_FAIL = re.compile(r"\bFAIL\b", re.IGNORECASE)

# File signatures of the images the CLI shows its judge as images (PNG, JPEG, GIF, WebP).
_IMAGES: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
)


@dataclass(frozen=True)
class WrittenCall:
    """One ``tool_use`` block as the CLI's graders see it."""

    name: str
    """The tool's name as written (``mcp__plugin_x_srv__tool``, ``Task``...)."""
    input: Any
    """Its input."""
    input_text: str
    """Its input as compact JSON, what ``input_match`` is tried on."""


def _content(event: Mapping[str, Any], block_type: str) -> list[Mapping[str, Any]]:
    """The blocks of ``block_type`` in an event's message content."""
    message = event.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    return [
        block
        for block in (content if isinstance(content, list) else ())
        if isinstance(block, Mapping) and block.get("type") == block_type
    ]


def _blocks(
    events: Iterable[Mapping[str, Any]], event_type: str, block_type: str
) -> Iterator[Mapping[str, Any]]:
    """The blocks of ``block_type`` in every event of ``event_type``, in order."""
    for event in events:
        if event.get("type") == event_type:
            yield from _content(event, block_type)


def written_calls(events: Iterable[Mapping[str, Any]]) -> list[WrittenCall]:
    """Every ``tool_use`` block of every assistant event, in order."""
    calls = []
    for block in _blocks(events, "assistant", "tool_use"):
        value = block.get("input")
        calls.append(WrittenCall(str(block.get("name") or ""), value, js_json(value)))
    return calls


def last_message(events: Iterable[Mapping[str, Any]]) -> str:
    """The text blocks of the last main-agent assistant event that had any, joined by
    newlines (a subagent's text, which the CLI's own runs do not print, is left out)."""
    last = ""
    for event in events:
        if event.get("type") != "assistant" or event.get("parent_tool_use_id"):
            continue
        texts = [str(block.get("text") or "") for block in _content(event, "text")]
        if texts:
            last = "\n".join(texts)
    return last


def trace_lines(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """Each event as compact JSON."""
    return [js_json(event) for event in events]


def trace_text(events: Sequence[Mapping[str, Any]]) -> str:
    """The trace a ``trace`` target reads: every event, one a line."""
    return "\n".join(trace_lines(events))


_VOLATILE = re.compile(r"_ms$|^messaging_socket_path$")
"""Keys of an event whose values differ between two runs of one conversation (timings, the
CLI's socket, named after its process id)."""


def steady(value: Any) -> Any:
    """An event without its timings and its CLI socket: what a judge reads, so that two runs of
    one conversation ask the judge the same (and its votes replay from a cassette; ids, dates and
    paths are already what a cassette matches loosely)."""
    if isinstance(value, Mapping):
        return {k: steady(v) for k, v in value.items() if not _VOLATILE.search(str(k))}
    if isinstance(value, list):
        return [steady(v) for v in value]
    return value


def elided_trace(events: Sequence[Any]) -> str:
    """The trace a judge reads: every event of a short trace; of a long one the first and last
    :data:`TRACE_SHOWN`, with how many were left out between (each without its timings)."""
    lines = [js_json(steady(event)) for event in events]
    if len(lines) <= 2 * TRACE_SHOWN:
        return "\n".join(lines)
    left_out = len(lines) - 2 * TRACE_SHOWN
    return "\n".join(
        [*lines[:TRACE_SHOWN], f"[…{left_out} messages elided…]", *lines[-TRACE_SHOWN:]]
    )


def created_paths(before: Iterable[str], after: Iterable[str]) -> list[str]:
    """The paths in ``after`` that were not in ``before``, sorted."""
    seen = set(before)
    return sorted(path for path in after if path not in seen)


def glob_pattern(glob: str) -> re.Pattern[str]:
    """A ``file_exists`` path as the CLI reads it: ``*`` within a folder, ``**`` across
    folders (``**/`` also none), ``?`` one character, anchored at both ends."""
    out = "^"
    index = 0
    while index < len(glob):
        char = glob[index]
        if char == "*":
            if glob.startswith("**/", index):
                out += "(?:.*/)?"
                index += 3
                continue
            if glob.startswith("**", index):
                out += ".*"
                index += 2
                continue
            out += "[^/]*"
        elif char == "?":
            out += "."
        else:
            out += re.escape(char)
        index += 1
    return re.compile(out + "$")


def image_type(data: bytes) -> str | None:
    """The media type of a PNG, JPEG, GIF or WebP file, else ``None``."""
    for signature, offset, media in _IMAGES:
        if data[offset : offset + len(signature)] == signature:
            return media
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def elide(text: str) -> str:
    """A long text as a judge sees it: its start and its end."""
    if len(text) <= EVIDENCE_HEAD + EVIDENCE_TAIL:
        return text
    left_out = len(text) - EVIDENCE_HEAD - EVIDENCE_TAIL
    return f"{text[:EVIDENCE_HEAD]}\n[…{left_out} chars elided…]\n{text[-EVIDENCE_TAIL:]}"


def llm_prompt(criteria: str, focus: str, text: str) -> str:
    """The user message of an ``llm`` grader's votes, as the CLI writes it."""
    return (
        "You are grading the output of a coding agent against a criterion.\n\n"
        f"Criterion:\n{criteria}\n\n\nAgent output ({focus}):\n{elide(text)}\n\n\n{RESPOND}"
    )


def baseline_prompt(criteria: str, baseline: Sequence[Any], events: Sequence[Any]) -> str:
    """The user message of a ``baseline`` grader's votes, as the CLI writes it."""
    return "\n\n".join(
        [
            "You are comparing a NEW coding-agent trajectory against a BASELINE.",
            f"Criterion:\n{criteria}",
            f"\nBASELINE trajectory:\n{elided_trace(baseline)}",
            f"\nNEW trajectory:\n{elided_trace(events)}",
            "\nDoes the NEW trajectory satisfy the criterion at least as well as the BASELINE?",
            RESPOND,
        ]
    )


def vote(answer: str) -> bool:
    """One judge answer as the CLI reads it: PASS when it says PASS and not FAIL."""
    return bool(_PASS.search(answer)) and not _FAIL.search(answer)


def read_trajectory(text: str) -> list[Any]:
    """A baseline file: one JSON value a line, blank lines skipped.

    Raises:
        ValueError: a line that is not JSON.
    """
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def tool_results(events: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, bool]]:
    """Each tool result's text and error flag, by the id of the call it answers."""
    found: dict[str, tuple[str, bool]] = {}
    for block in _blocks(events, "user", "tool_result"):
        body = block.get("content")
        if isinstance(body, list):
            body = "\n".join(
                str(part.get("text") or "")
                for part in body
                if isinstance(part, Mapping) and part.get("type") == "text"
            )
        found[str(block.get("tool_use_id"))] = (str(body or ""), bool(block.get("is_error")))
    return found


def mock_calls_text(
    events: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]]
) -> str:
    """The calls a ``mock_calls`` target reads: each call of a mocked tool that reached its mock,
    as ``{"tool", "input", "output", "isError", "verdict"}``, one a line.

    Args:
        events: The run's stream-json events.
        records: The mock servers' call records (``registered``, ``tool``, ``verdict``).
    """
    waiting: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for record in records:
        key = (str(record.get("registered")), str(record.get("tool")))
        waiting.setdefault(key, []).append(record)
    results = tool_results(events)
    lines = []
    for block in _blocks(events, "assistant", "tool_use"):
        name = str(block.get("name") or "")
        parts = name.split("__", 2)
        if len(parts) != 3 or parts[0] != "mcp":
            continue
        queue = waiting.get((parts[1], parts[2]))
        if not queue:
            continue  # refused before it reached the mock: not a mock call
        record = queue.pop(0)
        entry: dict[str, Any] = {"tool": name, "input": block.get("input")}
        result = results.get(str(block.get("id")))
        if result is not None:
            entry["output"] = result[0]
            if result[1]:
                entry["isError"] = True
        entry["verdict"] = record.get("verdict")
        lines.append(js_json(entry))
    return "\n".join(lines)
