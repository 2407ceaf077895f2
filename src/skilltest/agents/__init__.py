"""The agents a skill is tested in, behind one protocol and registered by name.

Each agent knows how to install its pinned version, give a run an isolated home and
configuration, install the skill where it reads skills, start a non-interactive run, and read
its event stream into the one :class:`~skilltest.transcript.Transcript`. Claude Code is one
agent among them (``claude-code``), OpenCode (``opencode``) and Codex (``codex``) others. An
agent's module is imported only when a run asks for it by name
(:func:`skilltest.agents.registry.agent`).
"""

from skilltest.agents.base import Agent, AgentBinary, Installed
from skilltest.agents.registry import AGENT_MODULES, DEFAULT_AGENT, agent, agent_names, register

__all__ = [
    "AGENT_MODULES",
    "DEFAULT_AGENT",
    "Agent",
    "AgentBinary",
    "Installed",
    "agent",
    "agent_names",
    "register",
]
