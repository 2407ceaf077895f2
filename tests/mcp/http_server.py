"""A remote MCP server on loopback for the tests: streamable HTTP at http://127.0.0.1:PORT/mcp,
the port given as argv[1], one tool (``get_forecast``). It writes "ready" to stdout once it
listens."""

import sys

import uvicorn

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as MCPServer

server = MCPServer("weather")


@server.tool()
def get_forecast(city: str) -> str:
    """Tomorrow's forecast for `city`."""
    return f"{city}: sunny"


class Ready(uvicorn.Server):
    async def startup(self, sockets=None):
        await super().startup(sockets)
        print("ready", flush=True)


if __name__ == "__main__":
    config = uvicorn.Config(
        server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="error"
    )
    Ready(config).run()
