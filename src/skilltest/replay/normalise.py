"""What identifies a request in a cassette: what the model sees, with volatile parts replaced.

Two runs of the same scenario and arm send the same conversation, but not the same bytes: the
sandbox has a fresh random folder, the CLI makes up a session id and tool_use ids, the system
prompt carries today's date and a git status. :func:`normalise_request` keeps what the model sees
(model, system prompt, messages, tools, tool choice, sampling parameters) and replaces each of
those volatile parts by a placeholder, one named rule at a time (:data:`BUILTIN_RULES`, each
described in ``docs/replay.md``); :func:`fingerprint` hashes the result. A suite adds its own
rules under ``replay:`` (:class:`~skilltest.replay.rules.Rules`). Everything here is pure: no
I/O, no clock, no environment (a suite's ``$VARIABLE`` redactions are read once, when the suite
is loaded).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from skilltest.model_apis import ApiFamily, api_of_path
from skilltest.redact import map_strings, redactor_of
from skilltest.replay.rules import Rules as Rules

KEPT_FIELDS = (
    "model",
    "system",
    "messages",
    "tools",
    "tool_choice",
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "stop_sequences",
    "thinking",
    "output_config",
    "context_management",
)
"""The request fields that shape the answer, in the order a normalised request lists them.
``output_config`` (the effort) and ``context_management`` (what the API clears from the context)
change what the model does as much as a sampling parameter; ``metadata``, ``stream`` and anything
else do not."""

RESPONSES_FIELDS = (
    "model",
    "instructions",
    "input",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "reasoning",
    "include",
    "text",
    "temperature",
    "top_p",
    "max_output_tokens",
    "max_tool_calls",
    "truncation",
    "previous_response_id",
)
"""The fields of a Responses API request (``POST /v1/responses``) that shape the answer; the
others (``stream``, ``store``, ``prompt_cache_key``, ``client_metadata``, ``metadata``, ...)
do not."""

CHAT_FIELDS = (
    "model",
    "messages",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "stop",
    "response_format",
    "reasoning_effort",
    "seed",
    "n",
    "frequency_penalty",
    "presence_penalty",
)
"""The fields of a Chat Completions request (``POST /v1/chat/completions``) that shape the
answer; ``stream``, ``stream_options``, ``user`` and ``metadata`` do not."""

GEMINI_FIELDS = (
    "model",
    "contents",
    "systemInstruction",
    "tools",
    "toolConfig",
    "generationConfig",
)
"""The fields of a Gemini API request (``generateContent``) that shape the answer."""

FIELDS_OF_API: dict[ApiFamily, tuple[str, ...]] = {
    "anthropic": KEPT_FIELDS,
    "responses": RESPONSES_FIELDS,
    "chat": CHAT_FIELDS,
    "gemini": GEMINI_FIELDS,
}
"""The fields kept, per API (a path of none of them, such as ``count_tokens``, keeps the
Messages API's)."""

BUILTIN_RULES: tuple[str, ...] = (
    "request-fields",
    "metadata-user-id",
    "cache-control",
    "text-blocks",
    "paths",
    "sandbox-ids",
    "cli-temp",
    "dates",
    "git-status",
    "os-version",
    "session-ids",
    "tool-use-ids",
    "agent-ids",
)
"""Short names of the built-in normalisation rules, in the order they apply; each cassette lists
the rules it was recorded under. ``docs/replay.md`` shows each with a before and after."""

REDACTED = "[REDACTED]"
"""What a suite's ``replay.redact`` value becomes wherever it occurs."""

PLACEHOLDERS = {
    "workdir": "{WORKDIR}",
    "home": "{HOME}",
    "tmp": "{TMP}",
    "root": "{SANDBOX}",
    "user_home": "{USER_HOME}",
}
"""The placeholder of each :class:`RunPaths` field."""


@dataclass(frozen=True)
class RunPaths:
    """Paths of one run that vary between runs, replaced by placeholders."""

    workdir: str | None = None
    """The working directory the CLI starts in -> ``{WORKDIR}``."""
    home: str | None = None
    """The run's ``$HOME`` -> ``{HOME}``."""
    tmp: str | None = None
    """The run's ``$TMPDIR`` -> ``{TMP}``."""
    root: str | None = None
    """The run's sandbox root, holding the others -> ``{SANDBOX}``."""
    user_home: str | None = None
    """The user's real home, which the run's settings deny reading -> ``{USER_HOME}``."""
    repos: tuple[str, ...] = ()
    """The repositories the run's settings deny reading (the skill's, the suite's) ->
    ``{REPO}``: Claude Code's sandbox lists its read rules to the model, and a clone elsewhere
    must replay alike."""

    def replacements(self) -> list[tuple[str, str]]:
        """(path, placeholder) pairs, longest path first, each path also in the two other forms
        the CLI writes it in: under ``/private`` (macOS resolves ``/tmp`` and ``/var`` there) and
        as the project slug Claude Code names its folders by (``/tmp/x/work`` -> ``-tmp-x-work``).
        """
        pairs: list[tuple[str, str]] = []
        named = [(getattr(self, name), placeholder) for name, placeholder in PLACEHOLDERS.items()]
        for value, placeholder in [*named, *((repo, "{REPO}") for repo in self.repos)]:
            if not value:
                continue
            value = value.rstrip("/") or value
            if len(value) < 2:  # "/" would replace every slash
                continue
            pairs.append((value, placeholder))
            if value.startswith(("/tmp/", "/var/")):
                pairs.append(("/private" + value, placeholder))
            pairs.append((_slug(value), placeholder[:-1] + "_SLUG}"))
        # Longest first: the working directory lies inside the sandbox root.
        pairs.sort(key=lambda pair: len(pair[0]), reverse=True)
        return pairs


def _slug(path: str) -> str:
    """Claude Code's name for a project folder: every character but letters and digits -> ``-``."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


_NO_RULES = Rules()
"""The rules of a suite without a ``replay:`` key."""


def rules_in_force(rules: Rules = _NO_RULES) -> list[str]:
    """The ``rules`` a cassette records: the built-in rule names, then the suite's own."""
    return [*BUILTIN_RULES, *rules.describe()]


# --- the built-in string rules ---------------------------------------------------------------

_SANDBOX_ID = re.compile(r"skilltest-run-[a-z0-9_-]{8}(?![A-Za-z0-9_])")
"""A run sandbox's folder name (``tempfile.mkdtemp``: 8 of ``a-z0-9_``; ``_`` reads ``-`` in a
project slug) wherever it shows, e.g. when no :class:`RunPaths` were given."""

_CLI_TEMP = re.compile(r"(?:(?<=/tmp/)|(?<=\{TMP\}/))claude-\d+(?![\w-])")
"""Claude Code's per-user temp folder ``/tmp/claude-<uid>/``: the uid differs between machines."""

_CLI_SETTINGS_FILE = re.compile(r"claude-settings-[0-9a-f]{8,64}\.json")
"""The file Claude Code writes ``--settings`` to, named by a hash of its content: a world's
sandbox settings carry the run's own proxy ports, so the name differs from run to run."""

_TODAY = re.compile(
    r"(Today's date is (?:now )?)"
    r"(?:\d{4}-\d{2}-\d{2}|(?:[A-Z][a-z]+, )?[A-Z][a-z]+ \d{1,2}, \d{4}|\d{1,2}/\d{1,2}/\d{4})"
)
"""The date Claude Code writes in its environment message (ISO today; spelt out or with slashes
in other versions)."""
_DATE_CHANGE = re.compile(
    r"\s*(?:<system-reminder>\s*)?The date has changed\. Today's date is now [^\n.]+\."
    r"(?: No need to announce the new date \u2014 the user's own clock shows it\.)?"
    r"(?:\s*</system-reminder>)?\s*"
)
"""The reminder Claude Code adds, as a text block of its own, when the date changes during a
session: a run that crosses midnight carries one that the same run an hour earlier does not."""
_ISO_TIMESTAMP = re.compile(
    r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\w:])"
)
"""An ISO 8601 date-time (a ``T`` between date and time), anywhere."""

