"""Isolation: fresh folders, an allowlisted environment, the skill installed whole, no secrets kept."""

import json
import random
import string
import time
from pathlib import Path

import pytest

from skilltest.claude import isolation
from skilltest.claude.isolation import (
    ancestor_leaks,
    confinement_warnings,
    create_sandbox,
    init_warnings,
    isolated_env,
    isolation_flags,
    isolation_settings,
    live_credentials,
    managed_settings,
    read_confinement,
    unconfined_bash,
)
from skilltest.redact import Redactor
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
        "XDG_CONFIG_HOME": str(tmp_path / ".config"),
        "XDG_CACHE_HOME": str(tmp_path / ".cache"),
        "XDG_DATA_HOME": str(tmp_path / ".local" / "share"),
        "XDG_STATE_HOME": str(tmp_path / ".local" / "state"),
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


def skill(name: str, text: str = "---\nname: x\ndescription: d\n---\nbody\n") -> Skill:
    return Skill(name=name, skill_file=Path(f"/skills/{name}/SKILL.md"), text=text)


NO_FRONTMATTER = "Just a body, no frontmatter.\n"
HIDDEN = "---\ndescription: d\ndisable-model-invocation: true\n---\nbody\n"
HIDDEN_QUOTED = "---\r\ndescription: d\r\ndisable-model-invocation: 'True'\r\n---\r\nbody\r\n"
NOT_USER_INVOCABLE = "---\ndescription: d\nuser-invocable: false\n---\nbody\n"
BROKEN_YAML = "---\ndescription: [unclosed\ndisable-model-invocation: true\n---\nbody\n"

# The init events Claude Code 2.1.328 printed for each SKILL.md (seen against the emulator):
# `skills` leaves out a skill without a description or with user-invocable: false, and keeps
# one with disable-model-invocation, which the model is never told about.
COMMANDS = ["doctor", "clear", "compact"]
NOT_SHOWN = "the model was not shown skill 'lgtm': its SKILL.md sets disable-model-invocation"
NOT_LOADED = "the CLI did not load skill 'lgtm', so the model was not shown it"


@pytest.mark.parametrize(
    ("text", "init", "warning"),
    [
        (
            "---\ndescription: d\n---\n",
            {"skills": ["lgtm", "doctor"], "slash_commands": ["lgtm"]},
            None,
        ),
        (NO_FRONTMATTER, {"skills": ["doctor"], "slash_commands": ["lgtm", *COMMANDS]}, None),
        (NOT_USER_INVOCABLE, {"skills": ["doctor"], "slash_commands": COMMANDS}, None),
        (HIDDEN, {"skills": ["lgtm", "doctor"], "slash_commands": ["lgtm", *COMMANDS]}, NOT_SHOWN),
        (HIDDEN_QUOTED, {"skills": ["lgtm", "doctor"], "slash_commands": ["lgtm"]}, NOT_SHOWN),
        (BROKEN_YAML, {"skills": ["lgtm", "doctor"], "slash_commands": ["lgtm"]}, NOT_SHOWN),
        (
            "---\ndescription: d\n---\n",
            {"skills": ["doctor"], "slash_commands": COMMANDS},
            NOT_LOADED,
        ),
    ],
    ids=[
        "described",
        "no-frontmatter",
        "not-user-invocable",
        "hidden",
        "hidden-crlf-quoted",
        "hidden-broken-yaml",
        "not-loaded",
    ],
)
def test_without_requests_the_warning_follows_what_the_cli_shows_the_model(text, init, warning):
    warnings = init_warnings({**init, "plugins": []}, [skill("lgtm", text)])
    if warning is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and warnings[0].startswith(warning), warnings


def main_request(*listed: str) -> dict:
    listing = "".join(f"- {name}: does things\n" for name in listed)
    text = f"The following skills are available for use with the Skill tool:\n\n{listing}\nToday"
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]}
    return {"path": "/v1/messages", "side_request": None, "body": body}


def test_with_requests_the_listing_the_model_saw_decides():
    init = {"skills": ["doctor"], "slash_commands": ["lgtm"], "plugins": []}
    side = {"path": "/v1/messages", "side_request": "title", "body": {"messages": []}}
    listed = [side, main_request("lgtm")]
    assert init_warnings(init, [skill("lgtm", NO_FRONTMATTER)], requests=listed) == []
    # Listed under its folder's name with the frontmatter's name beside it.
    aliased = [main_request("lgtm (logs-tool)")]
    assert init_warnings(init, [skill("lgtm")], requests=aliased) == []
    assert init_warnings(init, [skill("lgtm")], requests=[main_request()]) == [
        "the model was not shown skill 'lgtm': no request listed it"
    ]
    assert init_warnings(init, [skill("lgtm", HIDDEN)], requests=[main_request()])[0].startswith(
        NOT_SHOWN
    )
    # A skill listed to the model that nobody installed, even one the init event leaves out.
    assert init_warnings(init, [], requests=[main_request("user-skill")]) == [
        "skills from outside the sandbox were loaded: user-skill"
    ]
    # Only side requests: nothing to read, so the init event decides.
    assert init_warnings(init, [skill("lgtm", NO_FRONTMATTER)], requests=[side]) == []


