"""Health checks against real stdio servers: the fixture plugin's server written with the mcp
SDK, and servers that crash, hang, or speak something else."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest

from skilltest.errors import McpServerError
from skilltest.mcp import ServerTools, check_servers, list_tools, probe_servers
from skilltest.plugins import McpServer, load_plugin

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "observability"


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
        check_servers([server], timeout_s=1)
    assert time.monotonic() - started < 10
    message = str(caught.value)
    assert message.startswith(
        f"MCP server 'silent' ({sys.executable} {tmp_path}/silent.py) did not answer initialize within 1 s (stopped)\n"
    )
    assert "    listening (not really)\n" in message
    server_pid, child_pid = map(int, pids.read_text().split())
    deadline = time.monotonic() + 5
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
        check_servers([server], timeout_s=1.5)
    message = str(caught.value)
    assert message.startswith("MCP server 'chatty' (")
    assert (
        "did not answer initialize within 1.5 s (stopped); it wrote what is not JSON-RPC to stdout: "
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
    remote = McpServer(name="remote", command="", transport="http", url="https://mcp.example/")
    results = probe_servers([bad, good, remote], timeout_s=20)
    assert list(results) == ["missing", "telemetry"]  # remote servers are not started
    assert isinstance(results["missing"], McpServerError)
    assert results["telemetry"].tools == ("query_logs", "search_traces")  # type: ignore[union-attr]
    with pytest.raises(McpServerError, match=r"^MCP server 'missing'"):
        check_servers([good, bad], timeout_s=20)
    assert list(check_servers([good, remote], timeout_s=20)) == ["telemetry"]


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
