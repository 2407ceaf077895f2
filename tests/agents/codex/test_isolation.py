"""A Codex run's folders, config.toml, environment and command line."""

from __future__ import annotations

import tempfile
import tomllib
from pathlib import Path

import pytest

from skilltest.agents.codex import (
    KEY_VARIABLE,
    PLACEHOLDER_KEY,
    codex_command,
    codex_config,
    codex_env,
    codex_mcp_server,
    prepare_codex_run,
)
from skilltest.errors import ConfigurationError
from skilltest.skills import load_skill

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "agents" / "codex"
SKILL = FIXTURES / "skill" / "greeting" / "SKILL.md"


@pytest.fixture
def root():
    # Codex sets up no shell when CODEX_HOME is under /tmp, so runs live elsewhere.
    parent = Path.home() / ".cache" / "skilltest-tests"
    parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=parent) as folder:
        yield Path(folder)


def test_the_config_points_codex_at_the_endpoint_through_the_responses_api():
    config = tomllib.loads(codex_config("http://127.0.0.1:4321/", model="gpt-5.1-codex"))
    assert config == {
        "model": "gpt-5.1-codex",
        "model_provider": "skilltest",
        "approval_policy": "never",
        "sandbox_mode": "workspace-write",
        "check_for_update_on_startup": False,
        "analytics": {"enabled": False},
        "feedback": {"enabled": False},
        "history": {"persistence": "none"},
        "model_providers": {
            "skilltest": {
                "name": "skilltest endpoint",
                "base_url": "http://127.0.0.1:4321/v1",
                "wire_api": "responses",
                "env_key": KEY_VARIABLE,
                "request_max_retries": 0,
                "stream_max_retries": 0,
            }
        },
    }


def test_an_mcp_server_appended_to_the_config_starts_by_its_command_and_runs_unasked():
    text = codex_config("http://127.0.0.1:4321", model="m")
    text += codex_mcp_server("tracker", "/usr/bin/python3", ["server.py", 'say "hi"'])
    assert tomllib.loads(text)["mcp_servers"] == {
        "tracker": {
            "command": "/usr/bin/python3",
            "args": ["server.py", 'say "hi"'],
            "default_tools_approval_mode": "approve",
        }
    }


def test_the_config_holds_no_key_only_the_name_of_the_placeholders_variable():
    text = codex_config("http://127.0.0.1:4321", model="m")
    assert PLACEHOLDER_KEY not in text
    assert "sk-" not in text
    assert "api_key" not in text.lower()
    assert f'env_key = "{KEY_VARIABLE}"' in text


def test_the_skill_arm_installs_the_whole_skill_where_codex_reads_skills(root):
    skill = load_skill(SKILL)
    run = prepare_codex_run(
        root, root / "work", base_url="http://127.0.0.1:9", model="m", skill=skill
    )
    assert run.skill == root / "work" / ".agents" / "skills" / "greeting"
    assert (run.skill / "SKILL.md").read_text() == SKILL.read_text()
    assert (run.codex_home / "config.toml").read_text() == codex_config(
        "http://127.0.0.1:9", model="m"
    )
    assert run.codex_home.parent == run.home


def test_the_baseline_arm_gets_no_skill_at_all(root):
    run = prepare_codex_run(
        root, root / "work", base_url="http://127.0.0.1:9", model="m", skill=None
    )
    assert run.skill is None
    assert not (root / "work" / ".agents").exists()
    assert [p.name for p in (root / "work").iterdir()] == [".git"]


def test_the_workspace_becomes_a_project_root_of_its_own_unless_it_is_one(root):
    run = prepare_codex_run(
        root, root / "new", base_url="http://127.0.0.1:9", model="m", skill=None
    )
    assert (run.workspace / ".git" / "HEAD").is_file()
    (root / "own" / ".git").mkdir(parents=True)
    (root / "own" / ".git" / "marker").write_text("kept")
    prepare_codex_run(root, root / "own", base_url="http://127.0.0.1:9", model="m", skill=None)
    assert [p.name for p in (root / "own" / ".git").iterdir()] == ["marker"]


def test_a_run_under_tmp_is_refused_naming_the_reason_and_the_fix(tmp_path):
    if not str(tmp_path.resolve()).startswith("/tmp/"):
        pytest.skip("pytest's temporary folders are not under /tmp here")
    with pytest.raises(ConfigurationError) as raised:
        prepare_codex_run(
            tmp_path, tmp_path / "w", base_url="http://127.0.0.1:9", model="m", skill=None
        )
    assert str(raised.value) == (
        f"{tmp_path}: a Codex run's folders cannot be under /tmp (Codex 0.171.0 sets up no "
        "shell for the model when CODEX_HOME is there)\n"
        "  fix: put the run's folders elsewhere, e.g. under ~/.cache (SKILLTEST_CACHE_DIR)"
    )


def test_the_environment_is_the_runs_own_with_the_placeholder_and_no_caller_credential(root):
    run = prepare_codex_run(
        root, root / "work", base_url="http://127.0.0.1:9", model="m", skill=None
    )
    caller = {
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "OPENAI_API_KEY": "sk-real-openai",
        "ANTHROPIC_API_KEY": "sk-ant-real",
        "CODEX_HOME": "/home/me/.codex",
        "LANG": "C.UTF-8",
    }
    env = codex_env(run, caller)
    assert env["HOME"] == str(run.home)
    assert env["CODEX_HOME"] == str(run.codex_home)
    assert env[KEY_VARIABLE] == PLACEHOLDER_KEY
    assert env["PATH"] == "/usr/bin"
    assert env["LANG"] == "C.UTF-8"
    assert "OPENAI_API_KEY" not in env and "ANTHROPIC_API_KEY" not in env
    assert all(not value.startswith(str(Path("/home/me"))) for value in env.values())


def test_the_command_is_codex_exec_json_with_the_prompt_last():
    assert codex_command(Path("/x/codex"), "Say hi.") == [
        "/x/codex",
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--strict-config",
        "Say hi.",
    ]
    assert codex_command("codex", "p", extra=["-m", "o3"])[-3:] == ["-m", "o3", "p"]


def test_a_later_message_resumes_the_runs_conversation():
    assert codex_command("codex", "And now?", session="01a2-thread") == [
        "codex",
        "exec",
        "resume",
        "--json",
        "--skip-git-repo-check",
        "--strict-config",
        "01a2-thread",
        "And now?",
    ]
