"""What a child process or an error says is printed and written with every secret redacted.

A plugin's MCP server that fails prints its environment on stderr: the caller's credential
variables and a value the suite names under ``replay: {redact: [...]}`` (from a variable, and
written out). ``skilltest lint``, ``validate`` and ``scenarios`` show the end of that stderr, so
that a person sees why the server failed; none of them may show a secret in any form. A server
that fails only inside a run prints the run's world token as well, which no output may hold.

The commands run as a person runs them (``python -m skilltest``), the scenario layer through the
real ``claude`` CLI against the emulator.
"""

from __future__ import annotations

import base64
import json
import secrets
import sys
from pathlib import Path

import pytest

from tests.bad_input.commands import clean_env, skilltest
from tests.leaks import leaks


def _realistic(prefix: str) -> str:
    return prefix + base64.urlsafe_b64encode(secrets.token_bytes(66)).decode()[:88] + "AA"


CREDENTIALS = {
    "ANTHROPIC_API_KEY": _realistic("sk-ant-api03-"),
    "ANTHROPIC_AUTH_TOKEN": _realistic("sk-ant-api03-"),
    "CLAUDE_CODE_OAUTH_TOKEN": _realistic("sk-ant-oat01-"),
}
"""The caller's credentials (never a real one: the model answers come from the emulator)."""

TEAM_TOKEN = "team-" + secrets.token_hex(16)
"""A value the suite names as ``$TEAM_TOKEN`` under ``replay: {redact: [...]}``."""

LITERAL = "internal-host-" + secrets.token_hex(4)
"""A value the suite writes out under ``replay: {redact: [...]}``."""

SERVER = r"""
import os, sys
from pathlib import Path
from skilltest.mcp.stdio_server import Tool, serve

token = os.environ.get("TICKETS_API_TOKEN")
names = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "TEAM_TOKEN")
said = " ".join(f"{name}={os.environ.get(name)}" for name in names)
if FAIL_AT_ONCE or token:
    if token:
        with open(SEEN, "a") as seen:
            seen.write(token + "\n")
    print(f"cannot start: {said} world={token} host=LITERAL", file=sys.stderr, flush=True)
    sys.exit(1)
serve(name="leaky", version="1", tools=[Tool("lookup")], call=lambda tool, args: ("ok", False))
"""
"""A stdio MCP server that prints its environment on stderr and exits: at once, or only in a
run (where the world gives it its token), after writing the token to ``SEEN``."""

SUITE = """\
plugin: leaky
model_script: model.yaml
repetitions: 1
replay: {{redact: [$TEAM_TOKEN, {literal}]}}
{world}scenarios:
  - id: hello
    prompt: "Say hello."
    expected: {{text_patterns: [hello]}}
"""

WORLD = """\
services:
  - name: tickets
    hosts: [api.tickets.example.com]
    auth: {env: TICKETS_API_TOKEN}
    routes:
      - {method: GET, path: /tickets, action: respond, status: 200, body: {tickets: []}}
"""