_HTTP_DATE = re.compile(
    r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} "
    r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT\b"
)
"""An HTTP date (``Date:``, ``Last-Modified:`` in a ``curl -i`` the agent ran)."""

_GIT_STATUS = re.compile(
    r"(?P<head>(?:^|\n)(?:# gitStatus|gitStatus:)[^\n]*)"
    r"(?P<body>.*?)"
    r"(?P<end>\n\nClaude Code attached this context|\n</system-reminder>|\n# |\Z)",
    re.DOTALL,
)
"""Claude Code's git status section (``# gitStatus`` in a system-reminder, ``gitStatus:`` in older
system prompts): the heading stays, the body (branch, changed files, recent commits) goes, up to
the paragraph the CLI writes after it, the end of the reminder or the next heading."""

_OS_VERSION = re.compile(r"(OS Version: )[^\n]+")
"""The kernel build in Claude Code's environment message: it differs between machines."""

_UUID = re.compile(r"\b[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\b")
_MESSAGE_ID = re.compile(r"\bmsg_[A-Za-z0-9]{8,}\b")
_REQUEST_ID = re.compile(r"\breq_[A-Za-z0-9]{8,}\b")
_TOOL_USE_ID = re.compile(r"\b(?:srv)?toolu_[A-Za-z0-9_]+\b")
"""Ids the client or the API makes up: UUIDs (sessions, output folders), messages, requests,
tool uses; each renumbered in order of first appearance."""
_OPENAI_ID = re.compile(
    r"\b(?P<kind>call|fc|fco|rs|resp|msg)_(?:[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}"
    r"|[A-Za-z0-9]{8,})\b"
)
"""OpenAI ids in a Responses or Chat request: tool calls (``call_``), their items (``fc_``),
their outputs (``fco_``), reasoning items (``rs_``), responses (``resp_``) and messages
(``msg_``); Codex makes up its own as a UUID (``msg_01a24a0b-f7a6-70d0-a11a-2edba456367f``).
Renumbered per kind (``call_1``)."""
_CODEX_CHUNK = re.compile(r"(?m)^(Chunk ID: )[0-9a-f]+$")
"""The id Codex gives each piece of a command's output, in the output it sends the model."""
_CODEX_WALL_TIME = re.compile(r"(?m)^(Wall time: )\d+(?:\.\d+)? seconds$")
"""How long a command ran, as Codex tells the model with its output."""
_CURRENT_DATE = re.compile(r"(<current_date>)\d{4}-\d{2}-\d{2}(</current_date>)")
"""The date in Codex's environment context."""
_GEMINI_CALL_ID = re.compile(r"\b(?P<name>[A-Za-z][A-Za-z0-9_-]*?)_1\d{12}_\d+\b")
"""The id Gemini CLI gives a function call and its response: the tool's name, the time in
milliseconds and a counter (``run_shell_command_1796560336356_0``). Renumbered per request
(``run_shell_command_call_1``)."""
_GEMINI_SHELL_IDS = re.compile(r"(?m)^(Process Group PGID: |Background PIDs: )[0-9, ]+$")
"""The process ids Gemini CLI reports with a command's output to the model."""
_AGENT_ID = re.compile(r"(?<=agentId: )a[0-9a-f]{16}\b|(?<=/tasks/)a[0-9a-f]{16}\b")
"""Claude Code's background-agent ids, where the CLI writes them (its tool result and the
agent's output file); elsewhere 17 hex-looking characters are left alone."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """``text`` with each lone UTF-16 surrogate (half a character, as a JavaScript string cut in
    the middle of an emoji leaves it) replaced by U+FFFD: what is not UTF-8 can be neither
    hashed nor written to a cassette."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


