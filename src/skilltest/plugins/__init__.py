"""Claude Code plugins on disk: the manifest, skills, commands, agents, hooks and MCP servers
of a plugin folder, and the marketplace files that list plugins."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skilltest.plugins.marketplace import (
        MARKETPLACE,
        Marketplace,
        MarketplaceEntry,
        inspect_marketplace,
        is_marketplace,
    )
    from skilltest.plugins.plugin import (
        MANIFEST,
        Plugin,
        PluginInspection,
        inspect_plugin,
        is_plugin,
        load_plugin,
    )
    from skilltest.plugins.servers import (
        PLUGIN_ROOT_VARIABLE,
        McpServer,
        mcp_config,
        mcp_servers_from,
        mcp_servers_in_document,
    )

_NAMES = {
    "MARKETPLACE": "marketplace",
    "Marketplace": "marketplace",
    "MarketplaceEntry": "marketplace",
    "inspect_marketplace": "marketplace",
    "is_marketplace": "marketplace",
    "MANIFEST": "plugin",
    "Plugin": "plugin",
    "PluginInspection": "plugin",
    "inspect_plugin": "plugin",
    "is_plugin": "plugin",
    "load_plugin": "plugin",
    "PLUGIN_ROOT_VARIABLE": "servers",
    "McpServer": "servers",
    "mcp_config": "servers",
    "mcp_servers_from": "servers",
    "mcp_servers_in_document": "servers",
}
"""Where each name of the package lives: a module is imported when one of its names is first
asked for, so that a suite naming no plugin imports none of this."""

__all__ = [
    "MANIFEST",
    "MARKETPLACE",
    "PLUGIN_ROOT_VARIABLE",
    "Marketplace",
    "MarketplaceEntry",
    "McpServer",
    "Plugin",
    "PluginInspection",
    "inspect_marketplace",
    "inspect_plugin",
    "is_marketplace",
    "is_plugin",
    "load_plugin",
    "mcp_config",
    "mcp_servers_from",
    "mcp_servers_in_document",
]


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'skilltest.plugins' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"skilltest.plugins.{module}"), name)
