"""``skilltest mcp contract``: a plugin's eval mocks held against its real stdio server (a small
server on the standard library, started as the plugin's .mcp.json says)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from skilltest.cli import main
from skilltest.mcp.contract import MockedTool, compare_tools
from tests.projects import write_files

SERVER = """\
import json, pathlib, sys
from skilltest.mcp.stdio_server import Tool, serve

listed = json.loads((pathlib.Path(__file__).parent / "served.json").read_text())
serve(
    name="telemetry",
    version="1",
    tools=[Tool(t["name"], t.get("description", ""), t["inputSchema"]) for t in listed],
    call=lambda name, arguments: ("{}", False),
)
"""

QUERY_LOGS = {
    "name": "query_logs",
    "description": "Run a LogQL query over the last `since`.",
    "inputSchema": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "since": {"type": "string"}},
        "required": ["query", "since"],
    },
}
SEARCH_TRACES = {
    "name": "search_traces",
    "description": "Find traces of `service`.",
    "inputSchema": {
        "type": "object",
        "properties": {"service": {"type": "string"}},
        "required": ["service"],
    },
}
GET_METRICS = {
    "name": "get_metrics",
    "description": "A metric's values.",
    "inputSchema": {"type": "object", "properties": {"metric": {"type": "string"}}},
}


def write_plugin(root: Path, served: list[dict[str, Any]], mocked: list[dict[str, Any]]) -> Path:
    """A plugin whose server ``telemetry`` lists ``served``, with eval mocks listing ``mocked``."""
    mcp = {
        "mcpServers": {
            "telemetry": {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/server.py"]}
        }
    }
    return write_files(
        root,
        {
            ".claude-plugin/plugin.json": json.dumps({"name": "observability"}),
            ".mcp.json": json.dumps(mcp),
            "server.py": SERVER,
            "served.json": json.dumps(served),
            "evals/error-spike/prompt.md": "Count the errors in checkout.\n",
            "evals/error-spike/graders/asked.md": "---\ntype: regex\ntarget: mock_calls\n---\nquery\n",
            "evals/mocks/telemetry/_tools.json": json.dumps({"tools": mocked}, indent=2),
            "evals/mocks/telemetry/query_logs.md": '{"result": []}\n',
            "evals/mocks/telemetry/search_traces.md": '{"traces": []}\n',
        },
    )


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_an_unchanged_server_and_mock_are_the_same(in_tmp, capsys):
    write_plugin(in_tmp / "plugin", [QUERY_LOGS, SEARCH_TRACES], [QUERY_LOGS, SEARCH_TRACES])
    assert main(["mcp", "contract", "plugin"]) == 0
    out = capsys.readouterr().out
    assert out == (
        "telemetry (plugin/.mcp.json#/mcpServers/telemetry) against plugin/evals/mocks/telemetry/\n"
        "  same                 query_logs\n"
        "  same                 search_traces\n"
        "2 tools against 1 mock: 2 same, 0 drifted\n"
    )


def test_a_tool_added_and_a_parameter_renamed_are_reported_where_to_change_them(in_tmp, capsys):
    renamed = json.loads(json.dumps(QUERY_LOGS))
    schema = renamed["inputSchema"]
    schema["properties"] = {"query": {"type": "string"}, "window": {"type": "string"}}
    schema["required"] = ["query", "window"]
    write_plugin(
        in_tmp / "plugin", [renamed, SEARCH_TRACES, GET_METRICS], [QUERY_LOGS, SEARCH_TRACES]
    )
    assert main(["mcp", "contract", "plugin/evals/error-spike"]) == 1
    out = capsys.readouterr().out
    assert out == (
        "telemetry (plugin/.mcp.json#/mcpServers/telemetry) against plugin/evals/mocks/telemetry/\n"
        "  tool added           get_metrics: the server has it, the mock does not\n"
        "                         at plugin/evals/mocks/telemetry/_tools.json\n"
        "  parameter renamed    query_logs: since -> window (string)\n"
        "                         at plugin/evals/mocks/telemetry/_tools.json#/tools/0/inputSchema/properties/since\n"
        "  same                 search_traces\n"
        "3 tools against 1 mock: 1 same, 2 drifted (1 tool added, 1 parameter renamed)\n"
    )
    # docs/plugins.md shows this output as printed for a plugin at plugins/observability.
    docs = (Path(__file__).resolve().parents[2] / "docs" / "plugins.md").read_text()
    assert out.replace("plugin/", "plugins/observability/") in docs


def test_json_lists_each_tool_and_its_drifts(in_tmp, capsys):
    write_plugin(in_tmp / "plugin", [QUERY_LOGS], [QUERY_LOGS, SEARCH_TRACES])
    assert main(["mcp", "contract", "plugin/evals", "--json"]) == 1
    captured = capsys.readouterr()
    (contract,) = json.loads(captured.out)["contracts"]
    assert contract["tools"][1] == {
        "tool": "search_traces",
        "status": "drift",
        "drifts": [
            {
                "kind": "tool removed",
                "detail": "the mock has it, the server does not",
                "file": str(in_tmp / "plugin/evals/mocks/telemetry/_tools.json"),
                "pointer": "/tools/1",
            }
        ],
    }
    assert captured.err == "2 tools against 1 mock: 1 same, 1 drifted (1 tool removed)\n"


def test_a_server_that_does_not_start_exits_2_naming_its_declaration_and_the_fix(in_tmp, capsys):
    plugin = write_plugin(in_tmp / "plugin", [QUERY_LOGS], [QUERY_LOGS])
    (plugin / "server.py").write_text(
        "import sys\nprint('cannot open the index: permission denied', file=sys.stderr)\n"
        "sys.exit(3)\n"
    )
    assert main(["mcp", "contract", "plugin"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"skilltest: error: MCP server 'telemetry' ({sys.executable} {plugin}/server.py) exited "
        "or closed its stdout before answering initialize (Connection closed)\n"
        f"  declared at {plugin}/.mcp.json#/mcpServers/telemetry\n"
        "  its stderr ends with:\n"
        "    cannot open the index: permission denied\n"
        f"  fix: run `{sys.executable} {plugin}/server.py` yourself and make it start\n"
    )


def test_a_failing_server_s_stderr_keeps_the_api_key_out(in_tmp, capsys, monkeypatch):
    key = "sk-ant-api03-" + "k3y" * 20
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    plugin = write_plugin(in_tmp / "plugin", [QUERY_LOGS], [QUERY_LOGS])
    (plugin / "server.py").write_text(
        "import os, sys\nprint('env:', os.environ['ANTHROPIC_API_KEY'], file=sys.stderr)\n"
        "sys.exit(1)\n"
    )
    assert main(["mcp", "contract", "plugin"]) == 2
    err = capsys.readouterr().err
    assert "    env: " in err
    assert key not in err
    assert key[:20] not in err


def test_a_mock_of_no_declared_server_is_noted_and_not_compared(in_tmp, capsys):
    plugin = write_plugin(
        in_tmp / "plugin", [QUERY_LOGS, SEARCH_TRACES], [QUERY_LOGS, SEARCH_TRACES]
    )
    write_files(plugin, {"evals/mocks/weather/get_forecast.md": "sunny\n"})
    assert main(["mcp", "contract", "plugin"]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        f"skilltest: note: {plugin}/evals/mocks/weather: stands in for no server the plugin "
        "declares (telemetry): not compared\n"
    )
    assert captured.out.endswith("2 tools against 1 mock: 2 same, 0 drifted\n")


def test_a_plugin_without_mocks_exits_2_with_the_fix(in_tmp, capsys):
    plugin = write_plugin(in_tmp / "plugin", [QUERY_LOGS], [QUERY_LOGS])
    for path in sorted((plugin / "evals/mocks/telemetry").iterdir()):
        path.unlink()
    assert main(["mcp", "contract", "plugin"]) == 2
    assert capsys.readouterr().err == (
        "skilltest: error: plugin: no MCP mocks here (no mocks/<server>/ folder with a <tool>.md)\n"
        "  fix: write mocks/telemetry/_tools.json (the server's tools/list) and a <tool>.md per "
        "tool, in the eval folder or a case folder\n"
    )


def test_mcp_without_a_subcommand_prints_its_usage_and_exits_2(capsys):
    assert main(["mcp"]) == 2
    assert "contract" in capsys.readouterr().err


def schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


TOOLS = Path("mocks/telemetry/_tools.json")


@pytest.mark.parametrize(
    ("mocked", "served", "expected"),
    [
        pytest.param(
            schema({"a": {"type": "string"}}),
            schema({"a": {"type": "integer"}}),
            [
                (
                    "type changed",
                    "a: mock string, server integer",
                    "/tools/0/inputSchema/properties/a/type",
                )
            ],
            id="type",
        ),
        pytest.param(
            schema({"a": {"type": "string"}}),
            schema({"a": {"type": "string"}}, ("a",)),
            [
                (
                    "required changed",
                    "a: mock optional, server required",
                    "/tools/0/inputSchema/required",
                )
            ],
            id="required",
        ),
        pytest.param(
            schema({"a": {"type": "string"}}),
            schema({"b": {"type": "integer"}}, ("b",)),
            [
                (
                    "parameter added",
                    "b (integer, required): the mock does not list it",
                    "/tools/0/inputSchema/properties",
                ),
                (
                    "parameter removed",
                    "a (string): the server no longer takes it",
                    "/tools/0/inputSchema/properties/a",
                ),
            ],
            id="a removed and an added of another type are not a rename",
        ),
        pytest.param(
            schema({"f": {"type": "object", "properties": {"level": {"type": "string"}}}}),
            schema({"f": {"type": "object", "properties": {"lvl": {"type": "string"}}}}),
            [
                (
                    "parameter renamed",
                    "f.level -> f.lvl (string)",
                    "/tools/0/inputSchema/properties/f/properties/level",
                )
            ],
            id="nested",
        ),
        pytest.param(
            {**schema({"a": {"type": "string", "title": "A"}}), "title": "Args"},
            schema({"a": {"type": "string", "description": "the a"}}),
            [],
            id="titles and descriptions of parameters do not count",
        ),
    ],
)
def test_schema_drifts(mocked, served, expected):
    tool = MockedTool("t", TOOLS, "/tools/0", "d", mocked)
    (contract,) = compare_tools(
        [tool], [{"name": "t", "description": "d", "inputSchema": served}], tools_file=TOOLS
    )
    assert [(d.kind, d.detail, d.pointer) for d in contract.drifts] == expected
    assert all(d.file == TOOLS for d in contract.drifts)


def test_a_changed_description_and_an_unlisted_tool():
    described = MockedTool("t", TOOLS, "/tools/0", "old words", schema({}))
    unlisted = MockedTool("u", Path("mocks/telemetry/u.md"))
    contracts = compare_tools(
        [described, unlisted],
        [
            {"name": "t", "description": "new words", "inputSchema": schema({})},
            {"name": "u", "inputSchema": schema({})},
        ],
        tools_file=TOOLS,
    )
    assert [(d.kind, d.detail, d.location) for c in contracts for d in c.drifts] == [
        ("description changed", "server: 'new words'", f"{TOOLS}#/tools/0/description"),
        (
            "unlisted",
            "_tools.json does not list it: the mock offers it with no description and any input",
            "mocks/telemetry/u.md",
        ),
    ]


def test_an_http_server_is_connected_to_as_the_plugin_declares_it(in_tmp, capsys, http_server):
    forecast = {
        "name": "get_forecast",
        "description": "Tomorrow's forecast for `city`.",
        "inputSchema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    }
    plugin = write_plugin(in_tmp / "plugin", [], [forecast])
    (plugin / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"weather": {"type": "http", "url": http_server}}})
    )
    (plugin / "evals/mocks/telemetry").rename(plugin / "evals/mocks/weather")
    (plugin / "evals/mocks/weather/get_forecast.md").write_text("sunny\n")
    for name in ("query_logs.md", "search_traces.md"):
        (plugin / "evals/mocks/weather" / name).unlink()
    assert main(["mcp", "contract", "plugin"]) == 0
    assert capsys.readouterr().out == (
        "weather (plugin/.mcp.json#/mcpServers/weather) against plugin/evals/mocks/weather/\n"
        "  same                 get_forecast\n"
        "1 tool against 1 mock: 1 same, 0 drifted\n"
    )


def test_a_case_s_own_mock_is_compared_with_the_eval_folder_s_listing_it_adds_to(in_tmp, capsys):
    plugin = write_plugin(in_tmp / "plugin", [QUERY_LOGS, GET_METRICS], [QUERY_LOGS])
    (plugin / "evals/mocks/telemetry/search_traces.md").unlink()
    write_files(plugin, {"evals/error-spike/mocks/telemetry/query_logs.md": "[]\n"})
    assert main(["mcp", "contract", "plugin/evals/error-spike"]) == 1
    assert capsys.readouterr().out == (
        "telemetry (plugin/.mcp.json#/mcpServers/telemetry) against "
        "plugin/evals/error-spike/mocks/telemetry/\n"
        "  tool added           get_metrics: the server has it, the mock does not\n"
        "                         at plugin/evals/mocks/telemetry/_tools.json\n"
        "  same                 query_logs\n"
        "2 tools against 1 mock: 1 same, 1 drifted (1 tool added)\n"
    )
