"""Gemini CLI installed, found and isolated: `skilltest setup --agent gemini` with npm into
skilltest's cache (npm is a stand-in here that lays out the package as the real one does), and
the settings, environment and command line a run gets."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from skilltest.agents import agent
from skilltest.agents.base import AgentBinary, RunFolders
from skilltest.cli import main

FAKE_NPM = """\
#!{python}
import os, sys
from pathlib import Path
args = sys.argv[1:]
Path(os.environ["FAKE_NPM_LOG"]).write_text(" ".join(args))
version = args[-1].rsplit("@", 1)[1]
prefix = Path(args[args.index("--prefix") + 1])
package = prefix / "node_modules" / "@google" / "gemini-cli" / "bundle"
package.mkdir(parents=True)
exe = package / "gemini.js"
exe.write_text(f"#!/bin/sh\\necho {{version}}\\n")
exe.chmod(0o755)
(prefix / "node_modules" / ".bin").mkdir()
(prefix / "node_modules" / ".bin" / "gemini").symlink_to("../@google/gemini-cli/bundle/gemini.js")
"""


@pytest.fixture
def npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding only a fake npm and node; the cache and npm's log in tmp_path."""
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "npm").write_text(FAKE_NPM.format(python=sys.executable))
    (tools / "node").write_text("#!/bin/sh\necho v22.0.0\n")
    for each in tools.iterdir():
        each.chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    monkeypatch.setenv("SKILLTEST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_NPM_LOG", str(tmp_path / "npm.log"))
    monkeypatch.delenv("SKILLTEST_GEMINI", raising=False)
    return tmp_path


def test_setup_installs_the_pinned_gemini_cli_where_agent_gemini_finds_it(npm: Path, capsys):
    assert main(["setup", "--agent", "gemini"]) == 0

    target = npm / "cache" / "gemini-0.61.0" / "node_modules" / ".bin" / "gemini"
    assert capsys.readouterr().out == f"gemini 0.61.0 installed at {target}\n"
    assert (npm / "npm.log").read_text().endswith("--prefer-offline @google/gemini-cli@0.61.0")
    found = agent("gemini").find()
    assert (found.path, found.version, found.known) == (target.absolute(), "0.61.0", True)


def test_without_a_gemini_the_run_is_told_how_to_install_one(npm: Path):
    with pytest.raises(Exception) as raised:
        agent("gemini").find()

    assert "no gemini executable was found" in str(raised.value)
    assert "skilltest setup --agent gemini" in str(raised.value)


def test_a_run_gets_its_own_home_settings_the_endpoint_and_only_a_placeholder_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-real-key")
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-other-real-key")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com")
    work = tmp_path / "work"
    (work / ".claude" / "skills" / "lgtm").mkdir(parents=True)
    (work / ".claude" / "skills" / "lgtm" / "SKILL.md").write_text("---\nname: lgtm\n---\n")
    folders = RunFolders(tmp_path, work, tmp_path / "home", tmp_path / "tmp")
    endpoint = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:4567", "ANTHROPIC_API_KEY": "sk-run-1"}

    env = agent("gemini").isolate(folders, endpoint, model=None)

    settings = json.loads((tmp_path / "home" / ".gemini" / "settings.json").read_text())
    assert settings["security"] == {"auth": {"selectedType": "gemini-api-key"}}
    assert settings["privacy"] == {"usageStatisticsEnabled": False}
    assert settings["telemetry"] == {"enabled": False}
    assert settings["general"]["enableAutoUpdate"] is False
    assert settings["general"]["maxAttempts"] == 1
    assert settings["skills"] == {"disabled": ["skill-creator", "antigravity-support"]}
    assert "model" not in settings
    assert env["HOME"] == str(tmp_path / "home")
    assert env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:4567"
    assert env["GEMINI_API_KEY"] == "skilltest-placeholder-key"
    assert env["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    assert "GOOGLE_API_KEY" not in env
    assert "AIza" not in json.dumps(env) + json.dumps(settings)
    assert not any(name.startswith("ANTHROPIC_") for name in env)
    # The skill moved to where Gemini CLI reads project skills.
    assert (work / ".gemini" / "skills" / "lgtm" / "SKILL.md").is_file()
    assert not (work / ".claude").exists()


def test_a_run_that_names_a_model_asks_gemini_cli_for_it(tmp_path: Path):
    folders = RunFolders(tmp_path, tmp_path / "work", tmp_path / "home", tmp_path / "tmp")
    (tmp_path / "work").mkdir()

    agent("gemini").isolate(folders, {"ANTHROPIC_BASE_URL": "http://127.0.0.1:1"}, model="m-1")

    settings = json.loads((tmp_path / "home" / ".gemini" / "settings.json").read_text())
    assert settings["model"] == {"name": "m-1"}


def test_each_turn_is_one_headless_run_that_approves_its_tools_and_resumes_the_session():
    gemini = agent("gemini")
    found = AgentBinary("gemini", Path("/opt/gemini"), "0.61.0", "0.61.0")

    first = gemini.turn_argv(found, "-k is a flag?", session=None)
    then = gemini.turn_argv(found, "and now?", session="5ff5340d")

    assert first == (
        "/opt/gemini",
        "--output-format",
        "stream-json",
        "--approval-mode",
        "yolo",
        "--prompt=-k is a flag?",
    )
    assert then[-3:] == ("--resume", "5ff5340d", "--prompt=and now?")
