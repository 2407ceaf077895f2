"""Claude Code plugins on disk: the manifest, skills, commands, agents, hooks and MCP servers
of a plugin folder, and the marketplace files that list plugins."""

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
