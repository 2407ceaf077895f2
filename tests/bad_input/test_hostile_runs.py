"""Hostile answers and stops during runs: a model API that answers JSON nested 200,000 deep or
drips its reply a byte a second, a stop signal part way, a replay miss, a plugin hook that
writes where it likes. Each run ends as documented (its own error, exit 130/143), and leaves
nothing behind outside its own folders.

The model API here is a tiny loopback server of the test's own; the commands run as a person
runs them (``python -m skilltest``), the scenario layer through the real ``claude`` CLI.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.bad_input.commands import clean_env, skilltest
from tests.projects import demo_suite, write_demo_project

DEPTH = 200_000
MESSAGE_HEAD = b'{"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": '
MESSAGE_TAIL = b', "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}}'
A_MESSAGE = MESSAGE_HEAD + b'[{"type": "text", "text": "hello"}]' + MESSAGE_TAIL
DEEP_MESSAGE = MESSAGE_HEAD + b"[" * DEPTH + b"]" * DEPTH + MESSAGE_TAIL
"""A message whose content is 200,000 arrays, one inside the other."""
LONG_MESSAGE = (
    MESSAGE_HEAD + b'[{"type": "text", "text": "' + b"x" * 100_000 + b'"}]' + MESSAGE_TAIL
)
"""A message of 100 kB: dripped a byte a second, only the run's timeout ends it before the
command's hang bound does (it would take more than a day)."""


class _Api(http.server.BaseHTTPRequestHandler):
    """Answers every POST with ``reply(handler)``; counts the requests."""

    protocol_version = "HTTP/1.1"
    reply: Callable[[_Api], None]
    requests: list[str]

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.requests.append(self.path)
        with contextlib.suppress(OSError):  # the client hung up, as a cut request does
            type(self).reply(self)

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def answer(body: bytes) -> Callable[[_Api], None]:
    """Sends ``body`` whole, as JSON."""

    def reply(handler: _Api) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return reply


def drip(body: bytes, every_s: float = 1.0) -> Callable[[_Api], None]:
    """Sends ``body`` one byte every ``every_s``: each read gets a byte well within any timeout."""

    def reply(handler: _Api) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.flush()
        for byte in body:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(every_s)

    return reply


@pytest.fixture
def api() -> Iterator[Callable[[Callable[[_Api], None]], tuple[str, list[str]]]]:
    """Starts a loopback model API answering with the reply given; gives its URL and requests."""
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(reply: Callable[[_Api], None]) -> tuple[str, list[str]]:
        requests: list[str] = []
        handler = type("Api", (_Api,), {"reply": staticmethod(reply), "requests": requests})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}", requests

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def pressure_project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    return write_demo_project(root, demo_suite(repetitions=1), "schema_version: 1\n")


# --- the SDK runner (pressure): a deep reply, a dripping reply -----------------------------------


def test_a_reply_nested_200000_deep_is_each_runs_error_not_a_crash(tmp_path, api):
    url, requests = api(answer(DEEP_MESSAGE))
    suite = pressure_project(tmp_path / "work")
    env = clean_env(tmp_path, ANTHROPIC_API_KEY="sk-test-only", ANTHROPIC_BASE_URL=url)
    done = skilltest(
        ["pressure", str(suite), "--backend", "anthropic", "--max-retries", "0"],
        suite.parent,
        env,
    )
    said = done.stdout + done.stderr
    assert "Traceback" not in said and "RecursionError" not in said, said
    assert done.returncode == 1, said
    assert "demo/aggregate  error" in said
    assert "with_skill run 1: unreadable API reply (HTTP 200): JSON nested too deep to read" in said
    assert "2 requests (2 failed, left out of the rates)" in said
    assert len(requests) == 2


def test_timeout_cuts_a_reply_that_drips_a_byte_a_second(tmp_path, api):
    # Each read gets its byte within a second, so a per-read timeout of 2 s never fires and
    # the reply would take more than a day: only the run's timeout ends the command.
    url, requests = api(drip(LONG_MESSAGE))
    suite = pressure_project(tmp_path / "work")
    env = clean_env(tmp_path, ANTHROPIC_API_KEY="sk-test-only", ANTHROPIC_BASE_URL=url)
    argv = ["pressure", str(suite), "--backend", "anthropic", "--max-retries", "0"]
    done = skilltest([*argv, "--timeout", "2"], suite.parent, env)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "with_skill run 1: API request timed out (after 0 retries)" in said
    assert "2 requests (2 failed, left out of the rates)" in said
    assert "Traceback" not in said
    assert len(requests) == 2


