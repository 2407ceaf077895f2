"""Isolation: fresh folders, an allowlisted environment, the skill installed whole, no secrets kept."""

import json
from pathlib import Path

from skilltest.claude import isolation
from skilltest.claude.isolation import (
    Redactor,
    ancestor_leaks,
    create_sandbox,
    init_warnings,
    isolated_env,
    isolation_flags,
    isolation_settings,
    live_credentials,
)
from skilltest.skills import Skill


def make_skill(root: Path) -> Skill:
    folder = root / "skills" / "lgtm"
    (folder / "reference").mkdir(parents=True)
    (folder / "scripts").mkdir()
    (folder / "SKILL.md").write_text("---\nname: lgtm\ndescription: d\n---\nbody\n")
    (folder / "reference" / "logql.md").write_text("patterns")
    tool = folder / "scripts" / "lgtm"
    tool.write_text("#!/bin/sh\necho '{}'\n")
    tool.chmod(0o755)
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_bytes(b"")
    return Skill(name="lgtm", skill_file=folder / "SKILL.md", text="body")


def test_with_skill_sandbox_has_the_whole_skill_folder(tmp_path):
    sandbox = create_sandbox(skill=make_skill(tmp_path), base=tmp_path)
    installed = sandbox.workdir / ".claude" / "skills" / "lgtm"
    assert (installed / "SKILL.md").read_text().endswith("body\n")
    assert (installed / "reference" / "logql.md").is_file()
    assert (installed / "scripts" / "lgtm").stat().st_mode & 0o111  # still executable
    assert not (installed / "__pycache__").exists()
    assert sorted(p.name for p in sandbox.home.iterdir()) == []
    sandbox.remove()
    assert not sandbox.root.exists()


def test_without_skill_sandbox_is_identical_but_for_the_skill(tmp_path):
    fixture = tmp_path / "fixture"
    (fixture / "src").mkdir(parents=True)
    (fixture / "src" / "app.py").write_text("print('hi')\n")
    with_skill = create_sandbox(skill=make_skill(tmp_path), workspace=fixture, base=tmp_path)
    without = create_sandbox(skill=None, workspace=fixture, base=tmp_path)

    def tree(root: Path) -> set[str]:
        return {str(p.relative_to(root)) for p in root.rglob("*") if ".git" not in p.parts}

    assert tree(with_skill.workdir) - tree(without.workdir) == {
        ".claude",
        ".claude/skills",
        ".claude/skills/lgtm",
        ".claude/skills/lgtm/SKILL.md",
        ".claude/skills/lgtm/reference",
        ".claude/skills/lgtm/reference/logql.md",
        ".claude/skills/lgtm/scripts",
        ".claude/skills/lgtm/scripts/lgtm",
    }
    assert tree(without.workdir) == {"src", "src/app.py"}
    assert with_skill.root != without.root
    # Both are the root of an empty repository, so nothing above them is discovered.
    for sandbox in (with_skill, without):
        assert (sandbox.workdir / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
        assert not (sandbox.workdir / ".git" / "hooks").exists()


def test_environment_is_an_allowlist_plus_a_fresh_home_and_credentials(tmp_path):
    caller = {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": "/home/me",
        "CLAUDE_CONFIG_DIR": "/home/me/.claude-work",
        "ANTHROPIC_MODEL": "claude-opus",
        "ANTHROPIC_API_KEY": "sk-user-real-key",
        "NODE_OPTIONS": "--inspect",
        "HTTPS_PROXY": "http://proxy:3128",
        "AWS_SECRET_ACCESS_KEY": "nope",
    }
    env = isolated_env(home=tmp_path, credentials={"ANTHROPIC_API_KEY": "sk-run"}, base=caller)
    assert env == {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HTTPS_PROXY": "http://proxy:3128",
        "HOME": str(tmp_path),
        "ANTHROPIC_API_KEY": "sk-run",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
        "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
    }


def test_live_credentials_are_the_three_variables_and_a_base_url():
    caller = {
        "ANTHROPIC_API_KEY": "k",
        "CLAUDE_CODE_OAUTH_TOKEN": "t",
        "ANTHROPIC_AUTH_TOKEN": "",
        "ANTHROPIC_BASE_URL": "https://gateway",
        "ANTHROPIC_MODEL": "x",
    }
    assert live_credentials(caller) == {
        "ANTHROPIC_API_KEY": "k",
        "CLAUDE_CODE_OAUTH_TOKEN": "t",
        "ANTHROPIC_BASE_URL": "https://gateway",
    }


def test_redactor_replaces_every_credential_value():
    redact = Redactor.for_environment(
        {
            "ANTHROPIC_API_KEY": "sk-ant-api03-secretvalue",
            "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-othersecret",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:1234",
            "ANTHROPIC_AUTH_TOKEN": "short",
        }
    )
    text = 'x-api-key: sk-ant-api03-secretvalue and "sk-ant-oat01-othersecret" at 127.0.0.1:1234'
    assert redact(text) == (
        "x-api-key: [REDACTED:ANTHROPIC_API_KEY] and "
        '"[REDACTED:CLAUDE_CODE_OAUTH_TOKEN]" at 127.0.0.1:1234'
    )


def test_flags_keep_user_settings_bundled_skills_plugins_and_mcp_out():
    flags = isolation_flags("2.1.328")
    assert flags[:3] == ["--setting-sources", "project", "--strict-mcp-config"]
    assert flags[3] == "--settings"
    assert json.loads(flags[4]) == {
        "disableBundledSkills": True,
        "enabledPlugins": {
            "cc-plugin-agents-md@builtin": False,
            "cc-plugin-privacy@builtin": False,
            "cc-plugin-plugin-authoring@builtin": False,
        },
    }
    assert isolation_settings("9.9.9") == isolation_settings("2.1.328")


def test_without_git_what_is_above_the_sandbox_is_reported(tmp_path, monkeypatch):
    (tmp_path / "CLAUDE.md").write_text("house rules")
    (tmp_path / ".claude" / "skills").mkdir(parents=True)
    assert ancestor_leaks(create_sandbox(skill=None, base=tmp_path).workdir) == []
    monkeypatch.setattr(isolation.shutil, "which", lambda name, **kwargs: None)
    sandbox = create_sandbox(skill=None, base=tmp_path)
    assert not (sandbox.workdir / ".git").exists()
    assert ancestor_leaks(sandbox.workdir) == [tmp_path / "CLAUDE.md", tmp_path / ".claude/skills"]


def test_init_event_checks():
    init = {"skills": ["lgtm", "doctor"], "plugins": []}
    assert init_warnings(init, ["lgtm"]) == []
    assert init_warnings({"skills": ["doctor"], "plugins": []}, []) == []
    assert init_warnings({"skills": ["doctor"], "plugins": []}, ["lgtm"]) == [
        "the CLI did not list skill 'lgtm' at startup (check SKILL.md's frontmatter)"
    ]
    leaky = {"skills": ["doctor", "debug", "user-skill"], "plugins": [{"name": "p"}]}
    assert init_warnings(leaky, []) == [
        "skills from outside the sandbox were loaded: debug, user-skill",
        "plugins were loaded: p",
    ]
