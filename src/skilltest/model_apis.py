"""The model APIs the toolkit speaks and records, and the agents it can tell apart.

One model script answers four APIs: Anthropic's Messages API (``POST /v1/messages``), OpenAI's
Responses API (``POST /v1/responses``, what Codex speaks), OpenAI's Chat Completions
(``POST /v1/chat/completions``, what OpenAI-compatible providers speak) and Google's Gemini API
(``POST /v1beta/models/MODEL:generateContent`` and ``:streamGenerateContent``, what Gemini CLI
speaks). A rule can match the
family (``when: {api: responses}``) and, where the client says who it is in its headers, the
agent (``when: {agent: codex}``). Pure functions; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal, get_args

ApiFamily = Literal["anthropic", "responses", "chat", "gemini"]
"""A model API the emulator speaks."""

API_FAMILIES: tuple[ApiFamily, ...] = get_args(ApiFamily)

AgentName = Literal["claude-code", "codex", "opencode", "gemini"]
"""An agent the emulator recognises by its request headers."""

AGENT_NAMES: tuple[AgentName, ...] = get_args(AgentName)

API_PATHS: dict[str, ApiFamily] = {
    "/v1/messages": "anthropic",
    "/v1/responses": "responses",
    "/v1/chat/completions": "chat",
}
"""The path each API's model requests are sent to (the Gemini API's carry the model: see
:data:`GEMINI_PATH`)."""

GEMINI_PATH = re.compile(
    r"^/(?:v1|v1alpha|v1beta)/models/(?P<model>[^/:]+):(?P<method>generateContent|"
    r"streamGenerateContent|countTokens)$"
)
"""A Gemini API model request: ``/v1beta/models/MODEL:METHOD``."""

GEMINI_MODEL_METHODS = ("generateContent", "streamGenerateContent")
"""The Gemini API methods that ask the model for an answer (``countTokens`` only counts)."""


def gemini_route(path: str) -> tuple[str, str] | None:
    """``(model, method)`` of a Gemini API path (query string and trailing slash ignored), or
    ``None`` for any other path."""
    match = GEMINI_PATH.match(path.split("?", 1)[0].rstrip("/"))
    return (match.group("model"), match.group("method")) if match else None


def api_of_path(path: str) -> ApiFamily | None:
    """The API a model request path belongs to (query string and trailing slash ignored), or
    ``None`` for any other path (``count_tokens``, ``countTokens``, batches, ...)."""
    route = gemini_route(path)
    if route is not None:
        return "gemini" if route[1] in GEMINI_MODEL_METHODS else None
    return API_PATHS.get(path.split("?", 1)[0].rstrip("/"))


# (agent, header, text the header's value starts with). Checked in order, case-insensitively.
_AGENT_SIGNS: tuple[tuple[AgentName, str, str], ...] = (
    ("codex", "originator", "codex"),
    ("codex", "user-agent", "codex"),
    ("opencode", "user-agent", "opencode"),
    ("opencode", "x-opencode-session", ""),
    ("gemini", "user-agent", "geminicli"),
    ("claude-code", "user-agent", "claude-cli/"),
    ("claude-code", "x-app", "cli"),
)


def agent_of(headers: Mapping[str, str]) -> AgentName | None:
    """Which agent sent a request, from its headers: Codex says ``originator: codex_exec``
    (and a ``codex_exec/VERSION`` user agent), OpenCode an ``opencode/VERSION`` user agent,
    Gemini CLI ``GeminiCLI/VERSION/MODEL`` (or ``GeminiCLI-tui/...``), Claude Code
    ``claude-cli/VERSION``; ``None`` when none of them shows (an SDK, curl)."""
    lowered = {str(name).lower(): str(value).lower() for name, value in headers.items()}
    for agent, header, start in _AGENT_SIGNS:
        value = lowered.get(header)
        if value is not None and value.startswith(start):
            return agent
    return None
