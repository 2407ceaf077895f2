"""Talking to stdio MCP servers: health checks before a run, tool lists for ``skilltest lint``
(``health``), and the small stdio server the run's mock servers speak through
(``stdio_server``).

Names are imported when first asked for, so a mock server process started for one run
loads only ``stdio_server``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skilltest.errors import McpServerError
    from skilltest.mcp.health import ServerTools, check_servers, list_tools, probe_servers

_NAMES = {
    "McpServerError": "skilltest.errors",
    "ServerTools": "skilltest.mcp.health",
    "check_servers": "skilltest.mcp.health",
    "list_tools": "skilltest.mcp.health",
    "probe_servers": "skilltest.mcp.health",
}

__all__ = ["McpServerError", "ServerTools", "check_servers", "list_tools", "probe_servers"]


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'skilltest.mcp' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
