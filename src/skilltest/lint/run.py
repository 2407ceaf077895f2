"""Runs every check over the targets and gathers the findings.

Only the MCP check starts processes (the servers, through the ``probe`` it is given); the rest
reads files.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skilltest.errors import InputError, McpServerError
from skilltest.lint.evalcases import check_eval_cases
from skilltest.lint.findings import Finding
from skilltest.lint.mcp_tools import check_tool_mentions, normalized, tool_mentions
from skilltest.lint.skill_md import check_skill
from skilltest.lint.targets import Targets
from skilltest.mcp import ServerTools
from skilltest.plugins import MarketplaceEntry, McpServer, inspect_marketplace, inspect_plugin
from skilltest.plugins.plugin import MANIFEST, Plugin
from skilltest.suite.loader import load_schema

ServerProbe = Callable[[Sequence[McpServer]], Mapping[str, ServerTools | McpServerError]]
"""Starts servers and returns what each answered (``skilltest.mcp.probe_servers``)."""


@dataclass(frozen=True)
class LintReport:
    """Everything ``skilltest lint`` found."""

    findings: tuple[Finding, ...]
    """The findings, target by target."""
    skills: int
    """How many skills were checked (a plugin's included)."""
    plugins: int
    """How many plugins were checked."""
    marketplaces: int
    """How many marketplace files were checked."""
    notes: tuple[str, ...] = field(default=())
    """What could not be checked, and why."""
    cases: int = 0
    """How many eval cases of the plugins were checked."""


def _split_fix(error: McpServerError) -> tuple[str, str]:
    """The error's message and fix; the place where the server is declared is the finding's."""
    message, _, fix = str(error).rpartition("\n  fix: ")
    if not message:
        message, fix = str(error), ""
    lines = [line for line in message.splitlines() if not line.startswith("  declared at ")]
    return "\n".join(lines), fix


class _Linter:
    def __init__(self, probe: ServerProbe | None, servers: Sequence[McpServer]) -> None:
        self.probe = probe
        self.servers = tuple(servers)
        self.findings: list[Finding] = []
        self.notes: list[str] = []
        self.skills = 0
        self.cases = 0
        self.answers: dict[tuple[str, str], ServerTools | McpServerError] = {}
        self.checked_skills: set[Path] = set()
        """Skill folders checked as part of a plugin: not again on their own."""

    def answers_of(self, servers: Sequence[McpServer]) -> dict[str, ServerTools | McpServerError]:
        """What each server answered, each started once however many skills mention it."""
        assert self.probe is not None
        new = [s for s in servers if s.is_local and (s.name, s.origin) not in self.answers]
        results = self.probe(new) if new else {}
        for server in new:
            answer = results.get(server.name)
            if answer is not None:
                self.answers[(server.name, server.origin)] = answer
            if isinstance(answer, McpServerError):
                message, fix = _split_fix(answer)
                self.findings.append(Finding(server.origin, message, fix, "mcp-server"))
        return {
            s.name: self.answers[(s.name, s.origin)]
            for s in servers
            if (s.name, s.origin) in self.answers
        }

    def skill(self, folder: Path, plugin: Plugin | None) -> None:
        self.skills += 1
        text, findings = check_skill(folder, plugin.root if plugin else None)
        self.findings += findings
        mentioned = tool_mentions(text, plugin.name if plugin else None)
        if not mentioned:
            return
        skill_md = folder / "SKILL.md"
        servers = (*plugin.mcp_servers, *self.servers) if plugin else self.servers
        names = ", ".join(dict.fromkeys(m.name for m in mentioned))
        if plugin is None and not servers:
            self.notes.append(
                f"{skill_md}: {names} not checked: no MCP server is declared for a skill "
                "outside a plugin (pass --mcp-config FILE)"
            )
            return
        answers: dict[str, ServerTools | McpServerError] = {}
        if self.probe is None:
            self.notes.append(f"{skill_md}: {names} not checked against the servers (--no-mcp)")
        else:
            answers = self.answers_of(servers)
            by_name = {normalized(s.name): s for s in servers}
            remote = dict.fromkeys(
                m.name for m in mentioned if m.server in by_name and not by_name[m.server].is_local
            )
            if remote:
                self.notes.append(
                    f"{skill_md}: {', '.join(remote)} not checked: a remote server is not "
                    "contacted by lint"
                )
        owner = f"the plugin {plugin.name}" if plugin else "the --mcp-config file"
        # The plugin's own servers, unless --mcp-config declares one of the same name: that one
        # keeps its plain mcp__<server>__<tool> names.
        own = (
            frozenset(s.name for s in plugin.mcp_servers) - {s.name for s in self.servers}
            if plugin
            else frozenset()
        )
        self.findings += check_tool_mentions(
            skill_md,
            mentioned,
            servers,
            answers,
            owner,
            plugin=plugin.name if plugin else None,
            own=own,
        )

    def plugin(self, root: Path, entry: MarketplaceEntry | None = None) -> None:
        inspection = inspect_plugin(root, entry=entry.manifest() if entry else None)
        self.findings += [Finding.from_error(p, "plugin", str(root)) for p in inspection.problems]
        plugin = inspection.plugin
        if plugin is None:
            return
        self.findings += _unknown_keys(plugin)
        for skill in plugin.skills:
            self.checked_skills.add(skill.directory.resolve())
            self.skill(skill.directory, plugin)
        findings, cases = check_eval_cases(plugin)
        self.findings += findings
        self.cases += cases
        if self.probe is not None:
            self.answers_of(plugin.mcp_servers)  # a server that fails is a finding on its own

    def marketplace(self, root: Path) -> list[MarketplaceEntry]:
        marketplace, problems = inspect_marketplace(root)
        self.findings += [Finding.from_error(p, "marketplace", str(root)) for p in problems]
        if marketplace is None:
            return []
        # A source that is not a folder was reported; one that is no plugin by itself is read
        # with its entry, as Claude Code reads it (strict: false entries are the manifest).
        return [e for e in marketplace.local_entries if e.folder is not None and e.folder.is_dir()]


KNOWN_MANIFEST_KEYS = tuple(load_schema("plugin")["properties"])


def _unknown_keys(plugin: Plugin) -> list[Finding]:
    """Manifest keys Claude Code ignores that look like a misspelt known key."""
    findings = []
    for key in plugin.manifest:
        if key in KNOWN_MANIFEST_KEYS:
            continue
        close = difflib.get_close_matches(key, KNOWN_MANIFEST_KEYS, n=1, cutoff=0.75)
        if close:
            findings.append(
                Finding(
                    f"{plugin.root / MANIFEST}#/{key}",
                    f"unknown key {key!r}: Claude Code ignores it",
                    f"did you mean {close[0]!r}?",
                    "plugin",
                )
            )
    return findings


def lint(
    targets: Targets,
    *,
    probe: ServerProbe | None,
    servers: Sequence[McpServer] = (),
    plugin: str | None = None,
) -> LintReport:
    """Checks every skill, plugin and marketplace of ``targets``.

    A marketplace's plugins are read with their entries, as Claude Code reads them (an entry
    with ``strict: false`` is its plugin's manifest); a skill checked as part of a plugin is not
    checked again on its own.

    Args:
        targets: What to check.
        probe: Starts MCP servers and lists their tools; ``None`` leaves MCP tool names
            unchecked against the servers.
        servers: MCP servers declared for every skill besides its plugin's (``--mcp-config``).
        plugin: ``--plugin``: check only the plugin of this name (and the marketplace files).

    Raises:
        InputError: no plugin is named ``plugin``.
    """
    linter = _Linter(probe, servers)
    entries = [entry for root in targets.marketplaces for entry in linter.marketplace(root)]
    # A plugin folder a marketplace lists is read with its entry (which may add to it).
    listed = {e.folder.resolve() for e in entries if e.folder is not None}
    plugins: list[tuple[Path, MarketplaceEntry | None]] = [
        (root, None) for root in targets.plugins if root.resolve() not in listed
    ]
    seen: set[tuple[Path, str]] = set()
    for entry in entries:
        assert entry.folder is not None
        key = (entry.folder.resolve(), entry.name)
        if key not in seen:
            seen.add(key)
            plugins.append((entry.folder, entry))
    if plugin is not None:
        plugins = [(root, e) for root, e in plugins if _plugin_name(root, e) == plugin]
        if not plugins:
            known = sorted({_plugin_name(root, e) for root, e in plugins_before(targets, entries)})
            raise InputError(
                f"--plugin {plugin}: no plugin of that name here; there are "
                f"{', '.join(known) or 'none'}",
                location="--plugin",
                fix="pass the name of one of those plugins (its plugin.json or marketplace name)",
            )
    for root, listed_by in plugins:
        linter.plugin(root, listed_by)
    if plugin is None:
        for folder in targets.skills:
            if folder.resolve() not in linter.checked_skills:
                linter.skill(folder, None)
    return LintReport(
        findings=tuple(linter.findings),
        skills=linter.skills,
        plugins=len(plugins),
        marketplaces=len(targets.marketplaces),
        notes=tuple(linter.notes),
        cases=linter.cases,
    )


def plugins_before(
    targets: Targets, entries: Sequence[MarketplaceEntry]
) -> list[tuple[Path, MarketplaceEntry | None]]:
    """Every plugin the targets hold, before ``--plugin`` picks one."""
    return [(root, None) for root in targets.plugins] + [
        (e.folder, e) for e in entries if e.folder is not None
    ]


def _plugin_name(root: Path, entry: MarketplaceEntry | None) -> str:
    if entry is not None:
        return entry.name
    inspection = inspect_plugin(root)
    return inspection.plugin.name if inspection.plugin is not None else root.name
