"""MCP mocks as Claude Code's plugin eval writes them (mocks/<server>/<tool>.md): read and
checked with the CLI's words, guards and templates as it applies them, served as a real MCP
server over stdio with every call recorded, agents answering through the run's relay."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from skilltest.errors import InputError
from skilltest.evalcases import read_mocks
from skilltest.evalcases.expect import guard_problems, render, violation
from skilltest.evalcases.mocks import mock_layers
from skilltest.evalcases.responder import Answered, parse_reply, system_prompt, user_prompt
from skilltest.scenarios.mocks import AgentRelay, mocks_for, run_mocks

from ..answers import ListedAnswers
from ..projects import write_files

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "observability" / "evals"


def test_the_example_mocks_read_as_written():
    [telemetry], notes = read_mocks([EXAMPLE / "mocks"])
    assert notes == ()
    assert telemetry.name == "telemetry"
    assert [t.name for t in telemetry.tools] == ["query_logs", "search_traces"]
    fixed, agent = telemetry.responders["query_logs"], telemetry.responders["search_traces"]
    assert (fixed.kind, fixed.expect) == ("fixed", {"since": ["1h", "30m", "15m"]})
    assert agent.kind == "agent" and agent.abort_when and "min_duration" in agent.abort_when
    assert telemetry.listings["search_traces"].input_schema["required"] == [
        "service",
        "min_duration",
    ]


def test_later_folders_win_and_a_server_agent_answers_its_tools(tmp_path):
    first = write_files(
        tmp_path / "evals" / "mocks",
        {
            "wx/get.md": "old",
            "wx/_server.md": "---\ntype: agent\ntools: [get, put]\n---\nA weather service.",
        },
    )
    second = write_files(tmp_path / "evals" / "case" / "mocks", {"wx/get.md": "new"})
    [wx], _ = read_mocks([first, second])
    assert wx.responders["get"].text == "new"
    assert wx.responders["put"].kind == "agent"
    assert mock_layers(tmp_path / "evals" / "case", tmp_path / "evals") == (first, second)


@pytest.mark.parametrize(
    ("files", "where", "message"),
    [
        (
            {"wx/get.md": "---\ntype: canned\n---\nx"},
            "wx/get.md:2",
            "mocks/wx/get.md: type: must be fixed or agent",
        ),
        (
            {"wx/get.md": "---\nreply: x\n---\nx"},
            "wx/get.md:2",
            "mocks/wx/get.md: reply: unrecognized key (keys: type, expect, error, tools, abort_when)",
        ),
        (
            {"wx/get.md": "---\ntype: agent\nerror: true\n---\nx"},
            "wx/get.md",
            "mocks/wx/get.md: `error:` applies to fixed responders only",
        ),
        (
            {"wx/get.md": "---\ntype: agent\n---\n"},
            "wx/get.md",
            "mocks/wx/get.md: an agent responder needs a description of the server it plays as its body",
        ),
        (
            {"wx/get.md": "---\nabort_when: x\n---\nok"},
            "wx/get.md",
            "mocks/wx/get.md: `abort_when:` needs `type: agent`",
        ),
        (
            {"wx/get.md": "TODO: replace with the canned result this tool should return"},
            "wx/get.md",
            "mocks/wx/get.md: still holds the scaffolded placeholder",
        ),
        (
            {"wx/get.md": "---\ntools: [a]\n---\nok"},
            "wx/get.md",
            "mocks/wx/get.md: `tools:` belongs in _server.md",
        ),
        (
            {"wx/_server.md": "ok"},
            "wx/_server.md",
            "mocks/wx/_server.md: only `type: agent` is meaningful here",
        ),
        (
            {"wx/_server.md": "---\ntype: agent\n---\nA server."},
            "wx/_server.md",
            "mocks/wx/_server.md: an agent answering several tools needs `tools: [...]`",
        ),
        (
            {"wx/_server.md": "---\ntype: agent\ntools: [a, b]\nexpect: {x: y}\n---\nA server."},
            "wx/_server.md",
            "mocks/wx/_server.md: `expect:` here would guard all 2 tools it answers",
        ),
        (
            {"wx/get.md": "---\nexpect: {x: []}\n---\nok"},
            "wx/get.md:2",
            "mocks/wx/get.md: expect.x: an empty list of allowed values can never be satisfied",
        ),
        (
            {"wx/get.md": "---\nexpect: {x: /(a|b)/}\n---\nok"},
            "wx/get.md:2",
            "expect.x: /(a|b)/ — expect: /regex/ guards use a small dialect",
        ),
        (
            {"wx/get.md": "---\nexpect: {x: /a/g}\n---\nok"},
            "wx/get.md:2",
            "expect.x: /a/g — only the i and s flags are supported in expect: guards",
        ),
        (
            {"wx/get tool.md": "x"},
            "wx/get tool.md",
            'name responder files after the tool (letters, digits, "_" and "-" only)',
        ),
        (
            {"w x/get.md": "x"},
            "w x",
            "mocks/w x/: name the directory after the server segment of the tool name",
        ),
        ({"wx__y/get.md": "x"}, "wx__y", '"__" is the tool-name separator'),
        ({"wx/_tools.json": "{"}, "wx/_tools.json", "mocks/wx/_tools.json: not valid JSON"),
        (
            {"wx/_tools.json": '{"tools": [{"description": "x"}]}'},
            "wx/_tools.json",
            "expected a saved tools/list response",
        ),
    ],
)
def test_a_bad_mock_names_its_file_place_and_fix(tmp_path, files, where, message):
    layer = write_files(tmp_path / "mocks", files)
    with pytest.raises(InputError) as caught:
        read_mocks([layer])
    text = str(caught.value)
    assert text.startswith(f"{layer / where}: ") or text.startswith(f"{layer / where}\n"), text
    assert message in text and "\n  fix: " in text


def test_a_server_folder_with_no_responder_is_a_note(tmp_path):
    layer = write_files(tmp_path / "mocks", {"wx/_tools.json": '{"tools": []}'})
    assert read_mocks([layer]) == (
        (),
        ("mocks: mocks/wx/ has no <tool>.md responders — nothing is mocked for wx",),
    )


# --- guards and templates -------------------------------------------------------------------------


GUARDS = {
    "project": "OPS",
    "since": ["1h", "30m"],
    "limit": "number",
    "done": "false",
    "title": "/^fix: .+$/i",
    "filter": {"status": "open"},
    "tags": {"0": "urgent"},
}


@pytest.mark.parametrize(
    ("arguments", "broken"),
    [
        (
            {
                "project": "OPS",
                "since": "1h",
                "limit": 5,
                "done": False,
                "title": "Fix: x",
                "filter": {"status": "open"},
                "tags": ["urgent"],
            },
            None,
        ),
        ({"project": "DEV"}, 'project = "DEV" is not "OPS"'),
        ({"project": "OPS", "since": "2d"}, 'since = "2d" is not one of [1h, 30m]'),
        ({"project": "OPS", "since": "1h", "limit": "5"}, 'limit = "5" is not a number'),
        ({"project": "OPS", "since": "1h", "limit": 5, "done": True}, 'done = true is not "false"'),
        (
            {"project": "OPS", "since": "1h", "limit": 5, "done": False, "title": "feat: x"},
            'title = "feat: x" does not match /^fix: .+$/i',
        ),
        (
            {"project": "OPS", "since": "1h", "limit": 5, "done": False, "title": "fix: y"},
            'filter.status = (missing) is not "open"',
        ),
        (
            {
                "project": "OPS",
                "since": "1h",
                "limit": 5,
                "done": False,
                "title": "fix: y",
                "filter": {"status": "open"},
                "tags": [],
            },
            'tags.0 = (missing) is not "urgent"',
        ),
    ],
)
def test_a_guard_is_applied_as_the_cli_applies_it(arguments, broken):
    assert guard_problems(GUARDS) == []
    assert violation(arguments, GUARDS) == broken


def test_a_canned_answer_echoes_the_call_and_reads_fixtures(tmp_path):
    (tmp_path / "day-mon.json").write_text('{"sun": true}')
    text, problem = render(
        '{"q": "{{input.q}}", "n": {{ input.page.n }}, "x": "{{input.none}}"} {{file:day-{input.day}.json}}',
        {"q": 'a "b"', "page": {"n": 2}, "day": "mon"},
        tmp_path,
    )
    assert (text, problem) == ('{"q": "a "b"", "n": 2, "x": ""} {"sun": true}', "")
    assert render("{{file:../secret}}", {}, tmp_path) == (
        None,
        "{{file:../secret}} names a path outside the mock's directory",
    )
    assert (
        render("{{file:{input.day}}}", {"day": "../x"}, tmp_path)[1]
        == '{input.day} = "../x" is not a plain file-name segment'
    )


# --- the agent responder --------------------------------------------------------------------------


def test_an_agent_responder_is_asked_in_the_cli_s_words():
    system = system_prompt("telemetry", "- no min_duration", "A tracing backend.")
    assert system.startswith(
        'You are standing in for the MCP server "telemetry" inside an automated evaluation'
    )
    assert "\n\nThe conditions:\n- no min_duration" not in system
    assert (
        'reply with a single line starting "ABORT: " followed by a short reason naming the condition. The conditions:\n- no min_duration\n\n'
        in system
    )
    assert system.endswith(
        "The author's description of the server you are playing follows.\n\nA tracing backend."
    )
    assert 'Never reply with a line starting "ABORT:".' in system_prompt("s", None, "d")
    history = [
        Answered("search_traces", {"service": "a"}, "ok", "[]"),
        Answered("get", {"id": 1}, "tool_error", "no such id"),
    ]
    assert user_prompt("search_traces", {"service": "checkout"}, history) == (
        "Earlier calls this run:\n"
        '- search_traces({"service":"a"}) → []\n'
        '- get({"id":1}) → [tool_error] no such id\n\n'
        'Current call: search_traces\nArguments:\n{\n  "service": "checkout"\n}'
    )
    assert parse_reply("ABORT: asked for a week", can_abort=True) == ("abort", "asked for a week")
    assert parse_reply("ABORT: asked for a week", can_abort=False) == (
        "tool_error",
        "asked for a week",
    )
    assert parse_reply("ERROR:", can_abort=True) == ("tool_error", "error")
    assert parse_reply(' {"a": 1} ', can_abort=True) == ("ok", '{"a": 1}')


# --- served in a run ------------------------------------------------------------------------------


async def _serve(
    tmp_path: Path, calls: list[tuple[str, dict[str, Any]]], model: ListedAnswers
) -> tuple[Any, Any]:
    [telemetry], _ = read_mocks([EXAMPLE / "mocks"])
    (tmp_path / "run").mkdir()
    mocks = run_mocks(
        mocks_for([telemetry], None, plugin_servers=True),
        tmp_path / "run",
        relay=tmp_path / "run" / "relay.sock",
    )
    assert mocks is not None
    [server] = mocks.servers
    params = StdioServerParameters(command=server.command, args=list(server.args))

    async def runner() -> ListedAnswers:
        return model

    async with (
        AgentRelay(mocks, runner, "judge-model"),
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        results = [await session.call_tool(name, arguments) for name, arguments in calls]
    return mocks, (tools, results)


def test_a_mock_folder_is_a_real_mcp_server_and_every_call_is_recorded(tmp_path):
    model = ListedAnswers('{"traces": [{"trace_id": "4bf9"}]}', "ABORT: no min_duration")
    mocks, (tools, results) = asyncio.run(
        _serve(
            tmp_path,
            [
                ("query_logs", {"query": "count", "since": "1h"}),
                ("search_traces", {"service": "checkout", "min_duration": "500ms"}),
                ("search_traces", {"service": "checkout"}),
                ("query_logs", {"query": "count", "since": "7d"}),
                ("delete_logs", {}),
            ],
            model,
        )
    )
    assert [t.name for t in tools.tools] == ["query_logs", "search_traces"]
    assert tools.tools[1].input_schema["required"] == ["service", "min_duration"]
    seen = [(r.is_error, r.content[0].text) for r in results]
    assert seen[0] == (
        False,
        '{"query": "count", "since": "1h", "result": [{"level": "error", "service_name": "checkout", "count": 1342}, {"level": "warn", "service_name": "checkout", "count": 87}]}',
    )
    assert seen[1] == (False, '{"traces": [{"trace_id": "4bf9"}]}')
    assert seen[2] == (
        True,
        f"eval aborted by mock {mocks.nonce}: telemetry/search_traces — no min_duration",
    )
    assert seen[3] == (
        True,
        f'eval aborted by mock {mocks.nonce}: telemetry/query_logs — input violates expect: since = "7d" is not one of [1h, 30m, 15m]',
    )
    assert seen[4] == (True, "no mock for telemetry/delete_logs")
    # The second agent call saw the first one as history.
    assert "Earlier calls this run:\n- search_traces(" in model.requests[1].prompt
    assert [(r["tool"], r["verdict"], r["responder"]) for r in mocks.records()] == [
        ("query_logs", "ok", "fixed"),
        ("search_traces", "ok", "agent"),
        ("search_traces", "abort", "agent"),
        ("query_logs", "abort", "fixed"),
        ("delete_logs", "tool_error", "fixed"),
    ]
    aborted = mocks.aborted()
    assert aborted is not None and aborted.vetoed
    assert (
        aborted.evidence == "a mock aborted the run: mocks/telemetry/search_traces: no min_duration"
    )
    stop = {
        "type": "user",
        "message": {"content": [{"type": "tool_result", "content": seen[2][1]}]},
    }
    assert (
        mocks.stop_reason(stop)
        == "a mock aborted the run: telemetry/search_traces — no min_duration"
    )
