"""Which of an eval folder's mocks stand in for which of the plugin's MCP servers, as
:mod:`skilltest.mcp.contract` compares them (``skilltest mcp contract``).

A mock stands in for a server when its folder is named after the server's key in the plugin's
``.mcp.json`` (or after ``plugin_<plugin>_<server>``, as the run registers it). Cases sharing the
same ``mocks/`` folders share one comparison; a case whose own ``mocks/<server>/`` adds to the
eval folder's is compared on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skilltest.errors import SuiteError
from skilltest.evalcases.mocks import TOOLS_FILE, MockServer
from skilltest.evalcases.suite import read_eval_target
from skilltest.mcp.contract import MockedServer, MockedTool
from skilltest.plugins import Plugin
from skilltest.plugins.servers import McpServer


@dataclass(frozen=True)
class MockedPlugin:
    """What ``skilltest mcp contract PATH`` compares."""

    plugin: Plugin
    mocks: tuple[MockedServer, ...]
    """Each distinct mock of a declared server."""
    notes: tuple[str, ...] = ()
    """What is not compared: mocks of no declared server, declared servers with no mock."""


def _declared(plugin: Plugin, folder: str) -> McpServer | None:
    for server in plugin.mcp_servers:
        if folder in (server.name, f"plugin_{plugin.name}_{server.name}"):
            return server
    return None


def _tools(mock: MockServer) -> tuple[MockedTool, ...]:
    tools = []
    for name in sorted(mock.responders.keys() | mock.listings.keys()):
        listing = mock.listings.get(name)
        if listing is not None and listing.source is not None:
            tools.append(
                MockedTool(
                    name,
                    listing.source,
                    listing.pointer,
                    listing.description,
                    listing.input_schema,
                )
            )
        else:
            tools.append(MockedTool(name, mock.responders[name].source))
    return tuple(tools)


def mocked_plugin(path: Path) -> MockedPlugin:
    """The mocks of the eval cases ``path`` names (a plugin, its eval folder or one case
    folder), each with the plugin's server it stands in for.

    Raises:
        SuiteError: no plugin or case there, a case or mock the CLI would refuse, no MCP mock,
            or no mock of a server the plugin declares.
    """
    target = read_eval_target(path)
    plugin = target.plugin
    assert plugin is not None  # read_eval_target refuses a folder no plugin holds
    found: dict[tuple[str, tuple[Path, ...]], MockedServer] = {}
    unmatched: list[str] = []
    for case in target.cases:
        for mock in target.mocks[case.name]:
            folders = tuple(
                layer / mock.name
                for layer in target.layers[case.name]
                if (layer / mock.name).is_dir()
            )
            server = _declared(plugin, mock.name)
            if server is None:
                if mock.location not in unmatched:
                    unmatched.append(mock.location)
                continue
            listed = [folder / TOOLS_FILE for folder in folders if (folder / TOOLS_FILE).is_file()]
            found.setdefault(
                (server.name, folders),
                MockedServer(
                    server,
                    folders[-1],
                    _tools(mock),
                    listed[-1] if listed else folders[-1] / TOOLS_FILE,
                ),
            )
    declared = ", ".join(server.name for server in plugin.mcp_servers)
    if not found:
        manifest = plugin.root / ".mcp.json"
        if not plugin.mcp_servers:
            raise SuiteError(
                f"the plugin {plugin.name!r} declares no MCP server to hold its mocks against",
                location=str(manifest),
                fix='declare the server the mocks stand in for in .mcp.json ({"mcpServers": '
                '{"<name>": {"command": "...", "args": ["..."]}}})',
            )
        if unmatched:
            raise SuiteError(
                f"no mock stands in for a server the plugin declares ({declared}); "
                f"mocks found: {', '.join(unmatched)}",
                location=str(path),
                fix="name each mock folder after the server's key in .mcp.json "
                f"(mocks/{plugin.mcp_servers[0].name}/)",
            )
        raise SuiteError(
            "no MCP mocks here (no mocks/<server>/ folder with a <tool>.md)",
            location=str(path),
            fix=f"write mocks/{plugin.mcp_servers[0].name}/{TOOLS_FILE} (the server's tools/list) "
            "and a <tool>.md per tool, in the eval folder or a case folder",
        )
    notes = [
        f"{folder}: stands in for no server the plugin declares ({declared}): not compared"
        for folder in unmatched
    ]
    mocked = {key[0] for key in found}
    notes += [
        f"{server.name} ({server.origin}): no mock stands in for it: not compared"
        for server in plugin.mcp_servers
        if server.name not in mocked
    ]
    return MockedPlugin(plugin, tuple(found.values()), tuple(notes))
