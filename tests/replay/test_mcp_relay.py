"""The MCP relay: record a real stdio MCP server's traffic, replay it with the server absent.

The server is the observability plugin's ``telemetry`` server (written with the mcp SDK) and the
client is the mcp SDK's own, both talking to ``python -m skilltest.replay.mcp_relay`` as Claude
Code would; the last test puts the real claude CLI in front of the relay.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.replay.mcp_relay import MISS_CODE, McpExchange, RecordedServer, record
from tests.bare_claude import blocks, run_bare_claude

from ..conftest import REPO_ROOT
from ..test_startup import HEAVY

SERVER = REPO_ROOT / "tests" / "fixtures" / "plugins" / "observability" / "server.py"
STUBBORN = Path(__file__).with_name("stubborn_server.py")
RELAY = [sys.executable, "-m", "skilltest.replay.mcp_relay"]

Calls = list[tuple[str, dict[str, Any]]]
CALLS: Calls = [
    ("query_logs", {"query": '{service_name="checkout"} |= "error"', "since": "1h"}),
    ("search_traces", {"service": "checkout", "min_duration": "500ms"}),
]


def relay(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=RELAY[0], args=[*RELAY[1:], *args])


def record_args(log: Path, server: Path = SERVER, *extra: str) -> list[str]:
    return ["record", "--log", str(log), *extra, "--", sys.executable, str(server)]


def replay_args(exchanges: Path, misses: Path, *extra: str) -> list[str]:
    return ["replay", "--exchanges", str(exchanges), "--misses", str(misses), *extra]


def paths_json(workdir: Path) -> list[str]:
    paths = {"workdir": str(workdir), "home": "/home/nobody", "tmp": "/tmp/none", "root": "/r"}
    return ["--paths-json", json.dumps(paths)]


async def _session(params: StdioServerParameters, calls: Calls) -> dict[str, Any]:
    """What a client sees: the initialize answer, the tools, and each call's result."""
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        initialized = await session.initialize()
        tools = await session.list_tools()
        results = [await session.call_tool(name, arguments) for name, arguments in calls]
    return {
        "initialize": initialized.model_dump(mode="json"),
        "tools": tools.model_dump(mode="json"),
        "calls": [result.model_dump(mode="json") for result in results],
    }


def session(params: StdioServerParameters, calls: Calls = CALLS) -> dict[str, Any]:
    try:
        return anyio.run(_session, params, calls)
    except BaseExceptionGroup as group:  # the SDK's task groups wrap what the server answered
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup):
            leaf = leaf.exceptions[0]
        raise leaf from None


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def exchanges_file(log: Path, path: Path) -> Path:
    """The log as the replay reads it: a JSON list in recorded order."""
    path.write_text(json.dumps(read_log(log)))
    return path


def record_session(tmp_path: Path, *extra: str, calls: Calls = CALLS) -> tuple[dict, Path]:
    log = tmp_path / "log.jsonl"
    seen = session(relay(*record_args(log, SERVER, *extra)), calls)
    return seen, exchanges_file(log, tmp_path / "exchanges.json")


def text_of(result: dict[str, Any]) -> Any:
    return json.loads(result["content"][0]["text"])


def test_a_recorded_session_replays_identically_without_the_server(tmp_path):
    recorded, exchanges = record_session(tmp_path)
    # One line per finished request; notifications/initialized was relayed, not logged.
    log = read_log(tmp_path / "log.jsonl")
    assert [entry["method"] for entry in log] == [
        "initialize",
        "tools/list",
        "tools/call",
        "tools/call",
    ]
    assert log[2]["params"]["arguments"] == CALLS[0][1]
    assert text_of(log[2]["response"]["result"])["result"][0]["count"] == 1342
    assert text_of(recorded["calls"][1])["traces"][0]["trace_id"] == "4bf92f3577b34da6"

    misses = tmp_path / "misses.jsonl"
    params = relay(*replay_args(exchanges, misses))
    assert str(SERVER) not in params.args and sys.executable not in params.args
    replayed = session(params)
    assert replayed == recorded
    assert not misses.exists()


