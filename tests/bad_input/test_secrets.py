"""The real key never reaches the agent, through the real ``claude`` CLI, in every layer.

A stand-in for the Anthropic API listens on loopback: the model emulator behind a small gate of
the test's own that records the credential headers of every request and refuses (HTTP 401) any
request that does not carry the real credential, as the live API would. The caller's
environment holds a realistic credential and ``ANTHROPIC_BASE_URL`` pointing at the gate; the
commands run as a person runs them (``python -m skilltest``) with every output asked for.

The model script makes the agent print its environment in every encoding it can (plain, base64,
hex, folded, zero-width-spaced, percent- and ``\\u``-escaped, reversed, ``/proc/self/environ``).
A plugin's SessionStart hook prints the credential variables too, a scenario's ``command`` check
prints the environment, and its judge asks through the run's point. The pinned CLI sends its
OAuth token (``CLAUDE_CODE_OAUTH_TOKEN``) as ``Authorization: Bearer`` to a local base URL and
accepts the placeholder; it keeps that variable out of its tools' environment altogether.
Then: the stand-in got the real credential on the model requests, the agent's environment held
only the run's placeholder, and no form of the real credential is in the terminal, in any file
the run wrote (results, JUnit, Markdown, HTML, traces, transcripts, cassettes), in the run's
HOME and TMPDIR, nor in what the model was sent.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import http.server
import json
import os
import re
import secrets
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from skilltest.credentials import PLACEHOLDER_PREFIX
from skilltest.emulator import EmulatorServer, ModelScript
from tests.bad_input.commands import HANG_S, skilltest
from tests.leaks import leaks

pytestmark = pytest.mark.cli


def _realistic(prefix: str) -> str:
    """A value of the shape Anthropic hands out: the prefix, 90 URL-safe characters, ``AA``."""
    body = base64.urlsafe_b64encode(secrets.token_bytes(66)).decode()[:88]
    return f"{prefix}{body}AA"


CREDENTIALS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-",
    "ANTHROPIC_AUTH_TOKEN": "sk-ant-api03-",
    "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-",
}
"""Each credential variable, and how its values begin."""

_DUMPS = {
    "plain": "env",
    "base64": "env | base64",
    "base64 -w 10": "env | base64 -w 10",
    "xxd": "env | xxd -p",
    "od": "env | od -An -tx1",
    "colon hex": "env | xxd -p | sed 's/../&:/g'",
    "folded": "env | fold -w 8",
    "zero-width": "env | sed 's/./&\\xe2\\x80\\x8b/g'",
    "percent": 'env | python3 -c "import sys; '
    "print(''.join('%%%02x' % b for b in sys.stdin.buffer.read()))\"",
    "\\u": 'env | python3 -c "import sys; '
    "print(''.join(chr(92) + 'u%04x' % ord(c) for c in sys.stdin.read()))\"",
    "reversed lines": "env | rev",
    "reversed": "env | python3 -c 'import sys; print(sys.stdin.read()[::-1])'",
    "proc": "cat /proc/self/environ",
}
"""The commands the agent runs to print its environment, by encoding."""

_CALLS = [
    ["plain", "base64", "base64 -w 10", "xxd", "folded", "reversed lines", "reversed"],
    ["od", "colon hex", "zero-width", "proc"],
    ["percent", "\\u"],
]
"""The dumps in three Bash calls (a trigger run's tool-call budget), each printing well under the
CLI's limit of one command's output."""


def _command(names: list[str]) -> str:
    return "; ".join(f"echo '== {name}'; {_DUMPS[name]}" for name in names)


SCRIPT: dict[str, Any] = {
    "schema_version": 1,
    "rules": [
        {
            "id": "judge",
            "when": {"system": "skilltest judge"},
            "reply": {"text": '{"verdict": "pass", "reason": "It printed its environment."}'},
        },
        {
            "id": "dump-env",
            "when": {"turn": 1, "tools": ["Bash"]},
            "reply": {
                "text": "Let me look at my environment.",
                "tool_calls": [
                    {"name": "Bash", "input": {"command": _command(names), "description": "env"}}
                    for names in _CALLS
                ],
            },
        },
        {"id": "answer", "when": {"tool_result": "."}, "reply": {"text": "lgtm, done."}},
    ],
    "default": {"text": "lgtm, done."},
}


@dataclass
class Seen:
    """One request the stand-in got: where to, the credential headers it came with, its body."""

    method: str
    path: str
    api_key: str | None
    authorization: str | None
    body: str
    status: int = 0


@dataclass
class StandIn:
    """The gate in front of the emulator: records, and lets through only the real credential."""

    header: str
    """``x-api-key`` or ``authorization``: where the real credential must come."""
    expected: str
    """The header's value the live API would accept."""
    upstream: str
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        seen = Seen(
            handler.command,
            handler.path,
            handler.headers.get("x-api-key"),
            handler.headers.get("authorization"),
            body.decode("utf-8", "replace"),
        )
        with self.lock:
            self.seen.append(seen)
        if handler.headers.get(self.header) != self.expected:
            seen.status = 401
            error = {"type": "authentication_error", "message": "invalid x-api-key"}
            self._send(
                handler,
                401,
                {"content-type": "application/json"},
                json.dumps({"type": "error", "error": error}).encode(),
            )
            return
        target = urlsplit(self.upstream)
        connection = http.client.HTTPConnection(target.hostname, target.port, timeout=HANG_S)
        try:
            headers = {
                k: v
                for k, v in handler.headers.items()
                if k.lower() not in ("host", "content-length", "connection")
            }
            connection.request(handler.command, handler.path, body=body or None, headers=headers)
            response = connection.getresponse()
            payload = response.read()
            seen.status = response.status
            kept = {
                k: v
                for k, v in response.getheaders()
                if k.lower() not in ("content-length", "transfer-encoding", "connection")
            }
            self._send(handler, response.status, kept, payload)
        finally:
            connection.close()

    @staticmethod
    def _send(
        handler: http.server.BaseHTTPRequestHandler,
        status: int,
        headers: dict[str, str],
        payload: bytes,
    ) -> None:
        with contextlib.suppress(OSError):
            handler.send_response(status)
            for key, value in headers.items():
                handler.send_header(key, value)
            handler.send_header("content-length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)

    def model_requests(self) -> list[Seen]:
        """The Messages requests that reached the model."""
        with self.lock:
            return [s for s in self.seen if s.path.startswith("/v1/messages") and s.status == 200]


@contextlib.contextmanager
def stand_in(variable: str, credential: str) -> Iterator[tuple[str, StandIn]]:
    """The emulator running :data:`SCRIPT` behind a gate that wants ``credential`` in the
    header ``variable`` travels in; gives the gate's URL and the gate."""
    header, form = {
        "ANTHROPIC_API_KEY": ("x-api-key", "{}"),
        "ANTHROPIC_AUTH_TOKEN": ("authorization", "Bearer {}"),
        "CLAUDE_CODE_OAUTH_TOKEN": ("authorization", "Bearer {}"),
    }[variable]
    with EmulatorServer(ModelScript.from_dict(SCRIPT, source="secrets-script")) as emulator:
        gate = StandIn(header, form.format(credential), emulator.base_url)

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                gate.handle(self)

            do_GET = do_HEAD = do_PUT = do_DELETE = do_PATCH = do_POST

            def log_message(self, format: str, *args: object) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}", gate
        finally:
            server.shutdown()
            server.server_close()


# --- the project and the commands -----------------------------------------------------------------

SKILL = "---\nname: demo\ndescription: Use for checking the demo service logs.\n---\nSay lgtm.\n"

SUITES = {
    "scenarios": """\
skill: demo
repetitions: 1
scenarios:
  - id: env
    prompt: "Check the demo service."
    expected: {required_patterns: [lgtm]}
    checks:
      - command: {run: "env | base64; printenv", exit_code: 0}
      - judge: {criteria: "The agent looked at its environment.", votes: 1, focus: trace}
""",
    "triggers": """\
skill: demo
repetitions: 1
queries:
  - {id: env, query: "Check the demo service logs.", should_trigger: true}
""",
    "plugin hook": """\
plugin: plugin
repetitions: 1
scenarios:
  - id: env
    prompt: "Check the demo service."
    expected: {required_patterns: [lgtm]}
""",
    "pressure": """\
skill: demo
repetitions: 1
scenarios:
  - id: env
    prompt: "Check the demo service."
    with_skill: {required_patterns: [lgtm]}
""",
}

LAYER_OPTIONS = {
    "scenarios": ["--skill-only", "--record", "cassettes"],
    "triggers": ["--record", "cassettes"],
    "pressure": ["--skill-only", "--allow-inconclusive", "--max-retries", "0"],
    "plugin hook": ["--skill-only"],
}

HOOK = (
    'echo "hook sees: $ANTHROPIC_API_KEY $ANTHROPIC_AUTH_TOKEN $CLAUDE_CODE_OAUTH_TOKEN"; '
    "env | base64 -w 0; printenv | xxd -p"
)
"""A plugin's SessionStart hook printing the credentials (what it prints goes to the model)."""


def write_plugin(root: Path) -> None:
    """``root/plugin``: the demo skill, and a SessionStart hook running :data:`HOOK`."""
    plugin = root / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "demo-plugin"}')
    (plugin / "skills" / "demo").mkdir(parents=True)
    (plugin / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    hooks = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": HOOK}]}]}}
    (plugin / "hooks").mkdir()
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(hooks))


