"""MCP tool names a skill mentions (``mcp__<server>__<tool>``), compared with what the servers
really list."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from skilltest.errors import McpServerError
from skilltest.lint.findings import Finding
from skilltest.mcp import ServerTools
from skilltest.plugins import McpServer

TOOL_NAME = re.compile(r"\bmcp__([A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*)__([A-Za-z0-9_-]*[A-Za-z0-9-])\b")
"""``mcp__<server>__<tool>``; a server name has no double underscore, so the first one ends it."""


def normalized(name: str) -> str:
    """A server name as Claude Code spells it inside tool names (other characters become _)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


@dataclass(frozen=True)
class ToolMention:
    """One ``mcp__server__tool`` in a SKILL.md."""

    name: str
    """The whole name as written."""
    server: str
    """The server part, without the ``plugin_<plugin>_`` prefix Claude Code gives the servers
    a plugin starts itself."""
    tool: str
    """The tool part."""
    line: int
    """Its line in SKILL.md."""
    scoped: bool = False
    """Written with the ``plugin_<plugin>_`` prefix, as a plugin run names the tool."""


def tool_mentions(text: str, plugin: str | None = None) -> list[ToolMention]:
    """Every ``mcp__server__tool`` in ``text`` (front matter included: ``allowed-tools``)."""
    prefix = f"plugin_{normalized(plugin)}_" if plugin else None
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for match in TOOL_NAME.finditer(line):
            server, tool = match.group(1), match.group(2)
            scoped = bool(prefix) and server.startswith(str(prefix))
            if scoped:
                server = server.removeprefix(str(prefix))
            found.append(ToolMention(match.group(0), server, tool, number, scoped))
    return found


def plugin_tool_name(plugin: str, server: str, tool: str) -> str:
    """The name a plugin's MCP tool has in a run of the plugin: Claude Code 2.1.328 names the
    server ``plugin:<plugin>:<server>`` and its tools ``mcp__plugin_<plugin>_<server>__<tool>``."""
    return f"mcp__plugin_{normalized(plugin)}_{normalized(server)}__{tool}"


def check_tool_mentions(
    skill_md: Path,
    mentioned: Sequence[ToolMention],
    servers: Sequence[McpServer],
    checked: Mapping[str, ServerTools | McpServerError],
    owner: str,
    *,
    plugin: str | None = None,
    own: frozenset[str] = frozenset(),
) -> list[Finding]:
    """Findings for mentions of a server that is not declared, of a tool it does not list, and
    of a plugin's tool by a name a run of the plugin does not give it.

    Args:
        skill_md: The SKILL.md the mentions are in.
        mentioned: Its mentions.
        servers: The servers declared for it (its plugin's, and those passed to lint).
        checked: What each server answered (a server that failed is reported on its own; its
            mentions are not judged; a server not asked is not either).
        owner: Who declares the servers, for messages (``the plugin observability``).
        plugin: The plugin the skill is part of.
        own: The names of the servers only the plugin starts: their tools are
            ``mcp__plugin_<plugin>_<server>__<tool>`` in a run, never ``mcp__<server>__<tool>``.
    """
    by_name = {normalized(server.name): server for server in servers}
    findings: list[Finding] = []
    seen: set[str] = set()
    for mention in mentioned:
        if mention.name in seen:
            continue
        seen.add(mention.name)
        place = f"{skill_md}:{mention.line}"
        server = by_name.get(mention.server)
        if server is None:
            declared = ", ".join(sorted(s.name for s in servers)) or "none"
            findings.append(
                Finding(
                    place,
                    f"{mention.name}: {owner} declares no MCP server {mention.server}; "
                    f"it has {declared}",
                    "declare the server (.mcp.json or plugin.json mcpServers) or fix the name",
                    "mcp-tool",
                )
            )
            continue
        unscoped = plugin is not None and not mention.scoped and server.name in own
        answer = checked.get(server.name)
        if not isinstance(answer, ServerTools) or mention.tool in answer.tools:
            if unscoped:
                assert plugin is not None
                right = plugin_tool_name(plugin, server.name, mention.tool)
                findings.append(
                    Finding(
                        place,
                        f"{mention.name}: a run of the plugin {plugin} has no such tool; it "
                        f"names it {right} (Claude Code names a plugin's server "
                        f"plugin_{normalized(plugin)}_{server.name})",
                        f"write {right}",
                        "mcp-tool",
                    )
                )
            continue
        listed = ", ".join(answer.tools) or "no tools"
        close = difflib.get_close_matches(mention.tool, answer.tools, n=1)
        start = mention.name[: len(mention.name) - len(mention.tool)]
        if unscoped:
            assert plugin is not None
            start = plugin_tool_name(plugin, server.name, "")
        hint = f"did you mean {start}{close[0]}? " if close else ""
        findings.append(
            Finding(
                place,
                f"{mention.name}: the server {server.name} has no tool {mention.tool}; "
                f"it has {listed}",
                f"{hint}use a tool its tools/list gives",
                "mcp-tool",
            )
        )
    return findings