class _Numbering:
    """Renumbers ids in order of first appearance, one counter per kind, across a request."""

    def __init__(self) -> None:
        self._seen: dict[str, dict[str, str]] = {}

    def rule(self, kind: str, template: str) -> Callable[[re.Match[str]], str]:
        seen = self._seen.setdefault(kind, {})

        def replace(match: re.Match[str]) -> str:
            text = match.group(0)
            if text not in seen:
                seen[text] = template.format(len(seen) + 1)
            return seen[text]

        return replace


class _StringRules:
    """The built-in string rules, then the suite's, for one request (ids are numbered per
    request, so a tool_use and its tool_result get the same number)."""

    def __init__(self, paths: RunPaths | None, rules: Rules, *, api: str = "anthropic") -> None:
        # Each pattern comes with text every match of it contains: a string without that text
        # is not scanned (a request of Claude Code is some 300 strings, 60 kB of them in the
        # system prompt and the tools, and a replay normalises each request on its way).
        self._paths = [
            (path, re.compile(re.escape(path) + r"(?![A-Za-z0-9_-])"), placeholder)
            for path, placeholder in (paths.replacements() if paths else [])
        ]
        self._openai = api in ("responses", "chat")
        self._gemini = api == "gemini"
        numbering = _Numbering()
        self._ids: list[tuple[tuple[str, ...], re.Pattern[str], Callable[[re.Match[str]], str]]]
        self._ids = [
            (("-",), _UUID, numbering.rule("uuid", "{{UUID_{}}}")),
            (("msg_",), _MESSAGE_ID, numbering.rule("msg", "msg_{}")),
            (("req_",), _REQUEST_ID, numbering.rule("req", "req_{}")),
            (("toolu_",), _TOOL_USE_ID, numbering.rule("toolu", "toolu_{}")),
            (("agentId: ", "/tasks/"), _AGENT_ID, numbering.rule("agent", "{{AGENT_{}}}")),
        ]
        if self._openai:
            # First: a Codex message id holds a UUID, which the rules above would cut in two.
            markers = ("call_", "fc_", "fco_", "rs_", "resp_", "msg_")
            self._ids.insert(0, (markers, _OPENAI_ID, self._openai_id(numbering)))
        if self._gemini:
            self._ids.append((("_1",), _GEMINI_CALL_ID, self._gemini_call_id()))
        self._suite = [(re.compile(p), r) for p, r in rules.normalise]
        self._secrets = redactor_of(rules.secrets, REDACTED) if rules.secrets else None

    @staticmethod
    def _openai_id(numbering: _Numbering) -> Callable[[re.Match[str]], str]:
        kinds: dict[str, Callable[[re.Match[str]], str]] = {}

        def replace(match: re.Match[str]) -> str:
            kind = match.group("kind")
            if kind not in kinds:
                kinds[kind] = numbering.rule(kind, kind + "_{}")
            return kinds[kind](match)

        return replace

    @staticmethod
    def _gemini_call_id() -> Callable[[re.Match[str]], str]:
        seen: dict[str, str] = {}

        def replace(match: re.Match[str]) -> str:
            text = match.group(0)
            if text not in seen:
                seen[text] = f"{match.group('name')}_call_{len(seen) + 1}"
            return seen[text]

        return replace

    def __call__(self, text: str) -> str:
        text = without_surrogates(text)
        if self._secrets is not None:
            text = self._secrets(text)
        for path, pattern, placeholder in self._paths:
            if path in text:
                text = pattern.sub(placeholder, text)
        if "skilltest-run-" in text:
            text = _SANDBOX_ID.sub("skilltest-run-{ID}", text)
        if "claude-" in text:
            text = _CLI_TEMP.sub("claude-{UID}", text)
            text = _CLI_SETTINGS_FILE.sub("claude-settings-{HASH}.json", text)
        if "Today's date is " in text:
            text = _TODAY.sub(r"\1{DATE}", text)
        if "-" in text:
            text = _ISO_TIMESTAMP.sub("{TIMESTAMP}", text)
        if " GMT" in text:
            text = _HTTP_DATE.sub("{HTTP_DATE}", text)
        if "gitStatus" in text:
            text = _GIT_STATUS.sub(r"\g<head>\n{GIT_STATUS}\g<end>", text)
        if "OS Version: " in text:
            text = _OS_VERSION.sub(r"\1{OS_VERSION}", text)
        if self._openai:
            if "<current_date>" in text:
                text = _CURRENT_DATE.sub(r"\1{DATE}\2", text)
            if "Wall time: " in text:
                text = _CODEX_WALL_TIME.sub(r"\1{SECONDS} seconds", text)
            if "Chunk ID: " in text:
                text = _CODEX_CHUNK.sub(r"\1{CHUNK_ID}", text)
        if self._gemini and ("PGID: " in text or "PIDs: " in text):
            text = _GEMINI_SHELL_IDS.sub(r"\1{PID}", text)
        for markers, pattern, replace in self._ids:
            if any(marker in text for marker in markers):
                text = pattern.sub(replace, text)
        for compiled, replacement in self._suite:
            text = compiled.sub(replacement, text)
        return text