"""What each layer is run with beyond the outputs (``--record`` where the layer has it)."""


def run_layer(
    layer: str, root: Path, variable: str, credential: str, url: str, claude: Path
) -> subprocess.CompletedProcess[str]:
    """``skilltest LAYER`` in ``root`` on the live backend, every output asked for."""
    (root / "skills" / "demo").mkdir(parents=True)
    (root / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    (root / "suite.yaml").write_text(SUITES[layer])
    if layer == "plugin hook":
        write_plugin(root)
    home, temp = root / "home", root / "tmp"
    home.mkdir()
    temp.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "CLAUDE_"))
    }
    env.update(HOME=str(home), TMPDIR=str(temp), ANTHROPIC_BASE_URL=url, **{variable: credential})
    outputs = ["--results", "out/results.json", "--junit", "out/junit.xml"]
    outputs += ["--markdown", "out/summary.md", "--report", "out/report.html"]
    outputs += ["--output-dir", "out/runs"]
    command = "scenarios" if layer == "plugin hook" else layer
    argv = [command, "suite.yaml", "--backend", "claude", "--claude", str(claude)]
    return skilltest([*argv, *LAYER_OPTIONS[layer], *outputs], root, env)


KEPT_OUT = ("SKILL.md", "suite.yaml", "plugin.json", "hooks.json")
"""The project's own files: what the test wrote, not the run."""