def test_a_request_that_was_not_recorded_is_a_replay_miss(tmp_path):
    _, exchanges = record_session(tmp_path)
    misses = tmp_path / "misses.jsonl"
    changed = [CALLS[0], ("query_logs", {**CALLS[0][1], "since": "24h"})]
    with pytest.raises(MCPError) as raised:
        session(relay(*replay_args(exchanges, misses)), changed)
    assert raised.value.error.code == MISS_CODE
    message = raised.value.error.message
    assert message.startswith("replay miss: tools/call: no recorded request has these params")
    assert "nearest is recorded request #2 (tools/call, already used)" in message
    assert '/params/arguments/since: "1h" -> "24h"' in message
    (miss,) = read_log(misses)
    assert miss == {
        "method": "tools/call",
        "params": {"name": "query_logs", "arguments": changed[1][1]},
        "message": message,
    }


def run_relay(args: list[str], lines: list[Any], timeout: float = 30) -> tuple[list[Any], int]:
    """Writes ``lines`` (JSON values) to the relay's stdin, closes it; the answers and exit."""
    done = subprocess.run(
        [*RELAY, *args],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return [json.loads(line) for line in done.stdout.splitlines()], done.returncode


def test_answers_carry_the_live_ids_and_notifications_get_none(tmp_path):
    exchanges = tmp_path / "exchanges.json"
    exchanges.write_text(
        json.dumps(
            [
                {"method": "ping", "params": None, "response": {"result": {}}},
                {"method": "ping", "params": None, "response": {"result": {"second": True}}},
                {
                    "method": "tools/call",
                    "params": {"name": "x"},
                    "response": {"error": {"code": 7, "message": "no"}},
                },
            ]
        )
    )
    answers, code = run_relay(
        replay_args(exchanges, tmp_path / "misses.jsonl"),
        [
            {"jsonrpc": "2.0", "id": "req-a", "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "x"}},
            [{"jsonrpc": "2.0", "id": 0, "method": "ping"}, {"jsonrpc": "2.0", "method": "n"}],
            {"jsonrpc": "2.0", "id": 42, "method": "resources/list"},
        ],
    )
    assert code == 0
    assert answers[:3] == [
        {"jsonrpc": "2.0", "id": "req-a", "result": {}},
        {"jsonrpc": "2.0", "id": 41, "error": {"code": 7, "message": "no"}},
        [{"jsonrpc": "2.0", "id": 0, "result": {"second": True}}],  # a batch answered as one
    ]
    assert answers[3]["id"] == 42
    assert answers[3]["error"] == {
        "code": MISS_CODE,
        "message": "replay miss: resources/list: the recording holds no resources/list request "
        "(it holds ping, tools/call)",
    }
    assert len(answers) == 4


SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
LISTENER = """\
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "subscriptions/listen":
        ack = {"notifications": {"toolsListChanged": True}, "_meta": {"SUBSCRIPTION": message["id"]}}
        print(json.dumps({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                          "params": ack}), flush=True)
    elif message.get("method") == "tools/call":
        token = message["params"]["_meta"]["progressToken"]
        print(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                          "params": {"progressToken": token, "progress": 1}}), flush=True)
        print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": "unrelated"}}), flush=True)
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"done": 1}}),
              flush=True)
""".replace("SUBSCRIPTION", SUBSCRIPTION)


def test_a_subscription_stream_and_progress_replay_with_the_live_ids(tmp_path):
    """MCP 2026-07-28: subscriptions/listen stays open (its acknowledgement names it by id), and
    progress notifications name their request by its token."""
    server = tmp_path / "listener.py"
    server.write_text(LISTENER)
    log = tmp_path / "log.jsonl"
    listen = {"jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen"}
    listen["params"] = {"notifications": {"toolsListChanged": True}}
    call = {"jsonrpc": "2.0", "id": 6, "method": "tools/call"}
    call["params"] = {"name": "t", "arguments": {}, "_meta": {"progressToken": 6}}
    answers, code = run_relay(record_args(log, server), [listen, call])
    assert code == 0
    assert [a.get("method", a.get("id")) for a in answers] == [
        "notifications/subscriptions/acknowledged",
        "notifications/progress",
        "notifications/message",
        6,
    ]
    recorded = read_log(log)
    # The call first (answered), then the stream still open when the client left.
    assert [(e["method"], sorted(e["response"])) for e in recorded] == [
        ("tools/call", ["notifications", "result"]),
        ("subscriptions/listen", ["notifications"]),
    ]
    assert [n["method"] for n in recorded[0]["response"]["notifications"]] == [
        "notifications/progress"
    ]

    exchanges = exchanges_file(log, tmp_path / "exchanges.json")
    live_listen = {**listen, "id": "sub-a"}
    live_call = {**call, "id": 99, "params": {**call["params"], "_meta": {"progressToken": "p"}}}
    answers, code = run_relay(
        replay_args(exchanges, tmp_path / "misses.jsonl"), [live_listen, live_call]
    )
    assert code == 0
    assert answers == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "notifications": {"toolsListChanged": True},
                "_meta": {SUBSCRIPTION: "sub-a"},
            },
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p", "progress": 1},
        },
        {"jsonrpc": "2.0", "id": 99, "result": {"done": 1}},
    ]
    assert not (tmp_path / "misses.jsonl").exists()


