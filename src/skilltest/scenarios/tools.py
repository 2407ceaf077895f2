"""Which tools a scenario's rubric may name: Claude Code's own, and those its MCP servers list.

A rubric that requires a tool no run can have (a misspelt MCP tool, a server the scenario does
not start) would only ever score zeros; it is refused when the suite is loaded instead, naming
the tool, its place and what the servers do offer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from skilltest.errors import SuiteError
from skilltest.names import canonical_tool_name
from skilltest.plugins.servers import McpServer

if TYPE_CHECKING:
    from skilltest.mcp import ServerTools
    from skilltest.scenarios.suite import Scenario

BUILTIN_TOOLS: frozenset[str] = frozenset(
    {
        # What Claude Code 2.1.328 lists in its init event ...
        "Agent",
        "Bash",
        "CronCreate",
        "CronDelete",
        "CronList",
        "Edit",
        "EnterWorktree",
        "ExitWorktree",
        "ListAgents",
        "ListMcpResourcesTool",
        "Monitor",
        "NotebookEdit",
        "Read",
        "ReadMcpResourceDirTool",
        "ReadMcpResourceTool",
        "ReportFindings",
        "ScheduleWakeup",
        "SendMessage",
        "Skill",
        "Task",
        "TaskStop",
        "ToolSearch",
        "WebFetch",
        "WebSearch",
        "Workflow",
        "Write",
        # ... and the tools it offers on demand or under earlier names.
        "AskUserQuestion",
        "BashOutput",
        "ExitPlanMode",
        "Glob",
        "Grep",
        "KillShell",
        "LS",
        "MultiEdit",
        "NotebookRead",
        "SlashCommand",
        "TodoRead",
        "TodoWrite",
    }
)
"""Tools the CLI provides itself; a rubric may name any of them."""


def _provides(name: str, servers: Mapping[str, Sequence[str]]) -> bool:
    if canonical_tool_name(name) in BUILTIN_TOOLS:
        return True
    for server, tools in servers.items():
        prefix = f"mcp__{server}__"
        if name.startswith(prefix) and name[len(prefix) :] in tools:
            return True
        if name in tools:
            return True
    return False


def check_rubric_tools(
    names: Mapping[str, Sequence[str]],
    servers: Mapping[str, Sequence[str]],
    *,
    location: str,
) -> None:
    """Refuses a tool the rubric names that neither Claude Code nor a server provides.

    Args:
        names: Tool names per rubric key (``required_tools``, ``recommended_tools``,
            ``tool_ordering``), as the scenario gives them.
        servers: Each MCP server of the scenario and the tools its ``tools/list`` returned.
        location: ``file#/scenarios/N`` of the scenario.

    Raises:
        SuiteError: naming the first unknown tool, where it is, and what the servers offer.
    """
    for key, tools in names.items():
        for name in tools:
            if _provides(name, servers):
                continue
            offered = [
                f"mcp__{server}__{tool}" for server, listed in servers.items() for tool in listed
            ]
            hint = (
                "the MCP servers offer " + ", ".join(offered)
                if offered
                else "the scenario starts no MCP server (config.mcp_servers, or a plugin's "
                ".mcp.json)"
            )
            raise SuiteError(
                f"{key} names tool {name!r}, which neither Claude Code nor an MCP server of the "
                f"scenario provides; {hint}",
                location=f"{location}/expected/{key}",
                fix="use a tool the CLI or a server lists (a server's tool answers to "
                "mcp__SERVER__TOOL and to its bare name), or start the server that has it",
            )


def scenario_servers(scenario: Scenario) -> tuple[McpServer, ...]:
    """Every MCP server a run of the scenario may start, under the names the runs give them:
    the plugin's (``plugin_<plugin>_<server>``) that no mock stands in for (none with
    ``plugin_servers: mocked``) and the scenario's ``config.mcp_servers``."""
    plugin = scenario.plugin
    own: tuple[McpServer, ...] = ()
    if plugin is not None:
        from skilltest.claude.isolation import plugin_servers

        own = plugin_servers(plugin, plugin.root)
    mocked = set(mock_tools(scenario))
    if scenario.plugin_servers == "mocked":
        own = ()
    return (*(s for s in own if s.name not in mocked), *scenario.config.mcp_servers)


def mock_tools(scenario: Scenario) -> dict[str, tuple[str, ...]]:
    """The tools the scenario's mocks offer, by the server name runs give them (nothing to
    start to learn them: a mock folder lists them)."""
    if not scenario.mocks:
        return {}
    from skilltest.evalcases.suite import registered_name

    return {
        registered_name(scenario.plugin, mock.name)[0]: tuple(t.name for t in mock.tools)
        for mock in scenario.mocks
    }


def check_scenario_tools(
    scenarios: Sequence[Scenario],
    *,
    check: Callable[[Sequence[McpServer]], Mapping[str, ServerTools]] | None = None,
) -> dict[str, tuple[str, ...]]:
    """Starts every MCP server the scenarios use once (``initialize`` and ``tools/list``, a
    health check before any run) and refuses a rubric tool no server or built-in provides.

    Args:
        scenarios: The scenarios that will run.
        check: The health check (:func:`skilltest.mcp.check_servers` by default).

    Returns:
        Each server's tools, by the name runs give it.

    Raises:
        McpServerError: a server that does not start or answer, with its stderr.
        SuiteError: a rubric tool nobody provides; two servers of one name that differ.
    """
    servers: dict[str, McpServer] = {}
    for scenario in scenarios:
        for server in scenario_servers(scenario):
            known = servers.setdefault(server.name, server)
            if known.to_config() != server.to_config():
                raise SuiteError(
                    f"two MCP servers are named {server.name!r}: {known.origin} and "
                    f"{server.origin} start different programs",
                    location=server.origin or scenario.location,
                    fix="give each server its own name",
                )
    if check is None and servers:
        from skilltest.mcp import check_servers

        check = check_servers
    found = check(list(servers.values())) if check is not None and servers else {}
    listed = {name: tools.tools for name, tools in found.items()}
    for scenario in scenarios:
        own = {server.name: listed.get(server.name, ()) for server in scenario_servers(scenario)}
        for mock in scenario.world.mcp if scenario.world is not None else ():
            if mock.name in own:
                raise SuiteError(
                    f"the world's mock MCP server {mock.name!r} has the name of an MCP server "
                    "the scenario starts (config.mcp_servers or its plugin's)",
                    location=mock.location,
                    fix=f"rename one of them: only one server can answer mcp__{mock.name}__* tools",
                )
            # A mock lists the tools its world file declares: nothing to start to learn them.
            own[mock.name] = tuple(tool.name for tool in mock.tools)
        own.update(mock_tools(scenario))
        expected = scenario.expected
        check_rubric_tools(
            {
                "required_tools": expected.required_tools,
                "recommended_tools": expected.recommended_tools,
                "tool_ordering": [tool for chain in expected.tool_ordering for tool in chain],
            },
            own,
            location=scenario.location,
        )
    return listed