def project(root: Path, *, fail_at_once: bool, world: bool = False) -> Path:
    """A plugin whose MCP server prints its environment and fails, and a scenario suite."""
    plugin = root / "leaky"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "leaky"}')
    (plugin / "skills" / "greet").mkdir(parents=True)
    (plugin / "skills" / "greet" / "SKILL.md").write_text(
        "---\nname: greet\ndescription: Use to greet.\n---\nSay hello.\n"
    )
    source = (
        SERVER.replace("FAIL_AT_ONCE", str(fail_at_once))
        .replace("SEEN", repr(str(root / "seen")))
        .replace("LITERAL", LITERAL)
    )
    (plugin / "server.py").write_text(source)
    server = {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/server.py"]}
    (plugin / ".mcp.json").write_text(json.dumps({"mcpServers": {"leaky": server}}))
    (root / "model.yaml").write_text(
        'schema_version: 1\nrules: []\ndefault: {text: "hello there"}\n'
    )
    if world:
        (root / "world.yaml").write_text(WORLD)
    suite = root / "suite.yaml"
    suite.write_text(SUITE.format(literal=LITERAL, world="world: world.yaml\n" if world else ""))
    return suite


def secret_values() -> dict[str, str]:
    return {**CREDENTIALS, "TEAM_TOKEN": TEAM_TOKEN, "literal": LITERAL}


def leaked(text: str, values: dict[str, str]) -> dict[str, list[str]]:
    """Each secret that ``text`` holds, with the forms it holds it in."""
    return {name: found for name, value in values.items() if (found := leaks(text, value))}


def everything_written(root: Path) -> str:
    """Every file under ``root`` but the test's own (the suite, the plugin, the model script)."""
    return "\n".join(
        path.read_text(errors="replace")
        for path in sorted(root.rglob("*"))
        if path.is_file() and "out" in path.relative_to(root).parts
    )


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    return clean_env(tmp_path, **CREDENTIALS, TEAM_TOKEN=TEAM_TOKEN, **extra)


def test_lint_prints_a_failing_servers_stderr_without_the_credentials(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    project(work, fail_at_once=True)
    done = skilltest(["lint", str(work / "leaky")], work, env_for(tmp_path))
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "MCP server 'leaky'" in said and "its stderr ends with:" in said
    assert "cannot start: ANTHROPIC_API_KEY=[REDACTED:ANTHROPIC_API_KEY] " in said
    assert leaked(said, CREDENTIALS) == {}


@pytest.mark.parametrize("command", ["scenarios", "validate"])
def test_a_health_check_shows_a_servers_stderr_without_any_secret(tmp_path, claude_bin, command):
    work = tmp_path / "work"
    work.mkdir()
    suite = project(work, fail_at_once=True)
    argv = [command, str(suite)]
    if command == "scenarios":
        argv += ["--backend", "emulator", "--skill-only", "--output-dir", str(work / "out")]
        argv += ["--results", str(work / "out" / "r.json")]
    done = skilltest(argv, work, env_for(tmp_path, SKILLTEST_CLAUDE=str(claude_bin)))
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "skilltest: error: MCP server 'plugin_leaky_leaky'" in said
    assert (
        "cannot start: ANTHROPIC_API_KEY=[REDACTED:ANTHROPIC_API_KEY] "
        "ANTHROPIC_AUTH_TOKEN=[REDACTED:ANTHROPIC_AUTH_TOKEN] "
        "CLAUDE_CODE_OAUTH_TOKEN=[REDACTED:CLAUDE_CODE_OAUTH_TOKEN] "
        "TEAM_TOKEN=[REDACTED:SUITE_SECRET] world=None host=[REDACTED:SUITE_SECRET]"
    ) in said
    assert "Traceback" not in said
    assert leaked(said + everything_written(work), secret_values()) == {}


@pytest.mark.cli
def test_a_server_failing_in_a_run_with_a_world_leaves_no_secret_anywhere(tmp_path, claude_bin):
    work = tmp_path / "work"
    work.mkdir()
    suite = project(work, fail_at_once=False, world=True)
    out = work / "out"
    argv = ["scenarios", str(suite), "--backend", "emulator", "--skill-only", "--output-dir",
            str(out), "--results", str(out / "r.json"), "--junit", str(out / "j.xml"),
            "--markdown", str(out / "s.md"), "--report", str(out / "r.html"),
            "--allow-inconclusive"]  # fmt: skip
    done = skilltest(argv, work, env_for(tmp_path, SKILLTEST_CLAUDE=str(claude_bin)))
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "MCP server plugin_leaky_leaky did not start in this run (status failed)" in said
    tokens = (work / "seen").read_text().split()
    assert tokens, "the server never saw the world's token"
    values = {**secret_values(), **{f"world token {i}": t for i, t in enumerate(tokens)}}
    assert leaked(said + everything_written(work), values) == {}
