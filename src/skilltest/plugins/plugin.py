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
    from_marketplace: bool = False
    """Defined by its marketplace entry rather than a ``plugin.json`` of its own (``strict:
    false``, or no manifest): ``claude --plugin-dir`` on its folder alone would not see it as
    the marketplace defines it, so a run installs a copy that says it."""

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


def _in_marketplace(root: Path, name: str | None, location: str | None) -> PluginInspection | None:
    """The plugin ``--plugin NAME`` picks in the marketplace at ``root`` (or its only one);
    ``None`` when ``root`` is no marketplace listing plugins of its repository."""
    from skilltest.plugins.marketplace import inspect_marketplace, is_marketplace

    where = f"{location}: {root}" if location else str(root)
    if not is_marketplace(root):
        if name is not None:
            raise PluginError(
                f"--plugin {name}: {root} is not a marketplace (no .claude-plugin/"
                "marketplace.json)",
                location=where,
                fix="leave --plugin out for a plugin folder, or pass the marketplace's folder",
            )
        return None
    marketplace, problems = inspect_marketplace(root)
    if marketplace is None:
        raise problems[0]
    entries = marketplace.local_entries
    if name is not None:
        return marketplace.plugin(name)
    if len(entries) == 1:
        return marketplace.plugin(entries[0].name)
    if not entries:
        return None
    names = ", ".join(entry.name for entry in entries)
    raise PluginError(
        f"{root} is a marketplace of {len(entries)} plugins ({names}), not one plugin: "
        "loading the folder would make every skill in it one plugin's",
        location=where,
        fix=f"pick one with --plugin NAME (e.g. --plugin {entries[0].name})",
    )


def load_plugin(path: Path, *, location: str | None = None, name: str | None = None) -> Plugin:
    """Reads and validates a plugin folder, or one plugin of a marketplace's folder.

    Args:
        path: The plugin folder (or its ``.claude-plugin/plugin.json``), or a folder holding
            ``.claude-plugin/marketplace.json``.
        location: Where the plugin was named (``suite.yaml#/plugin``), for a folder that
            does not exist or is not a plugin.
        name: ``--plugin``: the plugin of the marketplace to read. Without it a marketplace
            that lists one plugin gives that one, and one that lists several is refused.

    Raises:
        PluginError: the first problem :func:`inspect_plugin` finds, naming the file, the JSON
            pointer or line, and the fix; a marketplace without ``name``, or a ``name`` it
            does not list.
    """
    root = plugin_root(path)
    picked = _in_marketplace(root, name, location) if root.is_dir() else None
    inspection = picked or inspect_plugin(path, location=location)
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


COMPONENT_KEYS = ("commands", "agents", "skills", "hooks", "mcpServers")
"""Manifest keys that name what a plugin loads (the rest describe it)."""
MARKETPLACE_ONLY_KEYS = frozenset({"source", "strict", "category", "tags", "id"})
"""Keys of a marketplace entry that are not manifest keys."""


@dataclass(frozen=True)
class EntryManifest:
    """A marketplace entry read as a plugin's manifest (see :func:`inspect_plugin`)."""

    data: Mapping[str, Any] = field(hash=False)
    """The entry, as the marketplace file has it."""
    location: str
    """``marketplace.json#/plugins/<index>``."""
    source_is_marketplace: bool
    """Whether its ``source`` is the marketplace's own folder (``./``)."""

    @property
    def strict(self) -> bool:
        """``strict`` (default true): the plugin's own ``plugin.json`` is authoritative."""
        return self.data.get("strict", True) is not False


def inspect_plugin(
    path: Path, *, location: str | None = None, entry: EntryManifest | None = None
) -> PluginInspection:
    """Reads a plugin folder and collects every problem instead of stopping at the first.

    With ``entry`` (the plugin as a marketplace lists it), the folder is read as Claude Code
    2.1.328 reads a marketplace's plugin: without a ``plugin.json`` the entry is the manifest;
    with one, the entry's component paths are added to it, unless the entry says ``strict:
    false``, which then conflicts; an entry whose source is the marketplace's own folder and
    lists its ``skills`` loads those skills, not the whole ``skills/`` folder.

    Problems: a folder that does not exist or is no plugin, a manifest that is not valid JSON
    or not valid against ``plugin.schema.json`` (``name`` missing among others), component
    paths that do not exist or leave the plugin folder, skill folders without ``SKILL.md``,
    hooks files with unknown events, MCP servers without a command.
    """
    return _Reader(plugin_root(path), location, entry).read()


class _Reader:
    def __init__(self, root: Path, location: str | None, entry: EntryManifest | None) -> None:
        self.root = root
        self.location = location
        self.entry = entry
        self.problems: list[PluginError] = []
        self.manifest_path = root / MANIFEST
        self.entry_keys: frozenset[str] = frozenset()
        """Manifest keys that come from the marketplace entry: their pointers are its."""
        self.listed_skills_only = False

    def add(self, message: str, location: str, fix: str) -> None:
        self.problems.append(PluginError(message, location=location, fix=fix))

    def keep(self, exc: InputError) -> None:
        if isinstance(exc, PluginError):
            self.problems.append(exc)
        else:
            self.add(exc.message, exc.location or str(self.root), exc.fix or "")

    def at(self, *parts: object) -> str:
        if self.entry is not None and parts and parts[0] in self.entry_keys:
            return f"{self.entry.location}{json_pointer(parts)}"
        return f"{self.manifest_path}#{json_pointer(parts)}"

    def from_entry(self, manifest: dict[str, Any]) -> dict[str, Any] | None:
        """The manifest once the marketplace entry is applied; ``None`` when they conflict."""
        entry = self.entry
        if entry is None:
            return manifest
        components = [key for key in COMPONENT_KEYS if key in entry.data]
        if not self.manifest_path.is_file():
            taken = {k: v for k, v in entry.data.items() if k not in MARKETPLACE_ONLY_KEYS}
            self.entry_keys = frozenset(taken)
        elif not entry.strict and components:
            self.add(
                f"the plugin has both a plugin.json and components in its marketplace entry "
                f"({', '.join(components)}) with strict: false: Claude Code refuses to load it",
                entry.location,
                "set strict: true in the marketplace entry, or keep the components in one of "
                "the two places",
            )
            return None
        else:
            # plugin.json is authoritative; the entry's component paths add to it.
            taken = dict(manifest)
            for key in components:
                if key not in taken:
                    taken[key] = entry.data[key]
                    self.entry_keys |= {key}
        self.listed_skills_only = entry.source_is_marketplace and "skills" in self.entry_keys
        return taken

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
        applied = self.from_entry(manifest)
        if applied is None:
            return PluginInspection(None, tuple(self.problems))
        manifest = applied
        if "name" in manifest:
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
            from_marketplace=self.entry is not None and not self.manifest_path.is_file(),
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
        # A marketplace entry rooted at the marketplace's folder that lists its skills loads
        # those, not every skill of the repository (unless it lists skills/ itself).
        listed = self.listed_skills_only and not any(
            (self.root / str(value)).resolve() in (standard.resolve(), self.root.resolve())
            for value, _ in self.entries(manifest["skills"], "skills")
        )
        if standard.is_dir() and not listed:
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
