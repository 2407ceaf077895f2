"""Mock MCP servers from a world's ``mcp:`` section.

The server is started as a run's ``--mcp-config`` starts it (the entry
:meth:`WorldInstance.mcp_servers` gives) and spoken to by the mcp SDK's own client; its calls
come back through :attr:`WorldInstance.calls` and are judged like the fakes' HTTP calls. The last
test runs a scenario suite through the real claude CLI against the emulator.
"""

from __future__ import annotations

import datetime
import json
import shutil
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from skilltest.errors import SuiteError, WorldError
from skilltest.plugins import McpServer
from skilltest.report.files import read_results
from skilltest.scenarios.suite import load_scenario_suite
from skilltest.scenarios.tools import check_scenario_tools
from skilltest.world.expect import expectations_from
from skilltest.world.instance import PROXY_ENV, WorldInstance
from skilltest.world.mcp_mock import answer, mock_from_dict, mock_to_dict, read_calls
from skilltest.world.model import McpMock, McpTool, World, load_world
from skilltest.world.score import judge_world
from tests.layers import run_layer

WORLD = Path(__file__).with_name("worlds") / "mcp_tickets.yaml"


@pytest.fixture(scope="module")
def world() -> World:
    return load_world(WORLD.resolve())


@pytest.fixture
def instance(world: World, tmp_path: Path) -> WorldInstance:
    return WorldInstance(world, profile=None, folder=tmp_path / "world", mode=PROXY_ENV)