def test_init_event_checks():
    init = {"skills": ["lgtm", "doctor"], "plugins": []}
    assert init_warnings(init, [skill("lgtm")]) == []
    assert init_warnings({"skills": ["doctor"], "plugins": []}, []) == []
    assert init_warnings(None, [skill("lgtm")]) == []  # a run that printed nothing says so itself
    leaky = {"skills": ["doctor", "debug", "user-skill"], "plugins": [{"name": "p"}]}
    assert init_warnings(leaky, []) == [
        "skills from outside the sandbox were loaded: debug, user-skill",
        "plugins were loaded: p",
    ]


# --- reads outside the sandbox -------------------------------------------------------------


def test_reads_are_confined_to_the_sandbox_and_protected_folders_denied_to_shell_commands(
    tmp_path,
):
    repo = tmp_path / "checkout"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "skills" / "lgtm").mkdir(parents=True)
    (repo / "tests" / "scenarios").mkdir(parents=True)
    suite = repo / "tests" / "scenarios" / "lgtm.yaml"
    suite.write_text("skill: lgtm\n")
    outside = tmp_path / "elsewhere" / "lgtm"
    outside.mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    sandbox = create_sandbox(skill=None, base=tmp_path)

    permissions = read_confinement(sandbox, [repo / "skills" / "lgtm", suite, outside], home=home)

    assert permissions == {
        "blockFileToolReadsOutsideWorkingDirectories": True,
        "additionalDirectories": [str(sandbox.tmp.resolve())],
        "deny": [
            f"Read(/{repo})",  # the repository of the skill and the suite, once
            f"Read(/{repo}/**)",
            f"Read(/{home})",
            f"Read(/{home}/**)",
            f"Read(/{outside})",  # no repository: its own folder
            f"Read(/{outside}/**)",
        ],
    }
    assert permissions["deny"][0].startswith("Read(//")
    # A folder that holds the sandbox (here: the test's temp folder) is never denied.
    held = read_confinement(sandbox, [tmp_path], home=tmp_path)
    assert held["deny"] == []
    flags = isolation_flags("2.1.328", sandbox=sandbox, protected=[suite])
    settings = json.loads(flags[flags.index("--settings") + 1])
    assert settings["permissions"]["blockFileToolReadsOutsideWorkingDirectories"] is True
    assert settings["disableBundledSkills"] is True


def test_managed_settings_are_found_and_reported_on_every_run(tmp_path):
    assert managed_settings(tmp_path / "absent") == []
    (tmp_path / "managed-settings.d").mkdir()
    (tmp_path / "managed-settings.d" / "10-policy.json").write_text("{}")
    (tmp_path / "managed-settings.json").write_text("{}")
    found = managed_settings(tmp_path)
    assert found == [
        tmp_path / "managed-settings.json",
        tmp_path / "managed-settings.d/10-policy.json",
    ]
    assert confinement_warnings(managed=found[:1]) == [
        f"managed settings at {found[0]} apply to this run: Claude Code ranks them above every "
        "flag, so they cannot be kept out (both arms get them)"
    ]
    assert confinement_warnings(managed=[]) == []


def test_unconfined_bash_is_said_when_bash_is_allowed():
    assert unconfined_bash(["Read", "Skill"]) is None
    for rules in (["Bash"], ["Read", "Bash(git *)"]):
        notice = unconfined_bash(rules)
        assert notice is not None and notice.startswith("Bash is not confined to the sandbox")


# --- redaction ----------------------------------------------------------------------------

KEY = "sk-ant-api03-" + "Zq8vR2mXw7LpT4nB9cYd1KfH6sJ3gA5eU0oN-iQ_rV"


def test_a_credential_piece_of_12_characters_or_more_is_redacted_whole():
    redact = Redactor({"ANTHROPIC_API_KEY": KEY})
    label = "[REDACTED:ANTHROPIC_API_KEY]"
    suffix = KEY.removeprefix("sk-ant-")
    assert redact(f"key={suffix}!") == f"key={label}!"
    assert redact(f"<{KEY[20:32]}>") == f"<{label}>"  # exactly 12
    assert redact(f"<{KEY[20:31]}>") == f"<{KEY[20:31]}>"  # 11: ordinary text
    # The longest run shared with the key goes, not just 12 characters of it.
    assert redact(f"{KEY[5:40]}Zq8") == f"{label}Zq8"
    # Two pieces, and the whole key, in one text.
    text = f"a {KEY[:15]} b {KEY[-14:]} c {KEY} d"
    assert redact(text) == f"a {label} b {label} c {label} d"


def test_redacting_a_5_mb_transcript_ends_no_hang():
    """Its speed is measured by scripts/bench_redact.py."""
    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits + ' {}":,-_'
    filler = "".join(rng.choice(alphabet) for _ in range(1_000_000)) * 5
    text = filler[:2_500_000] + KEY[13:] + filler[2_500_000:] + KEY[30:50]
    redact = Redactor({"ANTHROPIC_API_KEY": KEY, "CLAUDE_CODE_OAUTH_TOKEN": KEY[::-1]})
    started = time.perf_counter()
    redacted = redact(text)
    assert time.perf_counter() - started < 120
    assert redacted.count("[REDACTED:ANTHROPIC_API_KEY]") == 2
    assert KEY[13:25] not in redacted
