"""OpenCode installed, found and isolated: `skilltest setup --agent opencode` with npm into
skilltest's cache (npm is a stand-in here that lays out the package as the real one does), and
the configuration and environment a run gets."""

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
version = os.environ.get("FAKE_NPM_VERSION", args[-1].rsplit("@", 1)[1])
prefix = Path(args[args.index("--prefix") + 1])
package = prefix / "node_modules" / "opencode-ai" / "bin"
package.mkdir(parents=True)
exe = package / "opencode.exe"
exe.write_text(f"#!/bin/sh\\necho {{version}}\\n")
exe.chmod(0o755)
(prefix / "node_modules" / ".bin").mkdir()
(prefix / "node_modules" / ".bin" / "opencode").symlink_to("../opencode-ai/bin/opencode.exe")
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
    monkeypatch.delenv("SKILLTEST_OPENCODE", raising=False)
    return tmp_path


def test_setup_installs_the_pinned_opencode_where_agent_opencode_finds_it(npm: Path, capsys):
    assert main(["setup", "--agent", "opencode"]) == 0

    target = npm / "cache" / "opencode-1.18.33" / "node_modules" / ".bin" / "opencode"
    out = capsys.readouterr().out
    assert out == f"opencode 1.18.33 installed at {target}\n"
    assert (npm / "npm.log").read_text().endswith("--prefer-offline opencode-ai@1.18.33")
    found = agent("opencode").find()
    assert (found.path, found.version, found.known) == (target.absolute(), "1.18.33", True)

    assert main(["setup", "--agent", "opencode"]) == 0
    assert capsys.readouterr().out == f"opencode 1.18.33 already installed at {target}\n"


def test_an_install_reporting_another_version_is_refused_and_left_out(
    npm: Path, capsys, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("FAKE_NPM_VERSION", "1.0.0")

    assert main(["setup", "--agent", "opencode"]) == 2

    err = capsys.readouterr().err
    assert "npm installed opencode-ai@1.18.33, but its opencode reports version 1.0.0" in err
    assert not (npm / "cache" / "opencode-1.18.33").exists()


def test_without_an_opencode_the_run_is_told_how_to_install_one(npm: Path):
    with pytest.raises(Exception) as raised:
        agent("opencode").find()

    assert "no opencode executable was found" in str(raised.value)
    assert "skilltest setup --agent opencode" in str(raised.value)


def test_a_run_is_configured_for_the_endpoint_with_its_placeholder_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-real-key")
    monkeypatch.setenv("OPENCODE_CONFIG_CONTENT", "{}")
    folders = RunFolders(tmp_path, tmp_path / "work", tmp_path / "home", tmp_path / "tmp")
    endpoint = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:4567", "ANTHROPIC_API_KEY": "sk-run-1"}

    env = agent("opencode").isolate(folders, endpoint, model=None)

    config = json.loads(Path(env["OPENCODE_CONFIG"]).read_text())
    assert Path(env["OPENCODE_CONFIG"]).parent == tmp_path / "opencode"
    assert config["provider"] == {
        "anthropic": {"options": {"baseURL": "http://127.0.0.1:4567/v1", "apiKey": "sk-run-1"}}
    }
    assert config["model"] == "anthropic/claude-sonnet-4-5"
    assert (config["autoupdate"], config["share"]) == (False, "disabled")
    assert env["HOME"] == str(tmp_path / "home")
    assert env["XDG_CONFIG_HOME"].startswith(str(tmp_path / "home"))
    assert env["OPENCODE_DISABLE_MODELS_FETCH"] == env["OPENCODE_DISABLE_AUTOUPDATE"] == "1"
    # neither the caller's key nor the run's endpoint reaches the agent's commands
    assert not any(name.startswith("ANTHROPIC_") for name in env)
    assert "OPENCODE_CONFIG_CONTENT" not in env
    assert "sk-ant-real-key" not in json.dumps(config)


def test_each_turn_is_one_non_interactive_run_continuing_the_session(tmp_path: Path):
    opencode = agent("opencode")
    found = AgentBinary("opencode", Path("/opt/opencode"), "1.18.33", "1.18.33")

    first = opencode.turn_argv(found, "-k is a flag?", session=None)
    then = opencode.turn_argv(found, "and now?", session="ses_1")

    assert first == ("/opt/opencode", "run", "--pure", "--format", "json", "--", "-k is a flag?")
    assert then[-4:] == ("--session", "ses_1", "--", "and now?")
