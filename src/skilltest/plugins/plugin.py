"""A Claude Code plugin folder, read the way ``claude --plugin-dir DIR`` (2.1.328) loads it.

::

    my-plugin/
      .claude-plugin/plugin.json     manifest: "name", and optional component paths
      skills/<skill>/SKILL.md        listed as my-plugin:<skill>
      commands/*.md   agents/*.md    slash commands and subagents
      hooks/hooks.json               {"hooks": {"<Event>": [{"matcher", "hooks": [...]}]}}
      .mcp.json                      {"mcpServers": {"<name>": {"command", "args", "env"}}}

Component paths in the manifest start with ``./``; ``skills``, ``hooks`` and ``mcpServers``
add to the standard folders, ``commands`` and ``agents`` replace them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilltest.errors import InputError, PluginError
from skilltest.names import NAME_RULE, name_problem
from skilltest.plugins.hooks import check_hooks_file, check_inline_hooks
from skilltest.plugins.json_file import read_json
from skilltest.plugins.servers import McpServer, mcp_servers_from, mcp_servers_in_document
from skilltest.skills import Skill, load_skill
from skilltest.suite.loader import json_pointer, validate

MANIFEST = Path(".claude-plugin") / "plugin.json"
"""Where a plugin's manifest is, relative to its folder."""
HOOKS_FILE = Path("hooks") / "hooks.json"
MCP_FILE = Path(".mcp.json")
STANDARD_PARTS = (Path("skills"), Path("commands"), Path("agents"), HOOKS_FILE, MCP_FILE)
"""What makes a folder without a manifest a plugin (Claude Code then names it after the folder)."""


@dataclass(frozen=True)
class Plugin:
    """A plugin folder and everything it gives Claude Code."""

    name: str
    """The manifest's ``name`` (the folder's name when there is no manifest)."""
    root: Path
    """The plugin folder, as given."""
    manifest: Mapping[str, Any] = field(hash=False)
    """``.claude-plugin/plugin.json`` as parsed (empty without one)."""
    skills: tuple[Skill, ...]
    """Its skills; each is named after its folder, as Claude Code names it."""
    commands: tuple[Path, ...]
    """Its slash command files."""
    agents: tuple[Path, ...]
    """Its subagent files."""
    hooks: Path | None
    """``hooks/hooks.json``, else the first hooks file the manifest names; ``None`` without."""
    mcp_servers: tuple[McpServer, ...]
    """Its MCP servers from ``.mcp.json`` and the manifest's ``mcpServers``."""
    hook_files: tuple[Path, ...] = ()
    """Every hooks file it loads (``hooks/hooks.json`` first, then the manifest's)."""

    def skill(self, name: str) -> Skill | None:
        """The skill ``name`` (or ``<plugin>:name``, as the CLI lists it), if the plugin has it."""
        short = name.removeprefix(f"{self.name}:")
        return next((skill for skill in self.skills if skill.name == short), None)

    @property
    def listed_skill_names(self) -> tuple[str, ...]:
        """The skills as the CLI lists them in its init event: ``<plugin>:<skill>``."""
        return tuple(f"{self.name}:{skill.name}" for skill in self.skills)


@dataclass(frozen=True)
class PluginInspection:
    """A plugin folder read as far as possible, with every problem found on the way."""

    plugin: Plugin | None
    """The plugin, or ``None`` when the folder or its manifest cannot be read at all."""
    problems: tuple[PluginError, ...]
    """What is wrong, in the order found; empty for a valid plugin."""


def load_plugin(path: Path, *, location: str | None = None) -> Plugin:
    """Reads and validates a plugin folder.

    Args:
        path: The plugin folder (or its ``.claude-plugin/plugin.json``).
        location: Where the plugin was named (``suite.yaml#/plugin``), for a folder that
            does not exist or is not a plugin.

    Raises:
        PluginError: the first problem :func:`inspect_plugin` finds, naming the file, the JSON
            pointer or line, and the fix.
    """
    inspection = inspect_plugin(path, location=location)
    if inspection.problems:
        first = inspection.problems[0]
        more = len(inspection.problems) - 1
        if more:
            first = PluginError(
                f"{first.message}\n  ({more} more problem(s) in this plugin; "
                f"`skilltest lint {path}` lists them all)",
                location=first.location,
                fix=first.fix,
            )
        raise first
    assert inspection.plugin is not None
    return inspection.plugin


def plugin_root(path: Path) -> Path:
    """The plugin folder for a path to it or to its manifest."""
    if path.name == "plugin.json" and path.parent.name == ".claude-plugin":
        return path.parent.parent
    return path


def is_plugin(path: Path) -> bool:
    """Whether ``path`` is a folder with a plugin manifest."""
    return (path / MANIFEST).is_file()