def test_a_suites_rules_apply_to_mcp_params(tmp_path):
    """`replay: {ignore: [...], normalise: [...]}` as --rules-json, against {method, params}."""
    exchanges = tmp_path / "exchanges.json"
    recorded = {"name": "t", "arguments": {"request_id": "r-1", "at": "build 41"}}
    exchanges.write_text(
        json.dumps([{"method": "tools/call", "params": recorded, "response": {"result": {}}}])
    )
    live = {"name": "t", "arguments": {"request_id": "r-2", "at": "build 42"}}
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": live}
    misses = tmp_path / "misses.jsonl"
    rules = {
        "ignore": ["/params/arguments/request_id"],
        "normalise": [{"pattern": "build \\d+", "replacement": "build N"}],
    }
    answers, _ = run_relay(
        replay_args(exchanges, misses, "--rules-json", json.dumps(rules)), [request]
    )
    assert answers == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    answers, _ = run_relay(replay_args(exchanges, misses), [request])
    assert answers[0]["error"]["message"].endswith(
        'differs at /params/arguments/request_id: "r-1" -> "r-2"; '
        '/params/arguments/at: "build 41" -> "build 42" (recorded -> now)'
    )


@pytest.mark.parametrize(
    ("recorded", "live", "explanation"),
    [
        (
            [("tools/call", {"name": "a", "arguments": {"q": "x"}})],
            ("tools/call", {"name": "a", "arguments": {"q": "x"}}),
            "replay miss: tools/call: this request was recorded 1 time(s) and every recorded "
            "answer is used (recorded request #0): the client asks more often than when it was "
            "recorded",
        ),
        (
            [
                ("tools/call", {"name": "a", "arguments": {"q": "x", "n": 1}}),
                ("tools/call", {"name": "b", "arguments": {"q": "x", "n": 2}}),
            ],
            ("tools/call", {"name": "b", "arguments": {"q": "y", "n": 2, "extra": True}}),
            "replay miss: tools/call: no recorded request has these params; nearest is recorded "
            'request #1 (tools/call), which differs at /params/arguments/q: "x" -> "y"; '
            "/params/arguments/extra: (absent) -> true (recorded -> now)",
        ),
    ],
)
def test_miss_messages(recorded, live, explanation):
    server = RecordedServer([McpExchange(m, p, {"result": {}}) for m, p in recorded])
    if explanation.startswith("replay miss: tools/call: this request was recorded"):
        assert server.answer(*live) == {"result": {}}
    miss = server.answer(*live)
    assert miss.message == explanation


def test_paths_in_params_replay_in_another_workdir(tmp_path):
    first, second = tmp_path / "run-1" / "work", tmp_path / "run-2" / "work"
    calls_in = {
        workdir: [("query_logs", {"query": f"{workdir}/app.log", "since": "1h"})]
        for workdir in (first, second)
    }
    recorded, exchanges = record_session(tmp_path, *paths_json(first), calls=calls_in[first])
    # The log holds the placeholder, not the recording's working directory.
    assert str(first) not in json.dumps(read_log(tmp_path / "log.jsonl")[2]["params"])
    misses = tmp_path / "misses.jsonl"
    replayed = session(
        relay(*replay_args(exchanges, misses, *paths_json(second))), calls_in[second]
    )
    assert not misses.exists()
    assert replayed["calls"] == recorded["calls"]
    # The same argument in a third place is not the run's path: a miss.
    with pytest.raises(MCPError, match="replay miss: tools/call"):
        session(relay(*replay_args(exchanges, misses, *paths_json(second))), calls_in[first])


