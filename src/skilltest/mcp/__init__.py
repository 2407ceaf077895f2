"""Talking to stdio MCP servers: health checks before a run, tool lists for ``skilltest lint``."""

from skilltest.errors import McpServerError
from skilltest.mcp.health import ServerTools, check_servers, list_tools, probe_servers

__all__ = ["McpServerError", "ServerTools", "check_servers", "list_tools", "probe_servers"]
