"""Agents by name: each registered by its module, imported only when a run asks for it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from skilltest.agents import agent, agent_names
from skilltest.agents.tools import SUITE_NAMES
from skilltest.cli import main
from skilltest.errors import InputError


def test_claude_code_and_opencode_are_agents_of_one_protocol():
    claude, opencode = agent("claude-code"), agent("opencode")

    assert (claude.name, claude.skill_tool, claude.confinement) == ("claude-code", "Skill", "os")
    assert (opencode.name, opencode.skill_tool) == ("opencode", "skill")
    assert opencode.confinement == "proxy-env"
    assert opencode.tools == SUITE_NAMES["opencode"]
    assert {"claude-code", "opencode"} <= set(agent_names())


def test_codex_is_an_agent_of_the_same_protocol_speaking_the_responses_api():
    codex = agent("codex")

    assert (codex.name, codex.title, codex.pinned_version) == ("codex", "Codex", "0.171.0")
    assert (codex.skills_folder, codex.skill_tool) == (".agents/skills", "command_execution")
    assert (codex.model_api, agent("opencode").model_api) == ("responses", "anthropic")
    assert codex.tools["command_execution"] == "Bash"
    assert agent_names() == ("claude-code", "opencode", "codex", "gemini")


def test_gemini_cli_is_an_agent_of_the_same_protocol_speaking_the_gemini_api():
    gemini = agent("gemini")

    assert (gemini.name, gemini.title, gemini.pinned_version) == ("gemini", "Gemini", "0.61.0")
    assert (gemini.skills_folder, gemini.skill_tool) == (".gemini/skills", "activate_skill")
    assert (gemini.model_api, gemini.confinement) == ("gemini", "proxy-env")
    assert gemini.tools["run_shell_command"] == "Bash"
    assert gemini.tools["activate_skill"] == "Skill"


def test_an_unknown_agent_is_bad_input_naming_the_agents_there_are():
    with pytest.raises(InputError) as raised:
        agent("aider")

    assert str(raised.value).startswith("--agent: no agent named 'aider'\n  fix: name one of: ")
    assert "claude-code, opencode, codex, gemini" in str(raised.value)


def test_no_agent_module_is_imported_until_it_is_asked_for():
    code = (
        "import sys, skilltest.agents as a, skilltest.scenarios.layer\n"
        "print(sorted(m for m in sys.modules if m.startswith('skilltest.agents.')))\n"
        "a.agent('opencode')\n"
        "print('skilltest.agents.opencode' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    before, after = done.stdout.splitlines()
    assert "opencode" not in before and "claude_code" not in before and "codex" not in before
    assert "gemini" not in before
    assert after == "True"


def test_setup_refuses_an_unknown_agent_before_installing_anything(capsys):
    assert main(["setup", "--agent", "opencode", "--agent", "nope"]) == 2

    assert "--agent: no agent named 'nope'" in capsys.readouterr().err
