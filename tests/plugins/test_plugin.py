"""Plugin folders as Claude Code loads them: what a plugin holds, and each broken plugin's error
with its file, place and fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.errors import PluginError, SuiteError
from skilltest.plugins import (
    McpServer,
    inspect_marketplace,
    inspect_plugin,
    load_plugin,
    mcp_config,
    mcp_servers_from,
)

from ..projects import write_files

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "observability"
SKILL = "---\nname: {name}\ndescription: A skill.\n---\nbody\n"


def make_plugin(root: Path, files: dict[str, str]) -> Path:
    """A plugin folder with ``files`` (path -> text); a manifest named ``demo`` unless given."""
    return write_files(root, {".claude-plugin/plugin.json": '{"name": "demo"}', **files})


def test_the_fixture_plugin_has_its_skills_hooks_and_server():
    plugin = load_plugin(FIXTURE)
    assert plugin.name == "observability"
    assert plugin.listed_skill_names == ("observability:log-triage", "observability:trace-latency")
    assert plugin.skill("trace-latency").description.startswith("Find slow requests")
    assert (
        plugin.skill("observability:log-triage").skill_file
        == FIXTURE / "skills/log-triage/SKILL.md"
    )
    assert plugin.skill("no-such-skill") is None
    assert plugin.hooks == FIXTURE / "hooks/hooks.json"
    assert (plugin.commands, plugin.agents) == ((), ())
    assert plugin.mcp_servers == (
        McpServer(
            name="telemetry",
            command="python3",
            args=(f"{FIXTURE}/server.py",),
            origin=f"{FIXTURE}/.mcp.json#/mcpServers/telemetry",
        ),
    )
    assert mcp_config(plugin.mcp_servers) == {
        "mcpServers": {
            "telemetry": {"command": "python3", "args": [f"{FIXTURE}/server.py"], "env": {}}
        }
    }


def test_a_folder_without_a_manifest_is_named_after_itself_as_plugin_dir_does(tmp_path):
    root = tmp_path / "bare-plugin"
    (root / "skills" / "one").mkdir(parents=True)
    (root / "skills" / "one" / "SKILL.md").write_text(SKILL.format(name="one"))
    plugin = load_plugin(root)
    assert (plugin.name, plugin.manifest, plugin.listed_skill_names) == (
        "bare-plugin",
        {},
        ("bare-plugin:one",),
    )


def test_manifest_paths_add_skills_and_replace_the_commands_folder(tmp_path):
    root = make_plugin(
        tmp_path,
        {
            ".claude-plugin/plugin.json": json.dumps(
                {
                    "name": "demo",
                    "skills": ["./extra/", "./single"],
                    "commands": "./custom/deploy.md",
                    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]},
                    "mcpServers": {
                        "db": {
                            "command": "${CLAUDE_PLUGIN_ROOT}/bin/db",
                            "env": {"ROOT": "${CLAUDE_PLUGIN_ROOT}"},
                        }
                    },
                }
            ),
            "skills/base/SKILL.md": SKILL.format(name="base"),
            "extra/more/SKILL.md": SKILL.format(name="more"),
            "single/SKILL.md": SKILL.format(name="single"),
            "commands/ignored.md": "not loaded: the manifest lists commands",
            "custom/deploy.md": "deploy",
            "agents/reviewer.md": "an agent",
        },
    )
    plugin = load_plugin(root)
    assert [s.name for s in plugin.skills] == ["base", "more", "single"]
    assert plugin.commands == (root / "custom/deploy.md",)
    assert plugin.agents == (root / "agents/reviewer.md",)
    assert plugin.hooks is None
    (server,) = plugin.mcp_servers
    assert (server.command, dict(server.env)) == (f"{root}/bin/db", {"ROOT": str(root)})
    assert server.origin == f"{root}/.claude-plugin/plugin.json#/mcpServers/db"


def test_an_mcp_file_may_hold_the_servers_without_the_mcpServers_key(tmp_path):
    root = make_plugin(
        tmp_path, {".mcp.json": '{"remote": {"type": "http", "url": "https://mcp.example/"}}'}
    )
    (server,) = load_plugin(root).mcp_servers
    assert (server.name, server.is_local) == ("remote", False)
    assert server.to_config() == {"type": "http", "url": "https://mcp.example/"}


MANIFEST = ".claude-plugin/plugin.json"

BROKEN = [
    (
        "malformed-json",
        {MANIFEST: '{"name": "demo",}'},
        "{root}/.claude-plugin/plugin.json:1:17: not valid JSON: Expecting property name enclosed in double quotes\n"
        "  fix: check commas, quotes and brackets (JSON has no comments and no trailing commas); `python -m json.tool FILE` points at the same place",
    ),
    (
        "duplicate-key",
        {MANIFEST: '{\n  "name": "demo",\n  "name": "other"\n}'},
        "{root}/.claude-plugin/plugin.json:3: duplicate key 'name'\n"
        "  fix: keep one of the two; Claude Code would silently use only the last",
    ),
    (
        "missing-name",
        {MANIFEST: '{"version": "1.0.0"}'},
        "{root}/.claude-plugin/plugin.json#: 'name' is a required property\n"
        '  fix: expected a plugin manifest: a JSON object with at least "name" (see docs/plugins.md); component paths are relative to the plugin folder and start with ./',
    ),
    (
        "name-with-spaces",
        {MANIFEST: '{"name": "my plugin"}'},
        "{root}/.claude-plugin/plugin.json#/name: 'my plugin' does not match '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'\n"
        "  fix: expected the plugin's name, which becomes a folder name: letters, digits, '.', '_' or '-', starting with a letter or digit, at most 128 (kebab-case, e.g. \"my-plugin\"); skills are listed as <name>:<skill>",
    ),
    (
        "skill-folder-without-skill-md",
        {"skills/empty/notes.md": "no SKILL.md here"},
        "{root}/skills/empty: the skill folder empty has no SKILL.md\n"
        "  fix: add SKILL.md (front matter with name and description, then the instructions), or move the folder out of the skills folder",
    ),
    (
        "unknown-hook-event",
        {
            "hooks/hooks.json": '{"hooks": {"SessionStrat": [{"hooks": [{"type": "command", "command": "true"}]}]}}'
        },
        "{root}/hooks/hooks.json#/hooks: Additional properties are not allowed ('SessionStrat' was unexpected; did you mean 'SessionStart'?); accepted: PreToolUse, PostToolUse, PostToolUseFailure, PostToolBatch, Notification, UserPromptSubmit, UserPromptExpansion, SessionStart, SessionEnd, Stop, StopFailure, SubagentStart, SubagentStop, PreCompact, PostCompact, PreModelSwitch, PostModelSwitch, PermissionRequest, PermissionDenied, Setup, TeammateIdle, TaskCreated, TaskCompleted, Elicitation, ElicitationResult, ConfigChange, WorktreeCreate, WorktreeRemove, InstructionsLoaded, CwdChanged, FileChanged, DirectoryAdded, MessageDisplay\n"
        '  fix: expected an object whose keys are hook events of Claude Code 2.1.328 (such as SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop) and whose values are lists of {"matcher", "hooks"}',
    ),
    (
        "command-hook-without-command",
        {MANIFEST: '{"name": "demo", "hooks": [{"Stop": [{"hooks": [{"type": "command"}]}]}]}'},
        "{root}/.claude-plugin/plugin.json#/hooks/0/Stop/0/hooks/0: 'command' is a required property\n"
        '  fix: expected a hook: {"type": "command", "command": "..."} (or type prompt, agent, http, mcp_tool)',
    ),
    (
        "manifest-path-not-found",
        {
            MANIFEST: '{"name": "demo", "skills": ["./skills/", "./missing"]}',
            "skills/a/SKILL.md": SKILL.format(name="a"),
        },
        "{root}/.claude-plugin/plugin.json#/skills/1: path not found: ./missing (looked at {root}/missing)\n"
        "  fix: fix the path (relative to the plugin folder, starting with ./) or create it",
    ),
    (
        "manifest-path-outside",
        {MANIFEST: '{"name": "demo", "agents": "./../elsewhere.md"}'},
        "{root}/.claude-plugin/plugin.json#/agents: './../elsewhere.md' is outside the plugin folder\n"
        "  fix: keep every component inside the plugin folder; Claude Code does not load paths that leave it",
    ),
    (
        "manifest-path-without-dot-slash",
        {MANIFEST: '{"name": "demo", "hooks": "hooks/extra.json"}'},
        '{root}/.claude-plugin/plugin.json#/hooks: not valid here: expected a path to a hooks file ending in .json ("./config/hooks.json"), an object of hooks by event, or a list of these; in addition to hooks/hooks.json\n'
        '  fix: expected a path to a hooks file ending in .json ("./config/hooks.json"), an object of hooks by event, or a list of these; in addition to hooks/hooks.json',
    ),
    (
        "mcp-server-without-command",
        {".mcp.json": '{"mcpServers": {"telemetry": {"args": ["server.py"]}}}'},
        "{root}/.mcp.json#/mcpServers/telemetry: the MCP server 'telemetry' has no command\n"
        '  fix: write {"command": "...", "args": ["..."], "env": {"NAME": "value"}} for a local (stdio) server, or {"type": "http", "url": "..."} for a remote one',
    ),
    (
        "mcp-server-twice",
        {
            MANIFEST: '{"name": "demo", "mcpServers": {"telemetry": {"command": "b"}}}',
            ".mcp.json": '{"mcpServers": {"telemetry": {"command": "a"}}}',
        },
        "{root}/.claude-plugin/plugin.json#/mcpServers/telemetry: the MCP server 'telemetry' is declared twice (first at {root}/.mcp.json#/mcpServers/telemetry)\n"
        "  fix: give each server its own name; Claude Code would start only one of them",
    ),
]


@pytest.mark.parametrize(
    ("files", "expected"), [case[1:] for case in BROKEN], ids=[case[0] for case in BROKEN]
)
def test_a_broken_plugin_is_refused_with_file_place_and_fix(tmp_path, files, expected):
    root = make_plugin(tmp_path / "demo", files)
    with pytest.raises(PluginError) as caught:
        load_plugin(root)
    assert str(caught.value) == expected.replace("{root}", str(root))


def test_every_problem_is_collected_and_the_error_says_how_many_more(tmp_path):
    root = make_plugin(tmp_path, {"skills/a/x.md": "", "skills/b/x.md": ""})
    inspection = inspect_plugin(root)
    assert [p.location for p in inspection.problems] == [f"{root}/skills/a", f"{root}/skills/b"]
    assert inspection.plugin is not None and inspection.plugin.skills == ()
    with pytest.raises(
        PluginError,
        match=r"\(1 more problem\(s\) in this plugin; `skilltest lint .*` lists them all\)",
    ):
        load_plugin(root)


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda p: p, "{where}: {path}: no such folder"),
        (lambda p: p.write_text("x") and p, "{where}: {path}: is a file, not a plugin folder"),
        (
            lambda p: p.mkdir() or p,
            "{where}: {path}: not a plugin: no .claude-plugin/plugin.json (and no skills/, commands/, agents/, hooks/hooks.json or .mcp.json)",
        ),
    ],
    ids=["missing", "file", "empty-folder"],
)
def test_a_path_that_is_no_plugin_is_reported_where_it_was_named(tmp_path, make, expected):
    path = make(tmp_path / "plugin")
    with pytest.raises(PluginError) as caught:
        load_plugin(path, location="suite.yaml#/plugin")
    assert str(caught.value).split("\n")[0] == expected.format(
        where="suite.yaml#/plugin", path=path
    )


def test_suite_servers_keep_relative_paths_and_expand_the_plugin_root(tmp_path):
    servers = mcp_servers_from(
        {"local": {"command": "./bin/server", "args": ["data/x.json", "${CLAUDE_PLUGIN_ROOT}/y"]}},
        "suite.yaml#/config/mcp_servers",
        tmp_path,
        error=SuiteError,
    )
    assert servers == (
        McpServer(
            name="local",
            command="./bin/server",
            args=("data/x.json", f"{tmp_path}/y"),
            origin="suite.yaml#/config/mcp_servers/local",
        ),
    )


@pytest.mark.parametrize(
    ("mapping", "expected"),
    [
        (
            {"s": {"command": "x", "env": {"PORT": 8080}}},
            "suite.yaml#/config/mcp_servers/s/env/PORT: 8080 is not a string\n  fix: quote it: environment variables and headers are text",
        ),
        (
            {"s": {"command": "x", "args": ["-p", 1]}},
            "suite.yaml#/config/mcp_servers/s/args/1: 1 is not a string\n  fix: quote it: every argument is passed to the program as text",
        ),
        (
            {"s": {"type": "grpc", "command": "x"}},
            "suite.yaml#/config/mcp_servers/s/type: unknown MCP server type 'grpc'\n  fix: one of stdio, http, sse, ws (leave it out for a local server)",
        ),
        (
            ["s"],
            'suite.yaml#/config/mcp_servers: MCP servers must be an object of servers by name\n  fix: write {"<name>": {"command": "...", "args": ["..."], "env": {"NAME": "value"}} for a local (stdio) server, or {"type": "http", "url": "..."} for a remote one}',
        ),
    ],
    ids=["env-number", "arg-number", "unknown-type", "not-a-mapping"],
)
def test_a_bad_suite_server_is_a_suite_error_at_its_place(tmp_path, mapping, expected):
    with pytest.raises(SuiteError) as caught:
        mcp_servers_from(mapping, "suite.yaml#/config/mcp_servers", tmp_path, error=SuiteError)
    assert str(caught.value) == expected


def test_a_marketplace_lists_its_local_plugins_and_reports_missing_ones(tmp_path):
    make_plugin(tmp_path / "plugins" / "demo", {})
    (tmp_path / ".claude-plugin").mkdir()
    (tmp_path / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps(
            {
                "name": "team-tools",
                "owner": {"name": "Team"},
                "metadata": {"pluginRoot": "./plugins"},
                "plugins": [
                    {"name": "demo", "source": "demo"},
                    {"name": "gone", "source": "./plugins/gone"},
                    {"name": "remote", "source": {"source": "github", "repo": "o/r"}},
                ],
            }
        )
    )
    marketplace, problems = inspect_marketplace(tmp_path)
    assert marketplace is not None
    assert marketplace.local_plugins == (
        tmp_path / "plugins" / "demo",
        tmp_path / "plugins" / "gone",
    )
    assert [str(p) for p in problems] == [
        f"{tmp_path}/.claude-plugin/marketplace.json#/plugins/1/source: plugin source not found: ./plugins/gone (looked at {tmp_path}/plugins/gone)\n"
        "  fix: the path is relative to the folder that holds .claude-plugin/; start it with ./"
    ]


def test_a_marketplace_without_owner_is_invalid(tmp_path):
    (tmp_path / ".claude-plugin").mkdir()
    (tmp_path / ".claude-plugin" / "marketplace.json").write_text('{"name": "m", "plugins": []}')
    marketplace, problems = inspect_marketplace(tmp_path)
    assert marketplace is None
    assert str(problems[0]).startswith(
        f"{tmp_path}/.claude-plugin/marketplace.json#: 'owner' is a required property"
    )


def test_always_load_reaches_the_mcp_config_only_when_declared(tmp_path):
    declared, default = mcp_servers_from(
        {"a": {"command": "x", "alwaysLoad": True}, "b": {"command": "y"}},
        "suite.yaml#/s",
        tmp_path,
    )
    assert declared.to_config() == {"command": "x", "args": [], "env": {}, "alwaysLoad": True}
    assert "alwaysLoad" not in default.to_config()


def test_the_plugin_folder_itself_can_be_its_one_skill(tmp_path):
    root = make_plugin(
        tmp_path / "solo",
        {
            ".claude-plugin/plugin.json": '{"name": "solo", "skills": "./"}',
            "SKILL.md": SKILL.format(name="solo"),
        },
    )
    assert load_plugin(root).listed_skill_names == ("solo:solo",)
    (root / "SKILL.md").unlink()
    with pytest.raises(
        PluginError, match=r"no SKILL\.md in the plugin folder, which the manifest names as a skill"
    ):
        load_plugin(root)
