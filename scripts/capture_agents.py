"""What Codex and OpenCode print, and what they send, run offline against the emulator.

Usage::

    .venv/bin/python scripts/capture_agents.py codex CACHE/codex/node_modules/.bin/codex
    .venv/bin/python scripts/capture_agents.py opencode CACHE/opencode/node_modules/.bin/opencode

where CACHE is a folder outside the repository holding ``npm install --prefix CACHE/codex
@openai/codex@0.171.0`` and ``npm install --prefix CACHE/opencode opencode-ai@1.18.33``.

Each agent runs in a project folder of its own (a git repository holding one skill, under
``.agents/skills/greeting/``), with HOME and its configuration folders of its own, against an
emulator on loopback answering ``tests/fixtures/agents/model.yaml``: the agent is told to read
the skill's SKILL.md, then to run ``echo`` through its shell tool, then it answers. The agent's
JSON event stream is written to ``tests/fixtures/agents/<agent>/events.jsonl`` and every request
the emulator received (path, API, agent, rule, status, body) to ``requests.jsonl``; the
command line and versions go to ``capture.json``. The run's folders are replaced by
placeholders (``{PROJECT}``, ``{HOME}``) so the fixtures do not depend on where they were made.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from skilltest.emulator import EmulatorServer, ModelScript

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "agents"
PROMPT = "Greet the team using the greeting skill."
SKILL = """---
name: greeting
description: Greets the team with the house greeting. Use when asked to greet someone.
---

# Greeting

Run `echo hello from skilltest` and report what it printed.
"""


def _project(root: Path) -> Path:
    project = root / "project"
    skill = project / ".agents" / "skills" / "greeting"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def _codex(
    binary: str, base_url: str, root: Path, project: Path
) -> tuple[list[str], dict[str, str]]:
    codex_home = root / "home" / ".codex"
    codex_home.mkdir(parents=True)
    (codex_home / "config.toml").write_text(
        'model = "gpt-5.1-codex"\n'
        'model_provider = "local"\n'
        "[model_providers.local]\n"
        'name = "local"\n'
        f'base_url = "{base_url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "LOCAL_KEY"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )
    command = [binary, "exec", "--json", "--skip-git-repo-check", PROMPT]
    return command, {"CODEX_HOME": str(codex_home), "LOCAL_KEY": "sk-local-placeholder"}


def _opencode(
    binary: str, base_url: str, root: Path, project: Path
) -> tuple[list[str], dict[str, str]]:
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "local": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "skilltest emulator",
                "options": {"baseURL": f"{base_url}/v1", "apiKey": "sk-local-placeholder"},
                "models": {"stand-in": {"name": "skilltest stand-in"}},
            }
        },
        "model": "local/stand-in",
        "autoupdate": False,
        "share": "disabled",
        "permission": {"bash": "allow", "edit": "allow"},
    }
    (project / "opencode.json").write_text(json.dumps(config, indent=2) + "\n")
    return [binary, "run", "--format", "json", PROMPT], {}


AGENTS = {"codex": _codex, "opencode": _opencode}


def _version(binary: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [binary, "--version"], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    return (
        (done.stdout or done.stderr).strip().splitlines()[-1] if done.stdout or done.stderr else ""
    )


def _placeholders(text: str, places: dict[str, str]) -> str:
    for path, placeholder in sorted(places.items(), key=lambda p: -len(p[0])):
        text = text.replace(path, placeholder)
    return text


def main(agent: str, binary: str, out: Path | None = None) -> int:
    """Runs ``agent`` once and writes its fixtures into ``out`` (by default
    ``tests/fixtures/agents/<agent>``); exits 0 when the agent did."""
    script = ModelScript.load(FIXTURES / "model.yaml")
    out = out if out is not None else FIXTURES / agent
    out.mkdir(parents=True, exist_ok=True)
    # Codex refuses to set up its sandbox helpers under /tmp: the run's folders live elsewhere.
    parent = Path.home() / ".cache" / "skilltest-capture"
    parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="run-", dir=parent) as temp:
        root = Path(temp).resolve()
        project = _project(root)
        home = root / "home"
        home.mkdir(exist_ok=True)
        with EmulatorServer(script) as server:
            command, extra = AGENTS[agent](binary, server.base_url, root, project)
            env = {
                "PATH": os.environ["PATH"],
                "HOME": str(home),
                "XDG_CONFIG_HOME": str(home / ".config"),
                "XDG_DATA_HOME": str(home / ".local" / "share"),
                "XDG_CACHE_HOME": str(home / ".cache"),
                "XDG_STATE_HOME": str(home / ".local" / "state"),
                "TERM": "dumb",
                **extra,
            }
            done = subprocess.run(
                command,
                cwd=project,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            requests = server.requests
            version = _version(binary, env)
        places = {
            str(project): "{PROJECT}",
            str(home): "{HOME}",
            str(root): "{ROOT}",
            server.base_url: "{EMULATOR}",
        }
        (out / "events.jsonl").write_text(_placeholders(done.stdout, places))
        lines = []
        for request in requests:
            entry: dict[str, Any] = {
                "method": request.method,
                "path": request.path,
                "api": request.api,
                "agent": request.agent,
                "rule_id": request.rule_id,
                "status": request.status,
                "body": request.body,
            }
            lines.append(_placeholders(json.dumps(entry, ensure_ascii=False), places))
        (out / "requests.jsonl").write_text("".join(line + "\n" for line in lines))
        shown = [Path(command[0]).name, *command[1:]]
        capture = {
            "schema_version": 1,
            "agent": agent,
            "version": version,
            "command": shown,
            "exit_code": done.returncode,
            "stderr_tail": _placeholders(done.stderr[-2000:], places),
            "emulator_script": "tests/fixtures/agents/model.yaml",
            "captured_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "offline": True,
        }
        (out / "capture.json").write_text(json.dumps(capture, indent=2) + "\n")
    print(f"{agent} {version}: exit {done.returncode}, {len(requests)} requests, written to {out}")
    return 0 if done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