def inspect_plugin(path: Path, *, location: str | None = None) -> PluginInspection:
    """Reads a plugin folder and collects every problem instead of stopping at the first.

    Problems: a folder that does not exist or is no plugin, a manifest that is not valid JSON
    or not valid against ``plugin.schema.json`` (``name`` missing among others), component
    paths that do not exist or leave the plugin folder, skill folders without ``SKILL.md``,
    hooks files with unknown events, MCP servers without a command.
    """
    return _Reader(plugin_root(path), location).read()


class _Reader:
    def __init__(self, root: Path, location: str | None) -> None:
        self.root = root
        self.location = location
        self.problems: list[PluginError] = []
        self.manifest_path = root / MANIFEST

    def add(self, message: str, location: str, fix: str) -> None:
        self.problems.append(PluginError(message, location=location, fix=fix))

    def keep(self, exc: InputError) -> None:
        if isinstance(exc, PluginError):
            self.problems.append(exc)
        else:
            self.add(exc.message, exc.location or str(self.root), exc.fix or "")

    def at(self, *parts: object) -> str:
        return f"{self.manifest_path}#{json_pointer(parts)}"

    def read(self) -> PluginInspection:
        root = self.root
        if not root.is_dir():
            what = "is a file, not a plugin folder" if root.exists() else "no such folder"
            where = f"{self.location}: {root}" if self.location else str(root)
            self.add(what, where, "pass the plugin's folder (the one holding .claude-plugin/)")
            return PluginInspection(None, tuple(self.problems))
        manifest: dict[str, Any] = {}
        if self.manifest_path.is_file():
            try:
                data = read_json(self.manifest_path)
                validate(data, "plugin", self.manifest_path, PluginError)
            except InputError as exc:
                self.keep(exc)
                return PluginInspection(None, tuple(self.problems))
            manifest = data
            name = str(manifest["name"])
        elif any((root / part).exists() for part in STANDARD_PARTS):
            name = root.resolve().name  # as `claude --plugin-dir` names it without a manifest
        else:
            where = f"{self.location}: {root}" if self.location else str(root)
            self.add(
                "not a plugin: no .claude-plugin/plugin.json (and no skills/, commands/, "
                "agents/, hooks/hooks.json or .mcp.json)",
                where,
                'create .claude-plugin/plugin.json with {"name": "<plugin>"}',
            )
            return PluginInspection(None, tuple(self.problems))
        problem = name_problem(name)
        if problem is not None:
            # The name becomes a folder of the run's sandbox (.claude/plugins/<name>).
            self.add(
                f"the plugin name {name!r} {problem}",
                self.at("name") if manifest else str(root),
                f"name the plugin with {NAME_RULE}, e.g. my-plugin",
            )
            return PluginInspection(None, tuple(self.problems))
        hook_files = self.hook_files(manifest)
        plugin = Plugin(
            name=name,
            root=root,
            manifest=manifest,
            skills=self.skills(manifest),
            commands=self.markdown_files(manifest, "commands"),
            agents=self.markdown_files(manifest, "agents"),
            hooks=hook_files[0] if hook_files else None,
            mcp_servers=self.mcp_servers(manifest),
            hook_files=hook_files,
        )
        return PluginInspection(plugin, tuple(self.problems))

    # -- paths named in the manifest ---------------------------------------------------------

    def resolve(self, value: str, *parts: object) -> Path | None:
        """The file or folder a manifest path names, or ``None`` (with a problem)."""
        target = self.root / value
        try:
            target.resolve().relative_to(self.root.resolve())
        except ValueError:
            self.add(
                f"{value!r} is outside the plugin folder",
                self.at(*parts),
                "keep every component inside the plugin folder; Claude Code does not load "
                "paths that leave it",
            )
            return None
        if not target.exists():
            self.add(
                f"path not found: {value} (looked at {target})",
                self.at(*parts),
                "fix the path (relative to the plugin folder, starting with ./) or create it",
            )
            return None
        return target

    @staticmethod
    def entries(value: object, key: str) -> list[tuple[object, tuple[object, ...]]]:
        """A manifest field that holds one value or a list: each value with its pointer."""
        if isinstance(value, list):
            return [(item, (key, index)) for index, item in enumerate(value)]
        return [(value, (key,))]

    # -- skills --------------------------------------------------------------------------------

    def skills(self, manifest: Mapping[str, Any]) -> tuple[Skill, ...]:
        folders: list[Path] = []
        standard = self.root / "skills"
        if standard.is_dir():
            folders += self.skill_folders(standard, str(standard))
        if "skills" in manifest:
            for value, parts in self.entries(manifest["skills"], "skills"):
                target = self.resolve(str(value), *parts)
                if target is None:
                    continue
                if (target / "SKILL.md").is_file():
                    folders.append(target)
                    continue
                if str(value) in {".", "./"}:  # the plugin folder is the skill itself
                    self.add(
                        "no SKILL.md in the plugin folder, which the manifest names as a skill",
                        self.at(*parts),
                        "add SKILL.md to the plugin folder, or point skills at skill folders",
                    )
                    continue
                found = self.skill_folders(target, self.at(*parts)) if target.is_dir() else []
                if not found:
                    self.add(
                        f"no SKILL.md in {value} or in the folders in it",
                        self.at(*parts),
                        "point at a skill folder (one holding SKILL.md) or a folder of them",
                    )
                folders += found
        skills: dict[str, Skill] = {}
        seen: set[Path] = set()
        for folder in folders:
            if folder.resolve() in seen:
                continue
            seen.add(folder.resolve())
            try:
                skill = load_skill(folder / "SKILL.md")
            except InputError as exc:
                self.keep(exc)
                continue
            if skill.name in skills:
                self.add(
                    f"two skills named {skill.name!r}: {skills[skill.name].directory} and {folder}",
                    str(folder),
                    "rename one of the two folders; Claude Code names a skill after its folder",
                )
                continue
            skills[skill.name] = skill
        return tuple(skills.values())

    def skill_folders(self, parent: Path, where: str) -> list[Path]:
        """The skill folders in ``parent``; a folder without SKILL.md is a problem."""
        found = []
        for child in sorted(parent.iterdir()):
            if not child.is_dir() or child.name.startswith("."):
                continue
            if (child / "SKILL.md").is_file():
                found.append(child)
            else:
                self.add(
                    f"the skill folder {child.name} has no SKILL.md",
                    str(child),
                    "add SKILL.md (front matter with name and description, then the "
                    "instructions), or move the folder out of the skills folder",
                )
        return found

    # -- commands and agents -----------------------------------------------------------------

    def markdown_files(self, manifest: Mapping[str, Any], key: str) -> tuple[Path, ...]:
        """``commands`` or ``agents``: the manifest's list replaces the standard folder."""
        if key not in manifest:
            folder = self.root / key
            return tuple(sorted(folder.rglob("*.md"))) if folder.is_dir() else ()
        value = manifest[key]
        named: list[tuple[object, tuple[object, ...]]]
        if isinstance(value, dict):  # commands by name: {"about": {"source": "./x.md"}}
            named = [
                (spec["source"], (key, name, "source"))
                for name, spec in value.items()
                if isinstance(spec, dict) and isinstance(spec.get("source"), str)
            ]
        else:
            named = self.entries(value, key)
        files: list[Path] = []
        for item, parts in named:
            target = self.resolve(str(item), *parts)
            if target is None:
                continue
            files += sorted(target.rglob("*.md")) if target.is_dir() else [target]
        return tuple(files)

    # -- hooks ---------------------------------------------------------------------------------

    def hook_files(self, manifest: Mapping[str, Any]) -> tuple[Path, ...]:
        files: list[Path] = []
        standard = self.root / HOOKS_FILE
        if standard.is_file():
            files.append(standard)
        if "hooks" in manifest:
            for value, parts in self.entries(manifest["hooks"], "hooks"):
                if isinstance(value, dict):
                    try:
                        check_inline_hooks(value, self.manifest_path, json_pointer(parts))
                    except PluginError as exc:
                        self.keep(exc)
                    continue
                target = self.resolve(str(value), *parts)
                # Naming hooks/hooks.json again loads it once, as Claude Code does.
                if target is not None and all(target.resolve() != f.resolve() for f in files):
                    files.append(target)
        for path in files:
            try:
                check_hooks_file(path)
            except InputError as exc:
                self.keep(exc)
        return tuple(files)

    # -- MCP servers ---------------------------------------------------------------------------

    def mcp_servers(self, manifest: Mapping[str, Any]) -> tuple[McpServer, ...]:
        base = self.root.resolve()
        found: list[McpServer] = []
        standard = self.root / MCP_FILE
        if standard.is_file():
            found += self.servers_in_file(standard, base)
        if "mcpServers" in manifest:
            for value, parts in self.entries(manifest["mcpServers"], "mcpServers"):
                if isinstance(value, dict):
                    try:
                        found += mcp_servers_from(value, self.at(*parts), base)
                    except InputError as exc:
                        self.keep(exc)
                    continue
                text = str(value)
                if text.endswith((".mcpb", ".dxt")):
                    continue  # an MCP bundle: an archive skilltest does not unpack
                target = self.resolve(text, *parts)
                if target is not None and target.resolve() != standard.resolve():
                    found += self.servers_in_file(target, base)
        servers: dict[str, McpServer] = {}
        for server in found:
            if server.name in servers:
                self.add(
                    f"the MCP server {server.name!r} is declared twice (first at "
                    f"{servers[server.name].origin})",
                    server.origin,
                    "give each server its own name; Claude Code would start only one of them",
                )
                continue
            servers[server.name] = server
        return tuple(servers.values())

    def servers_in_file(self, path: Path, base: Path) -> list[McpServer]:
        try:
            return list(mcp_servers_in_document(read_json(path), path, base))
        except InputError as exc:
            self.keep(exc)
            return []