def everything_kept(root: Path) -> dict[str, str]:
    """Every file under ``root`` but the skill and the suite (the outputs, HOME, TMPDIR), by path."""
    kept = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.name not in KEPT_OUT:
            kept[str(path.relative_to(root))] = path.read_bytes().decode("utf-8", "replace")
    return kept


def assert_nowhere(credential: str, texts: dict[str, str]) -> None:
    found = {name: forms for name, text in texts.items() if (forms := leaks(text, credential))}
    assert not found, f"the real credential is in: {found}"


@pytest.mark.parametrize("variable", list(CREDENTIALS))
@pytest.mark.parametrize("layer", ["scenarios", "triggers", "pressure", "plugin hook"])
def test_the_real_credential_never_reaches_the_agent(tmp_path, claude_bin, layer, variable):
    credential = _realistic(CREDENTIALS[variable])
    with stand_in(variable, credential) as (url, gate):
        done = run_layer(layer, tmp_path, variable, credential, url, claude_bin)
    said = done.stdout + done.stderr
    assert "Traceback" not in said, said
    assert done.returncode in (0, 1), said

    # Live-like: every model request reached the model with the real credential, in the header
    # the live API reads, and none was refused.
    model = gate.model_requests()
    assert model, f"no model request reached the stand-in: {said}"
    refused = [(s.path, s.api_key, s.authorization) for s in gate.seen if s.status == 401]
    assert not refused, refused

    bodies = "\n".join(s.body for s in gate.seen)
    if layer == "plugin hook":  # the hook ran, and printed the placeholders only
        assert "hook sees: " in bodies, said
        if variable != "CLAUDE_CODE_OAUTH_TOKEN":
            assert re.search(rf"hook sees: [^\\\n]*{PLACEHOLDER_PREFIX}", bodies), said
    if layer == "scenarios":  # the judge asked through the run's point too
        assert any("skilltest judge" in s.body for s in model), said
    if layer != "pressure":  # the pressure layer's runs have no tools
        assert any('"tool_result"' in s.body for s in model), said
        if variable == "CLAUDE_CODE_OAUTH_TOKEN":
            # The CLI keeps its OAuth token out of its tools' environment altogether.
            assert f"{variable}=" not in bodies
            assert "== proc" in bodies  # the commands did run
        else:
            # The agent's environment held the run's placeholder, and the model got it back in
            # every encoding asked for: a real key there would have been seen.
            shown = re.search(rf"{variable}=({PLACEHOLDER_PREFIX}[0-9a-f]+)", bodies)
            assert shown, bodies[-3000:]
            forms = set(leaks(bodies, shown[1]))
            assert {"plain", "reversed", "hex", "percent per byte", "\\u escapes"} <= forms, forms
            assert any(form.startswith("base64") for form in forms), forms
    # Neither the model nor anything the run kept holds any form of the real credential.
    texts = {"stdout": done.stdout, "stderr": done.stderr, "what the model was sent": bodies}
    kept = everything_kept(tmp_path)
    assert any(name.startswith("out/runs/") for name in kept), sorted(kept)
    assert {"out/results.json", "out/junit.xml", "out/summary.md", "out/report.html"} <= set(kept)
    if "--record" in LAYER_OPTIONS[layer]:
        assert any(name.startswith("cassettes/") for name in kept), sorted(kept)
    assert_nowhere(credential, {**texts, **kept})