def test_the_relay_exits_with_the_servers_status(tmp_path):
    exits_3 = tmp_path / "exits_3.py"
    exits_3.write_text("import sys\nsys.stdin.readline()\nprint('{}', flush=True)\nsys.exit(3)\n")
    answers, code = run_relay(
        ["record", "--log", str(tmp_path / "log"), "--", sys.executable, str(exits_3)], [{}, {}]
    )
    assert (answers, code) == ([{}], 3)
    # A client that closes stdin ends a well-behaved server, and the relay with it.
    log = tmp_path / "log.jsonl"
    answers, code = run_relay(
        record_args(log),
        [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            }
        ],
    )
    assert code == 0
    assert answers[0]["id"] == 1 and answers[0]["result"]["serverInfo"]["name"] == "telemetry"
    assert [entry["method"] for entry in read_log(log)] == ["initialize"]


SLOW_STARTER = """\
import json, sys, time
time.sleep(1)  # as a server importing its SDK on a busy machine: nothing read yet
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"late": True}}), flush=True)
"""


def test_a_slow_server_answers_what_it_was_asked_before_its_grace_starts(tmp_path):
    """The client sends a request and closes stdin at once; the server starts reading only later
    than its grace. It still answers, is logged, and exits by itself with 0 (not 143)."""
    server = tmp_path / "slow.py"
    server.write_text(SLOW_STARTER)
    client_in, relay_in = os.pipe()
    relay_out, client_out = os.pipe()
    os.write(relay_in, b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
    os.close(relay_in)
    log = tmp_path / "log.jsonl"
    code = record(
        [sys.executable, str(server)], log, stdin_fd=client_in, stdout_fd=client_out, grace_s=0.05
    )
    os.close(client_out)
    with os.fdopen(relay_out, "rb") as answers:
        assert [json.loads(line) for line in answers] == [
            {"jsonrpc": "2.0", "id": 1, "result": {"late": True}}
        ]
    os.close(client_in)
    assert code == 0
    assert read_log(log) == [
        {"method": "ping", "params": None, "response": {"result": {"late": True}}}
    ]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie has stopped; only its exit status is left


def _wait_for(condition, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_relay_leaves_no_process_behind(tmp_path, signum):
    pids_file = tmp_path / "pids"
    command = [*RELAY, *record_args(tmp_path / "log", STUBBORN), str(pids_file)]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as relay_process:
        try:
            assert _wait_for(lambda: pids_file.exists() and " " in pids_file.read_text())
            server, child = map(int, pids_file.read_text().split())
            assert _alive(server) and _alive(child)
            relay_process.send_signal(signum)
            # The server ignores SIGTERM: it is killed after the grace time.
            assert relay_process.wait(timeout=60) == 128 + signum
            assert _wait_for(lambda: not _alive(server) and not _alive(child))
        finally:
            relay_process.kill()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["replay", "--exchanges", "{tmp}/exchanges.json", "--misses", "{tmp}/misses"],
            "{tmp}/exchanges.json#/0: expected",
        ),
        (
            ["replay", "--exchanges", "{tmp}/none.json", "--misses", "{tmp}/misses"],
            "{tmp}/none.json: cannot read the exchanges: No such file or directory",
        ),
        (
            ["record", "--log", "{tmp}/no/such/folder/log", "--", "true"],
            "{tmp}/no/such/folder/log: cannot write the log: No such file or directory",
        ),
        (["record", "--log", "{tmp}/log", "--"], "no server command"),
        (["record", "--log", "{tmp}/log", "--", "{tmp}/no-such-server"], "cannot start"),
    ],
)
def test_bad_input_is_reported_without_a_traceback(tmp_path, args, expected):
    both = {"result": {}, "error": {"code": 1, "message": "x"}}
    (tmp_path / "exchanges.json").write_text(
        json.dumps([{"method": "ping", "params": None, "response": both}])
    )
    done = subprocess.run(
        [*RELAY, *(arg.format(tmp=tmp_path) for arg in args)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == (127 if expected == "cannot start" else 2), done.stderr
    assert expected.format(tmp=tmp_path) in done.stderr
    assert "Traceback" not in done.stderr


def test_the_relay_imports_only_the_standard_library_and_the_normaliser():
    """It starts for every server of every run: nothing heavy, whatever the package grows."""
    script = (
        "import sys, skilltest.replay.mcp_relay as relay\n"
        "relay._normaliser('{}', '{}')\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, check=True
    )
    loaded = set(done.stdout.split())
    assert "skilltest" in loaded
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_start_up_time(tmp_path):
    """Prints how long the relay takes to start and answer one request (no assertion on it)."""
    exchanges = tmp_path / "exchanges.json"
    exchanges.write_text(
        json.dumps([{"method": "ping", "params": None, "response": {"result": {}}}])
    )
    started = time.perf_counter()
    answers, code = run_relay(
        replay_args(exchanges, tmp_path / "misses"), [{"jsonrpc": "2.0", "id": 1, "method": "ping"}]
    )
    elapsed = time.perf_counter() - started
    assert (answers, code) == ([{"jsonrpc": "2.0", "id": 1, "result": {}}], 0)
    print(f"\nmcp relay: start, one replayed answer, exit: {elapsed * 1000:.0f} ms")


# --- through the real claude CLI ---------------------------------------------------------------

TOOL = "mcp__telemetry__query_logs"
CLI_SCRIPT = {
    "schema_version": 1,
    "rules": [
        {
            "id": "query",
            "when": {"turn": 1},
            "reply": {"tool_calls": [{"name": TOOL, "input": {"query": "errors", "since": "1h"}}]},
        },
        {"id": "done", "when": {"tool_result": "1342"}, "reply": {"text": "1342 errors."}},
    ],
    "default": {"text": "No idea."},
}


def run_claude_through_relay(claude: Path, base: Path, relay_args: list[str]) -> list[dict]:
    """One ``claude -p`` run whose only MCP server, ``telemetry``, is the relay started with
    ``relay_args``; its stream-json."""
    base.mkdir()
    config = base / "mcp-config.json"
    server = {"command": RELAY[0], "args": [*RELAY[1:], *relay_args], "alwaysLoad": True}
    config.write_text(json.dumps({"mcpServers": {"telemetry": server}}))
    with EmulatorServer(ModelScript.from_dict(CLI_SCRIPT, source="<inline>")) as emulator:
        return run_bare_claude(
            claude,
            base,
            "How many errors in checkout?",
            *("--mcp-config", str(config), "--strict-mcp-config", "--allowedTools", TOOL),
            env={"ANTHROPIC_BASE_URL": emulator.base_url},
        )


def processes_naming(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _alive(int(entry.name)):
            try:
                if text in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.cli
def test_the_claude_cli_records_through_the_relay_and_replays_without_the_server(
    claude_bin, tmp_path
):
    server = tmp_path / "servers" / "telemetry_server.py"
    server.parent.mkdir()
    shutil.copy(SERVER, server)
    log = tmp_path / "telemetry.jsonl"
    recorded = run_claude_through_relay(claude_bin, tmp_path / "record", record_args(log, server))
    (recorded_result,) = blocks(recorded, "user", "tool_result")
    assert "1342" in json.dumps(recorded_result["content"])
    assert recorded[-1]["result"] == "1342 errors."
    methods = [entry["method"] for entry in read_log(log)]
    # 2.1.328 opens with server/discover (MCP 2026-07-28) where older clients send initialize.
    assert methods[0] in ("server/discover", "initialize")
    assert "tools/list" in methods and "tools/call" in methods
    # Its subscriptions/listen stream was still open when the run ended: logged unanswered,
    # with the server's acknowledgement.
    listen = next(entry for entry in read_log(log) if entry["method"] == "subscriptions/listen")
    assert [n["method"] for n in listen["response"]["notifications"]] == [
        "notifications/subscriptions/acknowledged"
    ]
    assert "result" not in listen["response"] and "error" not in listen["response"]
    # Neither the relay nor the server outlives the run.
    assert _wait_for(lambda: not processes_naming(str(log)))

    shutil.rmtree(server.parent)  # the server is gone: replay must not need it
    exchanges = exchanges_file(log, tmp_path / "exchanges.json")
    misses = tmp_path / "misses.jsonl"
    replayed = run_claude_through_relay(
        claude_bin, tmp_path / "replay", replay_args(exchanges, misses)
    )
    (replayed_result,) = blocks(replayed, "user", "tool_result")
    assert replayed_result["content"] == recorded_result["content"]
    assert replayed_result.get("is_error") == recorded_result.get("is_error")
    assert replayed[-1]["result"] == "1342 errors."
    assert not misses.exists()
    assert _wait_for(lambda: not processes_naming(str(exchanges)))