async def _session(server: McpServer, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    params = StdioServerParameters(
        command=server.command, args=list(server.args), env=dict(server.env) or None
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        results = [await session.call_tool(name, arguments) for name, arguments in calls]
    return {
        "tools": [
            tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools.tools
        ],
        "results": [(result.is_error, result.content[0].text) for result in results],  # type: ignore[union-attr]
    }


def session(server: McpServer, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return anyio.run(_session, server, calls)


def test_the_mock_answers_tools_list_and_calls_and_records_every_call(instance, world):
    (server,) = instance.mcp_servers()
    assert server.to_config()["args"][:2] == ["-m", "skilltest.world.mcp_mock"]
    before = time.monotonic()
    seen = session(
        server,
        [
            ("lookup", {"id": "INC-1042"}),
            ("assign", {"id": "INC-1042", "team": "platform-team"}),
            ("assign", {"id": "INC-1042", "team": "sre"}),
            ("reopen", {"id": "INC-1042"}),
        ],
    )
    after = time.monotonic()

    assert [(tool["name"], tool["description"]) for tool in seen["tools"]] == [
        ("lookup", "Look up a ticket by its id."),
        ("assign", "Give a ticket to a team."),
        ("close", "Close a ticket for good."),
    ]
    assert seen["tools"][1]["inputSchema"]["required"] == ["id", "team"]
    lookup, assigned, unmatched, unknown = seen["results"]
    # A result that is not text is sent as JSON text.
    assert lookup == (False, '{"id": "INC-1042", "owner": "payments-team", "version": 3}')
    assert assigned == (False, "INC-1042 now belongs to platform-team")
    where = f"{WORLD.resolve()}#/mcp/desk/tools/1/responses"
    # The agent reads what a real server would say; the author's hint is a run warning.
    assert unmatched == (
        True,
        'Not found: assign has no result for {"id": "INC-1042", "team": "sre"}',
    )
    assert unknown == (True, "Unknown tool: reopen")
    assert instance.errors == [
        "no response of mock MCP server 'desk' matches the call of tool 'assign' with arguments "
        '{"id": "INC-1042", "team": "sre"} (the responses match: {"id": "INC-1042", "team": '
        f'"platform-team"}}); add a response whose match these arguments meet under {where}',
        "mock MCP server 'desk' has no tool 'reopen' (called with {\"id\": \"INC-1042\"}); its "
        f"tools: lookup, assign, close; declare it under {WORLD.resolve()}#/mcp/desk/tools",
    ]

    calls = instance.calls
    assert [(c.label(), c.host, c.status, c.write, c.body) for c in calls] == [
        ("mcp desk/lookup", "mcp:desk", 200, False, {"id": "INC-1042"}),
        ("mcp desk/assign", "mcp:desk", 200, True, {"id": "INC-1042", "team": "platform-team"}),
        ("mcp desk/assign", "mcp:desk", 404, True, {"id": "INC-1042", "team": "sre"}),
        ("mcp desk/reopen", "mcp:desk", 404, False, {"id": "INC-1042"}),
    ]
    # The server's clock is this process's: calls fall between the moments taken around them.
    assert all(before <= c.at <= after for c in calls)
    assert [c.route for c in calls] == [
        "mcp desk/lookup",
        "mcp desk/assign",
        "mcp desk/assign",
        None,
    ]


def test_mcp_calls_are_judged_by_the_names_expected_writes_and_forbidden_use(instance):
    (server,) = instance.mcp_servers()
    session(
        server,
        [
            ("assign", {"id": "INC-1042", "team": "platform-team"}),
            ("assign", {"id": "INC-1042", "team": "platform-team"}),
            ("close", {"id": "INC-1042"}),
        ],
    )
    expect = expectations_from(
        {"writes": ["MCP desk/assign"], "forbidden": ["mcp desk/close"]}, "suite.yaml#/s/0"
    )
    judged = judge_world(
        expect,
        calls=instance.calls,
        violations=[],
        turn_starts=[0.0],
        final_text="",
        mode=instance.mode,
        profile=None,
        fault_profile_active=False,
        state_diff={},
    )
    assert judged.writes == ("mcp desk/assign", "mcp desk/assign", "mcp desk/close")
    assert judged.duplicates == ("mcp desk/assign",)
    assert judged.forbidden == ("mcp desk/close",)
    assert judged.violations == ("forbidden mcp desk/close", "duplicate mcp desk/assign")


def test_matching_is_json_equality_and_dates_match_their_text():
    tool = McpTool(
        name="find",
        description="",
        input_schema={"type": "object"},
        responses=(
            ({"flag": 1}, "one"),
            ({"day": datetime.date(2024, 5, 1)}, "may day"),
            ({"n": 7}, "seven"),
            ({}, "anything else"),
        ),
    )
    mock = mock_from_dict(mock_to_dict(McpMock(name="m", tools=(tool,), location="w.yaml#/mcp/m")))
    said = {
        json.dumps(args): answer(mock, "find", args, 0.0).text
        for args in ({"flag": True}, {"flag": 1}, {"day": "2024-05-01"}, {"n": 7.0}, {"n": "7"})
    }
    assert said == {
        '{"flag": true}': "anything else",
        '{"flag": 1}': "one",
        '{"day": "2024-05-01"}': "may day",
        '{"n": 7.0}': "seven",
        '{"n": "7"}': "anything else",
    }


def test_a_call_line_cut_short_is_left_out(tmp_path):
    path = tmp_path / "calls.jsonl"
    mock = McpMock(name="m", tools=(McpTool("t", "", {}, (({}, "ok"),)),))
    whole = json.dumps(answer(mock, "t", {}, 1.0).call.to_dict())
    path.write_text(whole + "\n" + whole[:20])
    assert [call.label() for call in read_calls(path)] == ["mcp m/t"]
    assert read_calls(tmp_path / "none.jsonl") == []


def test_a_mock_may_not_take_the_name_of_another_server_of_the_run(instance):
    other = McpServer(name="desk", command="x", origin="suite.yaml#/config/mcp_servers/desk")
    with pytest.raises(WorldError) as caught:
        instance.mcp_servers(beside=[other])
    assert caught.value.message == (
        "the world's mock MCP server 'desk' has the name of the MCP server declared at "
        "suite.yaml#/config/mcp_servers/desk"
    )
    assert caught.value.location == f"{WORLD.resolve()}#/mcp/desk"


SUITE = """\
skill: desk
model_script: desk.script.yaml
world: {world}
repetitions: 3
config:
  max_turns: 6
  timeout_ms: 120000
scenarios:
  - id: assigns-once
    prompt: "Give INC-1042 to the platform team."
    expected:
      required_tools: [mcp__desk__lookup]
      anti_patterns: [mcp__desk__close]
      writes: ["mcp desk/assign"]
      forbidden: ["mcp desk/close"]
    expected_skills: [desk]
"""

SKILL = """\
---
name: desk
description: use this skill for anything about help desk tickets
---
Look a ticket up first, then assign it once with the desk's assign tool; never close it.
"""

# With the skill the stand-in loads it, looks the ticket up and assigns it once; without it, it
# assigns, assigns again and closes the ticket.
SCRIPT = """\
schema_version: 1
rules:
  - id: load
    when: {skill: desk, turn: 1}
    reply: {tool_calls: [{name: Skill, input: {skill: desk}}]}
  - id: look-up
    when: {skill_loaded: desk, turn: 2}
    reply: {tool_calls: [{name: mcp__desk__lookup, input: {id: INC-1042}}]}
  - id: assign-once
    when: {skill_loaded: desk, turn: 3}
    reply:
      tool_calls: [{name: mcp__desk__assign, input: {id: INC-1042, team: platform-team}}]
  - id: done
    when: {skill_loaded: desk, turn: 4}
    reply: {text: "INC-1042 now belongs to platform-team."}
  - id: unguided
    when: {turn: 1}
    reply:
      tool_calls:
        - {name: mcp__desk__assign, input: {id: INC-1042, team: platform-team}}
        - {name: mcp__desk__assign, input: {id: INC-1042, team: platform-team}}
        - {name: mcp__desk__close, input: {id: INC-1042}}
  - id: unguided-done
    when: {turn: 2}
    reply: {text: "Assigned INC-1042 and closed it."}
"""


def write_suite(tmp_path: Path) -> Path:
    (tmp_path / "skills" / "desk").mkdir(parents=True)
    (tmp_path / "skills" / "desk" / "SKILL.md").write_text(SKILL)
    (tmp_path / "desk.script.yaml").write_text(SCRIPT)
    # The suite's world lies in its repository, as every file a suite names must.
    shutil.copyfile(WORLD, tmp_path / WORLD.name)
    suite = tmp_path / "desk.yaml"
    suite.write_text(SUITE.format(world=WORLD.name))
    return suite


def test_a_rubric_may_name_a_mock_tool_and_a_mock_may_not_shadow_a_config_server(tmp_path):
    suite = write_suite(tmp_path)
    loaded = load_scenario_suite(suite)
    assert check_scenario_tools(loaded.scenarios) == {}
    clash = suite.read_text().replace(
        "  timeout_ms: 120000\n", "  timeout_ms: 120000\n  mcp_servers: {desk: {command: x}}\n"
    )
    suite.write_text(clash)
    with pytest.raises(SuiteError) as caught:
        check_scenario_tools(load_scenario_suite(suite).scenarios, check=lambda servers: {})
    assert caught.value.location == f"{tmp_path / WORLD.name}#/mcp/desk"
    assert "has the name of an MCP server the scenario starts" in caught.value.message


@pytest.mark.cli
def test_a_scenario_run_through_claude_records_the_mock_calls(claude_bin, tmp_path, capsys):
    suite = write_suite(tmp_path)
    results = tmp_path / "results.json"
    options = ["--claude", claude_bin, "--skills-dir", tmp_path / "skills", "-j", "2"]
    code = run_layer("scenarios", suite, tmp_path, *options)
    out = capsys.readouterr().out
    assert code == 0, out
    (scenario,) = read_results(results, "scenarios")["scenarios"]
    assert (scenario["verdict"], scenario["passed"]) == ("improved", True)
    runs = {(run["arm"], run["rep"]): run for run in scenario["runs"]}
    for rep in (0, 1):
        with_world = runs["with_skill", rep]["world"]
        assert [
            (c["method"], c["host"], c["path"], c["status"], c["turn"]) for c in with_world["calls"]
        ] == [
            ("mcp", "mcp:desk", "desk/lookup", 200, 0),
            ("mcp", "mcp:desk", "desk/assign", 200, 0),
        ]
        assert (with_world["writes"], with_world["violations"]) == (["mcp desk/assign"], [])
        without_world = runs["without_skill", rep]["world"]
        assert sorted(without_world["writes"]) == [
            "mcp desk/assign",
            "mcp desk/assign",
            "mcp desk/close",
        ]
        assert without_world["duplicates"] == ["mcp desk/assign"]
        assert without_world["forbidden"] == ["mcp desk/close"]
        assert without_world["authority_violation"] is True
    assert "forbidden mcp desk/close; duplicate mcp desk/assign" in out
