"""What a rule can see of one Messages API request, extracted once and matched many times.

Claude Code 2.1.328 shapes its requests in ways a rule author should not have to know:

* the first user message starts with ``<system-reminder>`` blocks (git attribution, ...);
* the environment section and the skill listing travel in a message with role ``system``
  (``The following skills are available for use with the Skill tool:`` then ``- NAME: ...``);
* after a ``Skill`` tool call, the tool result says ``Launching skill: NAME`` and the SKILL.md
  body follows in the same user message as a text block starting ``Base directory for this
  skill:``; a ``/NAME`` slash command is expanded by the CLI into ``<command-name>/NAME
  </command-name>`` plus that body.

Codex 0.171.0 lists skills in a developer message under ``### Available skills`` (``- NAME:
DESCRIPTION (file: PATH)``), OpenCode 1.18.33 in its system prompt as ``<available_skills>``
(``<skill><name>``, ``<description>``, ``<location>``), Gemini CLI 0.61.0 the same way under
``# Available Agent Skills``; a skill listed so is loaded when a tool call reads its
``SKILL.md``, or when OpenCode's ``skill`` tool or Gemini CLI's ``activate_skill`` loads it by
name.

A Responses or Chat Completions request is first rewritten into the Messages shape
(:mod:`skilltest.emulator.openai_requests`); :class:`RequestView` hides all of it behind plain
fields, whichever API the request came in.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from skilltest.emulator.openai_requests import as_messages_request
from skilltest.emulator.side_requests import SideRequestKind, classify_side_request
from skilltest.model_apis import AgentName, ApiFamily
from skilltest.transcript.stream_json import content_blocks

_REMINDER = regex.compile(r"<system-reminder>.*?</system-reminder>\s*", regex.DOTALL)
_SKILL_LISTING_HEADER = "The following skills are available for use with the Skill tool:"
_LISTED_SKILL = regex.compile(r"^- ([^\s:][^\n]*?): ", regex.MULTILINE)
_SKILL_BODY_PREFIX = "Base directory for this skill:"
_SKILL_BODY_DIR = regex.compile(r"^Base directory for this skill: (?P<dir>[^\n]+)")
_COMMAND_NAME = regex.compile(r"<command-name>/?(?P<name>[^<\s]+)</command-name>")
_FILE_LISTING_HEADER = "### Available skills"
_SKILL_TOOLS = ("skill", "activate_skill")
"""The tools that load a listed skill by its name: OpenCode's ``skill``, Gemini CLI's
``activate_skill``."""
_FILE_LISTED_SKILL = regex.compile(r"^- ([^\s:][^\n]*?): (.*?)(?: \(file: [^\n()]*\))?$")
_XML_LISTED_SKILL = regex.compile(
    r"<skill>\s*<name>(?P<name>[^<]+)</name>\s*<description>(?P<description>.*?)</description>",
    regex.DOTALL,
)


@dataclass(frozen=True)
class RequestView:
    """The parts of a Messages request that rules match on."""

    model: str
    """Model the client asked for."""
    system_text: str
    """Top-level system blocks and role-``system`` messages, joined by newlines."""
    user_text: str
    """Latest user-authored text (no reminders, tool results or injected skill bodies)."""
    all_text: str
    """Every piece of text in the request, joined by newlines."""
    turn: int
    """Which assistant response this is: assistant messages in the request + 1."""
    tool_result_text: str | None
    """Tool results in the last user message, joined; ``None`` when it has none."""
    tool_names: tuple[str, ...]
    """Names of the tools the request offers."""
    skills_listed: frozenset[str]
    """Skills the agent is told are available."""
    skill_listing: tuple[tuple[str, str], ...]
    """``(name, description)`` of every listed skill, in listing order (the latest listing of a
    name wins)."""
    skills_loaded: frozenset[str]
    """Skills whose body was injected into the conversation."""
    side_request: SideRequestKind | None
    """Which Claude Code side request this is, or ``None`` for a main request."""
    api: ApiFamily = "anthropic"
    """The API the request came in."""
    agent: AgentName | None = None
    """The agent that sent it, as its headers say; ``None`` when they do not say."""

    @classmethod
    def from_body(
        cls,
        body: Mapping[str, Any],
        *,
        api: ApiFamily = "anthropic",
        agent: AgentName | None = None,
    ) -> RequestView:
        """Extracts the view from a parsed request body of ``api`` (by default a ``POST
        /v1/messages`` body); ``agent`` is who sent it, when its headers say."""
        body = as_messages_request(api, body)
        messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
        system_parts = list(_text_of(body.get("system")))
        for message in messages:
            if message.get("role") == "system":
                system_parts.extend(_text_of(message.get("content")))
        system_text = "\n".join(system_parts)
        tools = tuple(
            str(tool.get("name"))
            for tool in body.get("tools") or []
            if isinstance(tool, Mapping) and tool.get("name")
        )
        listing = dict(_listed_skills(system_parts, messages))
        # Claude Code's requests keep their one listing format; the other agents (OpenCode
        # speaks the Messages API too, and says who it is) may list by file.
        by_file = (
            dict(_skills_listed_by_file(system_parts))
            if api != "anthropic" or agent not in (None, "claude-code")
            else {}
        )
        listing.update(by_file)
        loaded = set(_loaded_skills(messages)) | set(_skills_read(messages, by_file))
        return cls(
            model=str(body.get("model") or ""),
            system_text=system_text,
            user_text=_latest_user_text(messages),
            all_text="\n".join([system_text, *_all_message_text(messages)]),
            turn=1 + sum(1 for m in messages if m.get("role") == "assistant"),
            tool_result_text=_last_tool_results(messages),
            tool_names=tools,
            skills_listed=frozenset(listing),
            skill_listing=tuple(listing.items()),
            skills_loaded=frozenset(loaded),
            side_request=classify_side_request(body),
            api=api,
            agent=agent,
        )


def _text_of(content: object) -> Iterable[str]:
    """Text of a ``system`` value or message content (text blocks only)."""
    for block in content_blocks(content):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            yield block["text"]


def _tool_result_text(block: Mapping[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(_text_of(content))


def _all_message_text(messages: Sequence[Mapping[str, Any]]) -> Iterable[str]:
    for message in messages:
        if message.get("role") == "system":
            continue  # already part of the system text
        for block in content_blocks(message.get("content")):
            kind = block.get("type")
            if kind == "text":
                yield str(block.get("text", ""))
            elif kind == "thinking":
                yield str(block.get("thinking", ""))
            elif kind == "tool_use":
                yield json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
            elif kind == "tool_result":
                yield _tool_result_text(block)


def _user_authored(message: Mapping[str, Any]) -> list[str]:
    """Text a person wrote in one user message; harness-injected text is left out."""
    blocks = content_blocks(message.get("content"))
    if any(block.get("type") == "tool_result" for block in blocks):
        return []  # text next to tool results is injected by the harness (skill bodies, hooks)
    parts = []
    for text in _text_of(blocks):
        text = _REMINDER.sub("", text).strip()
        if text and not text.startswith(_SKILL_BODY_PREFIX):
            parts.append(text)
    return parts


def _latest_user_text(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            parts = _user_authored(message)
            if parts:
                return "\n".join(parts)
    return ""


def _last_tool_results(messages: Sequence[Mapping[str, Any]]) -> str | None:
    for message in reversed(messages):
        if message.get("role") == "system":
            continue
        if message.get("role") != "user":
            return None
        results = [
            _tool_result_text(block)
            for block in content_blocks(message.get("content"))
            if block.get("type") == "tool_result"
        ]
        return "\n".join(results) if results else None
    return None


def _listed_skills(
    system_parts: Sequence[str], messages: Sequence[Mapping[str, Any]]
) -> Iterable[tuple[str, str]]:
    """``(name, description)`` per listing line; a line that is not ``- NAME: ...`` continues
    the description above it (a description written over several lines)."""
    texts = list(system_parts)
    for message in messages:
        if message.get("role") == "user":
            texts.extend(_text_of(message.get("content")))
    for text in texts:
        start = text.find(_SKILL_LISTING_HEADER)
        while start >= 0:
            listing = text[start + len(_SKILL_LISTING_HEADER) :].lstrip("\n")
            end = listing.find("\n\n")
            name: str | None = None
            lines: list[str] = []
            for line in (listing if end < 0 else listing[:end]).splitlines():
                match = _LISTED_SKILL.match(line)
                if match:
                    if name is not None:
                        yield name, " ".join(lines)
                    name, lines = match.group(1), [line[match.end() :].strip()]
                elif name is not None:
                    lines.append(line.strip())
            if name is not None:
                yield name, " ".join(lines)
            start = text.find(_SKILL_LISTING_HEADER, start + 1)


def _loaded_skills(messages: Sequence[Mapping[str, Any]]) -> Iterable[str]:
    skill_calls: dict[str, str] = {}
    for message in messages:
        for block in content_blocks(message.get("content")):
            kind = block.get("type")
            if kind == "tool_use" and block.get("name") == "Skill":
                tool_input = block.get("input")
                if isinstance(tool_input, Mapping) and isinstance(tool_input.get("skill"), str):
                    skill_calls[str(block.get("id"))] = tool_input["skill"].lstrip("/")
            elif kind == "tool_result" and str(block.get("tool_use_id")) in skill_calls:
                text = _tool_result_text(block)
                if not block.get("is_error") and "<tool_use_error>" not in text:
                    yield skill_calls[str(block.get("tool_use_id"))]
            elif kind == "text" and message.get("role") == "user":
                text = str(block.get("text", ""))
                for match in _COMMAND_NAME.finditer(text):
                    yield match.group("name")
                body = _SKILL_BODY_DIR.match(text)
                if body:
                    yield body.group("dir").rstrip("/").rsplit("/", 1)[-1]


def _skills_listed_by_file(system_parts: Sequence[str]) -> Iterable[tuple[str, str]]:
    """``(name, description)`` of each skill listed with the file the agent reads to load it
    (Codex: ``### Available skills`` then ``- NAME: DESCRIPTION (file: PATH)`` lines; OpenCode:
    ``<available_skills>`` of ``<skill>`` entries)."""
    for text in system_parts:
        if "<available_skills>" in text:
            for entry in _XML_LISTED_SKILL.finditer(text):
                description = " ".join(html.unescape(entry.group("description")).split())
                yield html.unescape(entry.group("name")).strip(), description
        start = text.find(_FILE_LISTING_HEADER)
        if start < 0:
            continue
        for line in text[start + len(_FILE_LISTING_HEADER) :].lstrip("\n").splitlines():
            match = _FILE_LISTED_SKILL.match(line)
            if match is None:
                break
            yield match.group(1), match.group(2).strip()


def _skills_read(messages: Sequence[Mapping[str, Any]], listed: Mapping[str, str]) -> Iterable[str]:
    """Skills listed by file whose ``SKILL.md`` a tool call read, or that a ``skill`` tool call
    named (Gemini CLI's ``activate_skill``), and that got an answer (a result that does not say
    the file is missing)."""
    if not listed:
        return
    reads: dict[str, list[str]] = {}
    for message in messages:
        for block in content_blocks(message.get("content")):
            if block.get("type") == "tool_use":
                given = block.get("input")
                called = json.dumps(given, ensure_ascii=False)
                names = [name for name in listed if f"{name}/SKILL.md" in called]
                if block.get("name") in _SKILL_TOOLS and isinstance(given, Mapping):
                    names += [name for name in listed if name == given.get("name")]
                if names:
                    reads[str(block.get("id"))] = names
            elif block.get("type") == "tool_result" and str(block.get("tool_use_id")) in reads:
                text = _tool_result_text(block)
                if not block.get("is_error") and "No such file" not in text:
                    yield from reads[str(block.get("tool_use_id"))]
