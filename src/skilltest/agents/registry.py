"""Agents by name, each imported only when a run asks for it.

As inspect_ai registers model providers (``@modelapi(name=...)``), an agent's module registers
its class with :func:`register`; :data:`AGENT_MODULES` says which module holds which name, so
that nothing of an agent is imported until :func:`agent` is asked for it. A new agent is a
module in this package with ``@register("name")`` on its class, and a line in
:data:`AGENT_MODULES`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TypeVar

from skilltest.agents.base import Agent
from skilltest.errors import InputError

DEFAULT_AGENT = "claude-code"
"""The agent a run uses unless ``--agent`` names another."""

AGENT_MODULES: dict[str, str] = {
    "claude-code": "skilltest.agents.claude_code",
    "opencode": "skilltest.agents.opencode",
    "codex": "skilltest.agents.codex",
    "gemini": "skilltest.agents.gemini",
}
"""Which module registers each agent's name."""

_REGISTERED: dict[str, Callable[[], Agent]] = {}

_A = TypeVar("_A")


def register(name: str) -> Callable[[_A], _A]:
    """Registers an agent class (called without arguments to make the agent) under ``name``."""

    def decorate(factory: _A) -> _A:
        _REGISTERED[name] = factory  # type: ignore[assignment]
        return factory

    return decorate


def _available() -> tuple[str, ...]:
    """The names whose module is there (an agent still being written is not offered)."""
    return tuple(name for name, module in AGENT_MODULES.items() if _findable(module))


def _findable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def agent_names() -> tuple[str, ...]:
    """The agents a run can name."""
    return _available()


def agent(name: str, *, location: str = "--agent") -> Agent:
    """The agent registered as ``name``, its module imported now.

    Raises:
        InputError: no agent of that name, naming the ones there are.
    """
    module = AGENT_MODULES.get(name)
    if module is None or not _findable(module):
        raise InputError(
            f"no agent named {name!r}",
            location=location,
            fix=f"name one of: {', '.join(agent_names())}",
        )
    if name not in _REGISTERED:
        importlib.import_module(module)
    return _REGISTERED[name]()
