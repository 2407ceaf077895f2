"""The model APIs the toolkit speaks and records, and the agents it can tell apart.

One model script answers three APIs: Anthropic's Messages API (``POST /v1/messages``), OpenAI's
Responses API (``POST /v1/responses``, what Codex speaks) and OpenAI's Chat Completions
(``POST /v1/chat/completions``, what OpenAI-compatible providers speak). A rule can match the
family (``when: {api: responses}``) and, where the client says who it is in its headers, the
agent (``when: {agent: codex}``). Pure functions; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

ApiFamily = Literal["anthropic", "responses", "chat"]
"""A model API the emulator speaks."""

API_FAMILIES: tuple[ApiFamily, ...] = get_args(ApiFamily)

AgentName = Literal["claude-code", "codex", "opencode"]
"""An agent the emulator recognises by its request headers."""

AGENT_NAMES: tuple[AgentName, ...] = get_args(AgentName)

API_PATHS: dict[str, ApiFamily] = {
    "/v1/messages": "anthropic",
    "/v1/responses": "responses",
    "/v1/chat/completions": "chat",
}
"""The path each API's model requests are sent to."""


def api_of_path(path: str) -> ApiFamily | None:
    """The API a model request path belongs to (query string and trailing slash ignored), or
    ``None`` for any other path (``count_tokens``, batches, ...)."""
    return API_PATHS.get(path.split("?", 1)[0].rstrip("/"))


# (agent, header, text the header's value starts with). Checked in order, case-insensitively.
_AGENT_SIGNS: tuple[tuple[AgentName, str, str], ...] = (
    ("codex", "originator", "codex"),
    ("codex", "user-agent", "codex"),
    ("opencode", "user-agent", "opencode"),
    ("opencode", "x-opencode-session", ""),
    ("claude-code", "user-agent", "claude-cli/"),
    ("claude-code", "x-app", "cli"),
)


def agent_of(headers: Mapping[str, str]) -> AgentName | None:
    """Which agent sent a request, from its headers: Codex says ``originator: codex_exec``
    (and a ``codex_exec/VERSION`` user agent), OpenCode an ``opencode/VERSION`` user agent,
    Claude Code ``claude-cli/VERSION``; ``None`` when none of them shows (an SDK, curl)."""
    lowered = {str(name).lower(): str(value).lower() for name, value in headers.items()}
    for agent, header, start in _AGENT_SIGNS:
        value = lowered.get(header)
        if value is not None and value.startswith(start):
            return agent
    return None
