"""The real Claude Code CLI, fully offline against the emulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilltest.emulator import EmulatorServer, ModelScript
from tests.bare_claude import blocks, result_of, run_bare_claude

SCRIPTS = Path(__file__).parent / "scripts"

pytestmark = pytest.mark.cli


def run_claude(
    claude: Path, server: EmulatorServer, prompt: str, workdir: Path, setting_sources: str = ""
) -> list[dict[str, Any]]:
    """Runs ``claude -p`` against ``server`` in a fresh HOME and cwd; the stream-json lines."""
    env = {"ANTHROPIC_BASE_URL": server.base_url}
    return run_bare_claude(
        claude, workdir, prompt, "--allowedTools", "Bash", env=env, setting_sources=setting_sources
    )


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
