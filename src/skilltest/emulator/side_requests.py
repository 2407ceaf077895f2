"""Claude Code's side requests: recognised by signature and answered sensibly by default.

Besides the agent loop, Claude Code 2.1.328 can send the Messages API small helper requests:
a quota check, session-title and session-name generation, tool-use summary labels, progress
labels for background agents, recaps, next-prompt suggestions and conversation compaction. In
``claude -p`` with ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` none of them was observed, but
they exist in the CLI and appear in other modes (interactive sessions, long conversations).

Gemini CLI 0.61.0 sends helper requests of its own through ``generateContent``, each asking for
JSON by a schema: the routing of a turn to a model (``route``: a complexity score;
``model_choice``: ``flash`` or ``pro``), whether the model speaks next (``next_speaker``) and
whether the conversation loops (``loop_check``).

Each is recognised by text the CLI itself writes (never by what a user could type), and gets
a built-in answer unless a rule opts in with ``when: {side_request: ...}``. That keeps a
script's rules, and its ``turn`` counting, about the main agent only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

SideRequestKind = Literal[
    "quota",
    "title",
    "name",
    "tool_summary",
    "progress_label",
    "recap",
    "suggestion",
    "compact",
    "route",
    "model_choice",
    "next_speaker",
    "loop_check",
]

SIDE_REQUEST_KINDS: tuple[SideRequestKind, ...] = get_args(SideRequestKind)

# (kind, where the CLI writes it, text it always contains). Checked in order.
_SIGNATURES: tuple[tuple[SideRequestKind, Literal["system", "last_user"], str], ...] = (
    ("title", "system", 'Return JSON with a single "title" field'),
    ("title", "system", "You are a title generator. You output ONLY a thread title."),  # OpenCode
    ("name", "last_user", 'Return JSON with a "name" field'),
    ("name", "system", 'Return JSON with a "name" field'),
    ("tool_summary", "system", "Write a short summary label describing what these tool calls"),
    ("progress_label", "system", "You write a 3-5 word progress label"),
    ("progress_label", "last_user", "most recent action in 3-5 words using present tense"),
    ("recap", "last_user", "The user stepped away and is coming back. Recap in under 40 words"),
    ("suggestion", "last_user", "[SUGGESTION MODE: Suggest what the user might naturally type"),
    ("compact", "last_user", "Your task is to create a detailed summary of the conversation so"),
    ("compact", "last_user", "Your task is to create a detailed summary of this conversation."),
    ("compact", "system", "Your task is to create a detailed summary of the conversation so"),
    # Gemini CLI 0.61.0's helper requests (generateContent with a JSON schema).
    ("route", "system", "You are a specialized Task Routing AI."),
    ("model_choice", "system", "You are the **Lead Orchestrator** for an AI system."),
    ("next_speaker", "last_user", "determine who should logically speak next: the 'user' or the"),
    ("loop_check", "system", "You are a diagnostic agent that determines whether a"),
)

DEFAULT_ANSWERS: dict[SideRequestKind, str] = {
    "quota": "ok",
    "title": '{"title": "Scripted emulator session"}',
    "name": '{"name": "scripted-emulator-session"}',
    "tool_summary": "Ran scripted tools",
    "progress_label": "Running scripted steps",
    "recap": "A scripted session with the skilltest emulator; nothing to recap.",
    "suggestion": "",
    "compact": (
        "<summary>\nA scripted conversation with the skilltest emulator "
        "(a stand-in, not a real model); no real work to summarise.\n</summary>"
    ),
    "route": (
        '{"complexity_reasoning": "A scripted session with the skilltest emulator.", '
        '"complexity_score": 10}'
    ),
    "model_choice": (
        '{"reasoning": "A scripted session with the skilltest emulator.", "model_choice": "flash"}'
    ),
    "next_speaker": ('{"reasoning": "The scripted turn is complete.", "next_speaker": "user"}'),
    "loop_check": (
        '{"unproductive_state_analysis": "A scripted session: no loop.", '
        '"unproductive_state_confidence": 0}'
    ),
}
"""Built-in answer text per kind (JSON where the CLI asks for JSON)."""


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "\n".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, Mapping) and block.get("type") == "text"
        )
    return ""


def classify_side_request(body: Mapping[str, Any]) -> SideRequestKind | None:
    """Which side request ``body`` is, or ``None`` for a main agent request."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    users = [m for m in messages if m.get("role") == "user"]
    if (
        body.get("max_tokens") == 1
        and len(users) == 1
        and _text(users[0].get("content")).strip() == "quota"
    ):
        return "quota"
    system = _text(body.get("system"))
    last_user = _text(users[-1].get("content")) if users else ""
    for kind, where, marker in _SIGNATURES:
        if marker in (system if where == "system" else last_user):
            return kind
    return None
