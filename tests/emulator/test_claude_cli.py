"""The real Claude Code CLI, fully offline against the emulator."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from skilltest.emulator import EmulatorServer, ModelScript

SCRIPTS = Path(__file__).parent / "scripts"

# Claude Code's own skills and built-in plugins off, so only what a test creates is listed.
ISOLATION_SETTINGS = {
    "disableBundledSkills": True,
    "enabledPlugins": {
        "cc-plugin-agents-md@builtin": False,
        "cc-plugin-privacy@builtin": False,
        "cc-plugin-plugin-authoring@builtin": False,
    },
}

pytestmark = pytest.mark.cli


def run_claude(
    claude: Path,
    server: EmulatorServer,
    prompt: str,
    workdir: Path,
    *,
    setting_sources: str = "",
    extra_env: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Runs ``claude -p`` in a fresh HOME and cwd; returns the stream-json lines."""
    home, cwd = workdir / "home", workdir / "cwd"
    home.mkdir(exist_ok=True)
    cwd.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "sk-fake",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        **(extra_env or {}),
    }
    command = [
        str(claude),
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--setting-sources",
        setting_sources,
        "--settings",
        json.dumps(ISOLATION_SETTINGS),
        "--allowedTools",
        "Bash",
    ]
    done = subprocess.run(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, f"claude exited {done.returncode}: {done.stderr[-2000:]}"
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def blocks(lines: list[dict[str, Any]], role: str, kind: str) -> list[dict[str, Any]]:
    found = []
    for line in lines:
        if line.get("type") == role:
            content = line["message"]["content"]
            if isinstance(content, list):
                found += [block for block in content if block.get("type") == kind]
    return found


def result_of(lines: list[dict[str, Any]]) -> dict[str, Any]:
    results = [line for line in lines if line.get("type") == "result"]
    assert len(results) == 1, results
    return results[0]


def main_rules(server: EmulatorServer) -> list[str | None]:
    return [r.rule_id for r in server.requests if r.path == "/v1/messages"]


def test_bash_tool_call_runs_and_its_result_reaches_the_script(
    claude_bin: Path, tmp_path: Path
) -> None:
    with EmulatorServer(ModelScript.load(SCRIPTS / "bash_echo.yaml")) as server:
        lines = run_claude(claude_bin, server, "Please say hello with echo.", tmp_path)

    calls = blocks(lines, "assistant", "tool_use")
    assert [(call["name"], call["input"]["command"]) for call in calls] == [
        ("Bash", "echo hello-from-emulator")
    ]
    results = blocks(lines, "user", "tool_result")
    assert len(results) == 1 and results[0]["tool_use_id"] == calls[0]["id"]
    assert "hello-from-emulator" in json.dumps(results[0]["content"])
    result = result_of(lines)
    assert (result["subtype"], result["is_error"]) == ("success", False)
    assert result["result"] == "The command printed hello-from-emulator."
    assert main_rules(server) == ["call-bash", "after-bash"]
    # Assistant messages carry the model name the script reports.
    assert {line["message"]["model"] for line in lines if line["type"] == "assistant"} == {
        "claude-emulated"
    }


def make_project_skill(workdir: Path) -> None:
    skill = workdir / "cwd" / ".claude" / "skills" / "probe-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: probe-skill\ndescription: Use when asked about probes.\n---\n\n"
        "When this skill is used, answer with the single word PINEAPPLE.\n"
    )


def test_skill_rule_fires_only_when_the_project_skill_exists(
    claude_bin: Path, tmp_path: Path
) -> None:
    script = ModelScript.load(SCRIPTS / "skill_probe.yaml")
    with_skill, without_skill = tmp_path / "with", tmp_path / "without"
    with_skill.mkdir()
    without_skill.mkdir()
    make_project_skill(with_skill)

    with EmulatorServer(script) as server:
        lines = run_claude(
            claude_bin, server, "Tell me about probes.", with_skill, setting_sources="project"
        )
    assert main_rules(server) == ["load-skill", "follow-skill"]
    assert [call["input"] for call in blocks(lines, "assistant", "tool_use")] == [
        {"skill": "probe-skill"}
    ]
    assert result_of(lines)["result"] == "PINEAPPLE"

    with EmulatorServer(script) as server:
        lines = run_claude(
            claude_bin, server, "Tell me about probes.", without_skill, setting_sources="project"
        )
    assert main_rules(server) == [None]
    assert result_of(lines)["result"] == "A generic answer without any skill."


def test_claude_code_retries_an_injected_overload_then_succeeds(
    claude_bin: Path, tmp_path: Path
) -> None:
    script = ModelScript.from_dict(
        {
            "schema_version": 1,
            "faults": {"status": 529, "first_n": 1, "retry_after_ms": 10},
            "default": {"text": "Recovered."},
        }
    )
    with EmulatorServer(script) as server:
        lines = run_claude(claude_bin, server, "hi", tmp_path)

    retries = [line for line in lines if line.get("subtype") == "api_retry"]
    assert len(retries) == 1
    assert result_of(lines)["result"] == "Recovered."
    assert [r.status for r in server.requests if r.path == "/v1/messages"] == [529, 200]