def test_a_timed_out_attempt_is_retried_and_each_attempt_is_cut(tmp_path, api):
    url, requests = api(drip(LONG_MESSAGE))
    suite = pressure_project(tmp_path / "work")
    env = clean_env(tmp_path, ANTHROPIC_API_KEY="sk-test-only", ANTHROPIC_BASE_URL=url)
    argv = ["pressure", str(suite), "--backend", "anthropic", "--max-retries", "1"]
    done = skilltest([*argv, "--timeout", "1"], suite.parent, env)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "API request timed out (after 1 retries)" in said
    assert len(requests) == 4  # two runs, each tried twice


# --- a plugin's SessionStart hook -----------------------------------------------------------------

HOOK = (
    'echo home > "$HOME/escaped"; echo abs > {outside}/escaped; pwd > {outside}/cwd; '
    'pwd > "$CLAUDE_PROJECT_DIR/hook-cwd"; echo "$HOME $TMPDIR $XDG_CONFIG_HOME" > '
    '"$CLAUDE_PROJECT_DIR/hook-env"; echo "escape hook ran"'
)

HOOK_SUITE = r"""plugin: {plugin}
model_script: model.yaml
repetitions: 1
scenarios:
  - id: hook
    prompt: "Say hello."
    expected: {{text_patterns: [hello]}}
    checks:
      - file_matches: {{path: hook-cwd, pattern: "/skilltest-run-[^/]+/work$", match: contains}}
      - file_matches:
          path: hook-env
          pattern: '^(\S+)/home \1/tmp \1/home/\.config$'
          match: contains
"""


def escaping_plugin(root: Path, outside: Path) -> Path:
    """A plugin whose SessionStart hook writes to $HOME and to ``outside`` (an absolute path)."""
    plugin = root / "escape"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "escape"}')
    (plugin / "skills" / "greet").mkdir(parents=True)
    (plugin / "skills" / "greet" / "SKILL.md").write_text(
        "---\nname: greet\ndescription: Use to greet.\n---\nSay hello.\n"
    )
    command = HOOK.format(outside=outside)
    hooks = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": command}]}]}}
    (plugin / "hooks").mkdir()
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    return plugin


def test_a_plugins_session_start_hook_writes_only_inside_its_run(tmp_path, claude_bin):
    outside = tmp_path / "outside"
    outside.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    plugin = escaping_plugin(work, outside)
    (work / "model.yaml").write_text(
        'schema_version: 1\nrules: []\ndefault: {text: "hello there"}\n'
    )
    suite = work / "suite.yaml"
    suite.write_text(HOOK_SUITE.format(plugin=plugin))
    env = clean_env(tmp_path, SKILLTEST_CLAUDE=str(claude_bin))
    before = {p for p in tmp_path.rglob("*")}
    argv = ["scenarios", str(suite), "--backend", "emulator", "--output-dir", str(work / "out")]
    done = skilltest([*argv, "--allow-inconclusive", "--skill-only"], work, env)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said  # the checks: cwd the workspace, HOME, TMPDIR, XDG the run's
    transcript = work / "out" / "suite" / "hook" / "with-skill-0.requests.json"
    assert "escape hook ran" in transcript.read_text()  # the hook did run
    # Nothing the hook wrote is left: not in the user's HOME, not at the absolute path, not
    # in the temp folder (the run's sandbox is gone with what it wrote there).
    assert list(outside.iterdir()) == []
    assert list((tmp_path / "home").iterdir()) == []
    assert list((tmp_path / "tmp").iterdir()) == []
    written = {p.relative_to(tmp_path) for p in tmp_path.rglob("*")} - {
        p.relative_to(tmp_path) for p in before
    }
    assert all(p.parts[:2] == ("work", "out") for p in written), sorted(written)