def _without(value: Any, key: str) -> Any:
    """A deep copy without ``key`` at any depth."""
    if isinstance(value, Mapping):
        return {k: _without(v, key) for k, v in value.items() if k != key}
    if isinstance(value, list):
        return [_without(v, key) for v in value]
    return value


def _as_blocks(content: Any) -> Any:
    """A text content as the list of one text block the API reads it as."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _text_blocks(document: dict[str, Any]) -> None:
    """Writes every text content as a list of text blocks, in place: the API reads ``"content":
    "x"`` and ``[{"type": "text", "text": "x"}]`` alike, and Claude Code sends one message in
    either form from one turn to the next."""
    if "system" in document:
        document["system"] = _as_blocks(document["system"])
    for message in document.get("messages") or []:
        if not isinstance(message, dict) or "content" not in message:
            continue
        message["content"] = _as_blocks(message["content"])
        for block in message["content"] if isinstance(message["content"], list) else []:
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_result"
                and "content" in block
            ):
                block["content"] = _as_blocks(block["content"])


def _without_date_change(document: dict[str, Any]) -> None:
    """Drops, in place, each text block that is only Claude Code's reminder that the date
    changed, and each user message left empty by it."""
    messages = document.get("messages")
    if not isinstance(messages, list):
        return
    kept = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and content and message.get("role") == "user":
            blocks = [block for block in content if not _is_date_change(block)]
            if not blocks:
                continue
            message["content"] = blocks
        kept.append(message)
    document["messages"] = kept


def _is_date_change(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and _DATE_CHANGE.fullmatch(block["text"]) is not None
    )


def _pointer_parts(pointer: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def remove_pointer(document: Any, pointer: str) -> None:
    """Removes what ``pointer`` names from ``document`` in place; ``*`` matches every key or
    index at its level; a pointer to nothing removes nothing."""
    parts = _pointer_parts(pointer)
    if parts:
        _remove(document, parts)


def _remove(node: Any, parts: list[str]) -> None:
    head, rest = parts[0], parts[1:]
    if isinstance(node, dict):
        keys = list(node) if head == "*" else [head] if head in node else []
        for key in keys:
            if rest:
                _remove(node[key], rest)
            else:
                del node[key]
    elif isinstance(node, list):
        if head == "*":
            indexes = list(range(len(node)))
        elif head.isdigit() and int(head) < len(node):
            indexes = [int(head)]
        else:
            indexes = []
        for index in reversed(indexes):  # deleting from the end keeps the other indexes valid
            if rest:
                _remove(node[index], rest)
            else:
                del node[index]


_SKILL_LISTING = re.compile(r"(<available_skills>\n)(.*?)(\n</available_skills>)", re.DOTALL)
_SKILL_ENTRY = re.compile(r"  <skill>\n.*?\n  </skill>", re.DOTALL)
_AVAILABLE = re.compile(r"\(Available: ((?:'[^']*'(?:, )?)+)\)")


def _sorted_listing(match: re.Match[str]) -> str:
    entries = _SKILL_ENTRY.findall(match.group(2))
    if "\n".join(entries) != match.group(2):
        return match.group(0)  # not the listing as Gemini CLI writes it: left as it is
    return match.group(1) + "\n".join(sorted(entries)) + match.group(3)


def _sorted_names(match: re.Match[str]) -> str:
    names = re.findall(r"'[^']*'", match.group(1))
    return f"(Available: {', '.join(sorted(names))})"


def _gemini_skills_in_order(document: Any) -> None:
    """Gemini CLI lists the installed skills in the order it found them, which varies from run
    to run: its system instruction's ``<available_skills>`` entries, and ``activate_skill``'s
    ``(Available: ...)`` and ``enum``, are put in sorted order (in place)."""
    if isinstance(document, dict):
        if document.get("name") == "activate_skill":
            description = document.get("description")
            if isinstance(description, str):
                document["description"] = _AVAILABLE.sub(_sorted_names, description)
            schema = document.get("parametersJsonSchema")
            properties = schema.get("properties") if isinstance(schema, dict) else None
            name = properties.get("name") if isinstance(properties, dict) else None
            enum = name.get("enum") if isinstance(name, dict) else None
            if isinstance(name, dict) and isinstance(enum, list):
                name["enum"] = sorted(enum, key=str)
        for key, value in document.items():
            if isinstance(value, str) and "<available_skills>" in value:
                document[key] = _SKILL_LISTING.sub(_sorted_listing, value)
            else:
                _gemini_skills_in_order(value)
    elif isinstance(document, list):
        for value in document:
            _gemini_skills_in_order(value)


def normalise_request(
    body: Mapping[str, Any],
    *,
    paths: RunPaths | None = None,
    rules: Rules = _NO_RULES,
    endpoint: str | None = None,
) -> dict[str, Any]:
    """What the model sees, with volatile parts replaced.

    Keeps model, system, messages, tools, tool_choice and the sampling parameters (temperature,
    top_p, top_k, max_tokens, stop_sequences, thinking, output_config, context_management);
    drops metadata, stream, and anything else. A Responses or Chat Completions request (by its
    ``endpoint``) keeps the fields of :data:`RESPONSES_FIELDS` or :data:`CHAT_FIELDS`, loses
    every ``encrypted_content``, and has its OpenAI ids (``call_``, ``fc_``, ``rs_``,
    ``resp_``) and Codex's ``<current_date>`` replaced too. Then, in order (Messages requests):
    ``cache_control`` markers go, text contents become lists of text blocks, Claude Code's
    reminder that the date changed during the session goes (with the user message that held
    only it); then for every request the suite's ``ignore`` pointers go, and the
    suite's redactions, the built-in string rules and the suite's ``normalise`` rules apply to
    every string. Deterministic; pure.

    Args:
        body: The request body as the client sent it.
        paths: The run's own folders, replaced by placeholders.
        rules: The suite's ``replay:`` rules.
        endpoint: The API path when it is not ``/v1/messages`` (``/v1/messages/count_tokens``),
            kept so that the two never share a fingerprint.
    """
    api = api_of_path(endpoint or "/v1/messages") or "anthropic"
    kept: dict[str, Any] = {key: body[key] for key in FIELDS_OF_API[api] if key in body}
    if endpoint and endpoint.rstrip("/") != "/v1/messages":
        kept = {"endpoint": endpoint, **kept}
    if api == "anthropic":
        # Prompt-cache markers move between turns.
        document = _without(kept, "cache_control")
        _text_blocks(document)
        _without_date_change(document)
    else:
        # Encrypted reasoning differs on every call, even for the same thinking.
        document = _without(kept, "encrypted_content")
        if api == "gemini":
            _gemini_skills_in_order(document)
    for pointer in rules.ignore:
        remove_pointer(document, pointer)
    result: dict[str, Any] = map_strings(document, _StringRules(paths, rules, api=api))
    return result


def normalise_mcp(
    method: str,
    params: Mapping[str, Any] | None,
    *,
    paths: RunPaths | None = None,
    rules: Rules = _NO_RULES,
) -> dict[str, Any]:
    """The identity of an MCP JSON-RPC request: method and normalised params.

    No id (the client numbers its requests), no ``_meta`` (progress tokens); the same string
    rules as model requests apply to the params, and the suite's ``ignore`` pointers are read
    against ``{"method": ..., "params": ...}``.
    """
    document: dict[str, Any] = {"method": method, "params": _without(params or {}, "_meta")}
    for pointer in rules.ignore:
        remove_pointer(document, pointer)
    result: dict[str, Any] = map_strings(document, _StringRules(paths, rules))
    return result


def canonical_json(value: Any) -> str:
    """The one text of a JSON value: sorted keys, no spaces, UTF-8 as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint(normalised: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the canonical JSON of a normalised request."""
    digest = hashlib.sha256(canonical_json(normalised).encode("utf-8")).hexdigest()
    return f"sha256:{digest}"
