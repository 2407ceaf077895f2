"""A plugin marketplace: ``.claude-plugin/marketplace.json`` and the plugins it lists from its
own repository."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilltest.errors import PluginError
from skilltest.plugins.json_file import read_json
from skilltest.plugins.plugin import (
    COMPONENT_KEYS,
    MANIFEST,
    STANDARD_PARTS,
    EntryManifest,
    PluginInspection,
    inspect_plugin,
)
from skilltest.suite.loader import json_pointer, validate

MARKETPLACE = Path(".claude-plugin") / "marketplace.json"
"""Where a marketplace file is, relative to the marketplace's folder."""


@dataclass(frozen=True)
class MarketplaceEntry:
    """One plugin a marketplace lists."""

    name: str
    """The plugin's name in the marketplace."""
    source: str | Mapping[str, Any] = field(hash=False)
    """Where the plugin comes from: a path in the marketplace's repository, or an object such
    as ``{"source": "github", "repo": "owner/name"}``."""
    folder: Path | None
    """The plugin's folder when ``source`` is a path (whether or not it exists)."""
    location: str
    """The entry's place, ``marketplace.json#/plugins/<index>``."""
    data: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """The entry as the file has it: with ``strict: false`` (or a plugin without a
    ``plugin.json``), its manifest."""
    source_is_marketplace: bool = False
    """Whether ``source`` is the marketplace's own folder (``./``)."""

    def manifest(self) -> EntryManifest:
        """The entry, for reading its plugin (:func:`skilltest.plugins.inspect_plugin`)."""
        return EntryManifest(self.data, self.location, self.source_is_marketplace)


@dataclass(frozen=True)
class Marketplace:
    """A marketplace file, read and validated."""

    name: str
    """Its ``name``."""
    root: Path
    """The folder holding ``.claude-plugin/marketplace.json``; relative sources start here."""
    entries: tuple[MarketplaceEntry, ...]
    """The plugins it lists."""

    @property
    def local_plugins(self) -> tuple[Path, ...]:
        """The folders of the plugins it lists from its own repository."""
        return tuple(entry.folder for entry in self.entries if entry.folder is not None)

    @property
    def local_entries(self) -> tuple[MarketplaceEntry, ...]:
        """The entries of the plugins it lists from its own repository."""
        return tuple(entry for entry in self.entries if entry.folder is not None)

    def plugin(self, name: str) -> PluginInspection:
        """The plugin it lists as ``name`` from its own repository, read with its entry.

        Raises:
            PluginError: it lists no such plugin (naming those it lists).
        """
        for entry in self.local_entries:
            if entry.name == name:
                assert entry.folder is not None
                return inspect_plugin(entry.folder, entry=entry.manifest())
        raise PluginError(
            f"the marketplace {self.name} lists no plugin {name!r} in its repository; it lists "
            f"{', '.join(e.name for e in self.local_entries) or 'none'}",
            location=str(self.root / MARKETPLACE),
            fix="pass --plugin with one of those names",
        )


def is_marketplace(path: Path) -> bool:
    """Whether ``path`` is a folder with a marketplace file."""
    return (path / MARKETPLACE).is_file()


def inspect_marketplace(root: Path) -> tuple[Marketplace | None, tuple[PluginError, ...]]:
    """Reads ``<root>/.claude-plugin/marketplace.json`` and checks that the plugins it lists
    from its repository exist and are plugins.

    Returns:
        The marketplace (``None`` when its file cannot be read or is not valid against
        ``marketplace.schema.json``) and every problem found.
    """
    path = root / MARKETPLACE
    try:
        data = read_json(path)
        validate(data, "marketplace", path, PluginError)
    except PluginError as exc:
        return None, (exc,)
    problems: list[PluginError] = []
    plugin_root = (data.get("metadata") or {}).get("pluginRoot") or "."
    entries = []
    for index, entry in enumerate(data["plugins"]):
        where = f"{path}#{json_pointer(['plugins', index])}"
        source = entry["source"]
        folder = None
        if isinstance(source, str):
            # Sources starting with ./ are relative to the marketplace's folder; bare names to
            # metadata.pluginRoot (as Claude Code resolves them).
            folder = root / source if source.startswith("./") else root / plugin_root / source
            if not folder.is_dir():
                problems.append(
                    PluginError(
                        f"plugin source not found: {source} (looked at {folder})",
                        location=f"{where}/source",
                        fix="the path is relative to the folder that holds .claude-plugin/; "
                        "start it with ./",
                    )
                )
            elif not any(key in entry for key in COMPONENT_KEYS) and not any(
                (folder / part).exists() for part in (MANIFEST, *STANDARD_PARTS)
            ):
                problems.append(
                    PluginError(
                        f"{source} is not a plugin: no .claude-plugin/plugin.json, skills/, "
                        "commands/, agents/, hooks/hooks.json or .mcp.json",
                        location=f"{where}/source",
                        fix="point the source at the plugin's folder",
                    )
                )
        at_root = folder is not None and folder.resolve() == root.resolve()
        entries.append(
            MarketplaceEntry(str(entry["name"]), source, folder, where, dict(entry), at_root)
        )
    return Marketplace(str(data["name"]), root, tuple(entries)), tuple(problems)
