"""Health checks against real stdio servers: the fixture plugin's server written with the mcp
SDK, and servers that crash, hang, or speak something else."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest

from skilltest.cli import main
from skilltest.errors import McpServerError
from skilltest.mcp import ServerTools, check_servers, list_tools, probe_servers
from skilltest.plugins import McpServer, load_plugin
from tests.mcp.conftest import closed_port
from tests.projects import write_skill

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "observability"
START_S = 5.0
"""The limit given to a server that never answers: time enough, on a busy machine too, for it
to start and write what the check's message quotes."""


@pytest.fixture
def venv_python_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture's .mcp.json runs `python3`: the one first on PATH must have the mcp SDK."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def script_server(tmp_path: Path, name: str, code: str) -> McpServer:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(code))
    return McpServer(
        name=name,
        command=sys.executable,
        args=(str(path),),
        origin=f"suite.yaml#/config/mcp_servers/{name}",
    )


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"  # a zombie has exited; only its exit status is left


def test_the_fixture_server_lists_its_tools(venv_python_first):
    (server,) = load_plugin(FIXTURE).mcp_servers
    tools = anyio.run(lambda: list_tools(server, timeout_s=20))
    assert tools == ServerTools(
        server="telemetry",
        tools=("query_logs", "search_traces"),
        server_info={"name": "telemetry", "version": ""},
        protocol_version=tools.protocol_version,
    )
    assert tools.protocol_version  # whatever the SDKs agreed on


def test_a_server_that_crashes_at_start_shows_its_stderr(tmp_path):
    server = script_server(
        tmp_path,
        "crashing",
        """
        import sys
        print("starting telemetry", file=sys.stderr)
        print("error: cannot open /var/lib/telemetry/db: permission denied", file=sys.stderr)
        sys.exit(3)
        """,
    )
    with pytest.raises(McpServerError) as caught:
        check_servers([server], timeout_s=20)
    assert str(caught.value) == (
        f"MCP server 'crashing' ({sys.executable} {tmp_path}/crashing.py) exited or closed its stdout before answering initialize (Connection closed)\n"
        "  declared at suite.yaml#/config/mcp_servers/crashing\n"
        "  its stderr ends with:\n"
        "    starting telemetry\n"
        "    error: cannot open /var/lib/telemetry/db: permission denied\n"
        f"  fix: run `{sys.executable} {tmp_path}/crashing.py` yourself and make it start"
    )


def test_a_server_that_never_answers_times_out_and_is_stopped_with_its_children(tmp_path):
    pids = tmp_path / "pids"
    server = script_server(
        tmp_path,
        "silent",
        f"""
        import os, subprocess, sys, time
        child = subprocess.Popen(["sleep", "600"])
        open({str(pids)!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
        print("listening (not really)", file=sys.stderr, flush=True)
        time.sleep(600)  # never reads stdin, never answers, ignores its closing
        """,
    )
    started = time.monotonic()
    with pytest.raises(McpServerError) as caught:
        check_servers([server], timeout_s=START_S)
    assert time.monotonic() - started < 120  # not the server's 600 s
    message = str(caught.value)
    assert message.startswith(
        f"MCP server 'silent' ({sys.executable} {tmp_path}/silent.py) did not answer initialize within 5 s (stopped)\n"
    )
    assert "    listening (not really)\n" in message
    server_pid, child_pid = map(int, pids.read_text().split())
    deadline = time.monotonic() + 60
    while (alive(server_pid) or alive(child_pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(server_pid), "the server outlived its check"
    assert not alive(child_pid), "the server's child outlived its check"


def test_a_server_that_writes_plain_text_on_stdout_is_named_for_it(tmp_path):
    server = script_server(
        tmp_path,
        "chatty",
        """
        import sys
        print("Telemetry server v1 ready", flush=True)
        for line in sys.stdin:  # reads, never answers; exits when stdin closes
            pass
        """,
    )
    with pytest.raises(McpServerError) as caught:
        check_servers([server], timeout_s=START_S)
    message = str(caught.value)
    assert message.startswith("MCP server 'chatty' (")
    assert (
        "did not answer initialize within 5 s (stopped); it wrote what is not JSON-RPC to stdout: "
        in message
    )
    assert "Telemetry server v1 ready" in message
    assert message.endswith("  fix: write only JSON-RPC messages to stdout; log to stderr")


def test_a_server_of_another_protocol_version_is_refused(tmp_path):
    server = script_server(
        tmp_path,
        "ancient",
        """
        import json, sys
        request = json.loads(sys.stdin.readline())
        answer = {"protocolVersion": "1999-01-01", "capabilities": {}, "serverInfo": {"name": "ancient", "version": "0"}}
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": answer}), flush=True)
        sys.stdin.read()
        """,
    )
    with pytest.raises(McpServerError) as caught:
        check_servers([server], timeout_s=20)
    assert (
        "does not speak the MCP protocol skilltest does (initialize: Unsupported protocol version from the server: 1999-01-01)"
        in str(caught.value)
    )


def test_a_command_that_does_not_exist_cannot_be_started(tmp_path):
    server = McpServer(name="missing", command="no-such-mcp-server-command", args=("--stdio",))
    with pytest.raises(McpServerError) as caught:
        check_servers([server], timeout_s=20)
    assert str(caught.value) == (
        "MCP server 'missing' (no-such-mcp-server-command --stdio) could not be started: No such file or directory\n"
        "  it wrote nothing to stderr\n"
        "  fix: check the command 'no-such-mcp-server-command': install it or give its full path (it is looked up on PATH)"
    )


def test_check_servers_raises_for_the_first_failing_server_in_order(tmp_path, venv_python_first):
    good = load_plugin(FIXTURE).mcp_servers[0]
    bad = McpServer(name="missing", command="no-such-mcp-server-command")
    url = f"http://127.0.0.1:{closed_port()}/mcp"
    remote = McpServer(name="remote", command="", transport="http", url=url)
    results = probe_servers([bad, good, remote], timeout_s=20)
    assert list(results) == ["missing", "telemetry"]  # lint's probe contacts no remote server
    assert isinstance(results["missing"], McpServerError)
    assert results["telemetry"].tools == ("query_logs", "search_traces")  # type: ignore[union-attr]
    with pytest.raises(McpServerError, match=r"^MCP server 'missing'"):
        check_servers([good, bad], timeout_s=20)
    # The runs need every server, remote ones too: one nobody answers stops them, named.
    with pytest.raises(McpServerError) as caught:
        check_servers([good, remote], timeout_s=20)
    assert str(caught.value).startswith(
        f"MCP server 'remote' (http {url}) could not be reached for initialize: "
    )
    assert str(caught.value).endswith(
        "  fix: the runs connect to it the same way: make it reachable from this machine (and "
        "its headers valid), or declare a local (stdio) server for the tests instead"
    )


def test_a_remote_http_server_is_connected_to_and_lists_its_tools(http_server):
    weather = McpServer(
        name="wx",
        command="",
        transport="http",
        url=http_server,
        origin="suite.yaml#/config/mcp_servers/wx",
    )
    checked = check_servers([weather], timeout_s=20)
    assert checked["wx"].tools == ("get_forecast",)
    assert checked["wx"].server_info["name"] == "weather"


def test_a_websocket_server_is_refused_by_name():
    ws = McpServer(
        name="live", command="", transport="ws", url="ws://127.0.0.1:1/", origin="x.yaml#/s"
    )
    with pytest.raises(McpServerError) as caught:
        check_servers([ws], timeout_s=5)
    assert str(caught.value) == (
        "MCP server 'live' (ws ws://127.0.0.1:1/) is a WebSocket server, which skilltest cannot connect to\n"
        "  declared at x.yaml#/s\n"
        "  fix: serve it over http (streamable HTTP) or stdio for the tests, or leave it out of the suite"
    )


def test_a_server_runs_with_its_env_in_the_folder_given(tmp_path):
    server = script_server(
        tmp_path,
        "env",
        """
        import os, sys
        print(os.getcwd(), os.environ["TELEMETRY_TOKEN"], file=sys.stderr)
        sys.exit(1)
        """,
    )
    server = McpServer(
        name=server.name, command=server.command, args=server.args, env={"TELEMETRY_TOKEN": "t0k"}
    )
    (tmp_path / "work").mkdir()
    with pytest.raises(McpServerError) as caught:
        anyio.run(lambda: list_tools(server, timeout_s=20, cwd=tmp_path / "work"))
    assert f"    {tmp_path}/work t0k\n" in str(caught.value)


REMOTE_SUITE = """\
plugin: weather
scenarios:
  - id: forecast
    prompt: "Tomorrow's weather in Lyon?"
    expected: {required_tools: [get_forecast]}
"""


def test_a_plugins_remote_server_is_connected_to_before_the_runs_or_refused_by_name(
    http_server, tmp_path, monkeypatch, capsys
):
    """Before any run every server of a scenario must answer: a plugin's remote (http) server is
    connected to, and its tools satisfy the rubric; one nobody answers is refused by name."""
    plugin = tmp_path / "weather"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "weather"}')
    write_skill(
        plugin, "---\nname: forecast\ndescription: Weather forecasts.\n---\nbody\n", "forecast"
    )
    mcp = plugin / ".mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"wx": {"type": "http", "url": http_server}}}))
    suite = tmp_path / "weather.yaml"
    suite.write_text(REMOTE_SUITE)
    assert main(["validate", str(suite)]) == 0
    assert capsys.readouterr().out == f"ok   {suite} (scenarios)\n\n1 file(s) valid\n"
    down = f"http://127.0.0.1:{closed_port()}/mcp"
    mcp.write_text(json.dumps({"mcpServers": {"wx": {"type": "http", "url": down}}}))
    assert main(["validate", str(suite)]) == 2
    out = capsys.readouterr().err
    assert (
        f"skilltest: error: MCP server 'plugin_weather_wx' (http {down}) could not be reached "
        "for initialize: "
    ) in out
    assert f"  declared at {mcp}#/mcpServers/wx\n" in out
