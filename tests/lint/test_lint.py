"""`skilltest lint`: what a skill or plugin ships, checked without a model. Each finding is shown
as the user sees it: its place, what is wrong, the fix; the exit code says whether any."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.errors import McpServerError
from skilltest.lint import Finding, find_targets, lint
from skilltest.mcp import ServerTools
from skilltest.plugins import McpServer

from ..conftest import REPO_ROOT
from ..projects import write_files

FIXTURE = REPO_ROOT / "tests" / "fixtures" / "plugins" / "observability"
GOOD = "---\nname: {name}\ndescription: Does one thing. Use when that thing is asked for.\n---\n\n# {name}\n"


@pytest.fixture
def venv_python_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture's .mcp.json runs `python3`: the one first on PATH must have the mcp SDK."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def skill(
    root: Path, name: str, text: str | None = None, files: dict[str, str] | None = None
) -> Path:
    folder = root / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(GOOD.format(name=name) if text is None else text)
    return write_files(folder, files or {})


def run_lint(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["lint", *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


# -- the three cases of the issue, and a clean plugin ---------------------------------------------


def test_a_clean_plugin_has_no_findings(capsys, venv_python_first):
    code, out = run_lint(capsys, str(FIXTURE))
    assert (code, out) == (0, "2 skills, 1 plugin, 3 eval cases: no findings\n")


def test_a_broken_front_matter_is_reported_at_its_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    skill(
        tmp_path,
        "triage",
        "---\nname: triage\ndescription: Triage errors. Use when: a service fails.\n---\nbody\n",
    )
    code, out = run_lint(capsys, "skills/triage")
    assert code == 1
    assert out == (
        "skills/triage/SKILL.md:3:37: the front matter is not valid YAML: YAML syntax error: mapping values are not allowed here\n"
        '  fix: quote a value that contains ": " or starts with a special character (description: "Use when: ..."), and check the indentation\n'
        "\n"
        "1 skill, 0 plugins: 1 finding\n"
    )


def test_a_dead_link_is_reported_with_the_file_meant(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = (
        GOOD.format(name="triage")
        + "\nQuery patterns are in [the LogQL guide](reference/logq.md).\n"
    )
    skill(tmp_path, "triage", text, {"reference/logql.md": "# LogQL\n"})
    code, out = run_lint(capsys, "skills")
    assert code == 1
    assert out == (
        "skills/triage/SKILL.md:8: dead link: reference/logq.md does not exist in skills/triage\n"
        "  fix: did you mean reference/logql.md? create the file or fix the path (relative to the skill folder)\n"
        "\n"
        "1 skill, 0 plugins: 1 finding\n"
    )


def test_an_unknown_mcp_tool_name_is_compared_with_the_servers_tools(
    tmp_path, capsys, venv_python_first
):
    plugin = tmp_path / "observability"
    shutil.copytree(FIXTURE, plugin)
    skill_md = plugin / "skills" / "log-triage" / "SKILL.md"
    skill_md.write_text(
        skill_md.read_text().replace(
            "mcp__plugin_observability_telemetry__query_logs",
            "mcp__plugin_observability_telemetry__query_log",
        )
    )
    code, out = run_lint(capsys, str(plugin))
    assert code == 1
    assert out == (
        f"{skill_md}:9: mcp__plugin_observability_telemetry__query_log: the server telemetry has no tool query_log; it has query_logs, search_traces\n"
        "  fix: did you mean mcp__plugin_observability_telemetry__query_logs? use a tool its tools/list gives\n"
        "\n"
        "2 skills, 1 plugin, 3 eval cases: 1 finding\n"
    )


# -- front matter -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "# triage\nno front matter\n",
            "{md}:1: no front matter: SKILL.md does not start with a --- line\n"
            '  fix: start SKILL.md with ---, then "name: <folder name>" and "description: <what it does and when to use it>", then ---',
        ),
        (
            "---\nname: triage\ndescription: x\n",
            "{md}:1: the front matter is not closed: no --- line after it\n"
            '  fix: start SKILL.md with ---, then "name: <folder name>" and "description: <what it does and when to use it>", then ---',
        ),
        (
            "---\ndescription: Triage.\n---\n",
            "{md}:1: the front matter has no name\n  fix: add name: triage (the skill's folder name)",
        ),
        (
            "---\nname: Log_Triage\ndescription: Triage.\n---\n",
            "{md}:2: name 'Log_Triage' is not lowercase letters, digits and single hyphens\n"
            "  fix: use kebab-case such as log-triage (no capitals, spaces, underscores, leading, trailing or double hyphens), and name the folder the same\n"
            "{md}:2: name 'Log_Triage' does not match the skill's folder 'triage'\n"
            "  fix: rename one of the two; Claude Code lists the skill as 'triage', after its folder",
        ),
        (
            f"---\nname: {'t' * 65}\ndescription: Triage.\n---\n",
            "{md}:2: name is 65 characters long, more than the 64 allowed\n"
            "  fix: shorten the name (and rename the folder to match)\n"
            f"{{md}}:2: name '{'t' * 65}' does not match the skill's folder 'triage'\n"
            "  fix: rename one of the two; Claude Code lists the skill as 'triage', after its folder",
        ),
        (
            "---\nname: triage\n---\n",
            "{md}:1: the front matter has no description\n"
            "  fix: add description: (say what the skill does and when to use it, in one paragraph)",
        ),
        (
            "---\nname: triage\ndescription: '  '\n---\n",
            "{md}:3: description is empty\n  fix: say what the skill does and when to use it, in one paragraph",
        ),
        (
            f"---\nname: triage\ndescription: {'d' * 1025}\n---\n",
            "{md}:3: description is 1025 characters long, more than the 1024 allowed\n"
            "  fix: shorten it to what decides when the skill applies; move details to the body",
        ),
        (
            "---\n- name: triage\n---\n",
            "{md}:2: the front matter is not a mapping of keys to values\n"
            '  fix: start SKILL.md with ---, then "name: <folder name>" and "description: <what it does and when to use it>", then ---',
        ),
    ],
    ids=[
        "missing",
        "not-closed",
        "no-name",
        "bad-name",
        "long-name",
        "no-description",
        "empty-description",
        "long-description",
        "not-a-mapping",
    ],
)
def test_front_matter_findings(tmp_path, text, expected):
    folder = skill(tmp_path, "triage", text)
    report = lint(find_targets([folder], tmp_path), probe=None)
    assert "\n".join(map(str, report.findings)) == expected.replace(
        "{md}", str(folder / "SKILL.md")
    )


def test_limits_at_the_edge_are_accepted(tmp_path):
    name = "a" * 64
    folder = skill(tmp_path, name, f"---\nname: {name}\ndescription: {'d' * 1024}\n---\n")
    assert lint(find_targets([folder], tmp_path), probe=None).findings == ()


# -- files the skill names ------------------------------------------------------------------------


def test_scripts_run_directly_must_be_executable(tmp_path):
    body = (
        "Run `scripts/collect.sh` first, then `python scripts/report.py`.\n"
        "```sh\n./scripts/check.py --all\nbash scripts/lenient.sh\n```\n"
    )
    folder = skill(
        tmp_path,
        "triage",
        GOOD.format(name="triage") + body,
        {
            "scripts/collect.sh": "#!/bin/sh\n",
            "scripts/report.py": "print()\n",
            "scripts/check.py": "print()\n",
            "scripts/lenient.sh": "#!/bin/sh\n",
        },
    )
    md = folder / "SKILL.md"
    report = lint(find_targets([folder], tmp_path), probe=None)
    assert [(f.place, f.message) for f in report.findings] == [
        (f"{md}:7", "scripts/collect.sh is not executable, and the skill runs it directly"),
        (f"{md}:9", "./scripts/check.py is not executable, and the skill runs it directly"),
    ]
    assert report.findings[0].fix == (
        f"chmod +x {folder}/scripts/collect.sh (git keeps the mode: commit it), or run it through its interpreter "
        "(bash scripts/collect.sh, python3 scripts/collect.sh)"
    )
    for name in ("collect.sh", "check.py"):
        (folder / "scripts" / name).chmod(0o755)
    assert lint(find_targets([folder], tmp_path), probe=None).findings == ()


def test_paths_of_the_project_and_urls_are_not_files_of_the_skill(tmp_path):
    body = (
        "Edit `src/app/main.py` and see https://example.com/docs/guide.md or [the spec](https://agentskills.io/specification).\n"
        "Section links work: [below](#usage). Files: `reference/missing.md`.\n"
    )
    folder = skill(tmp_path, "triage", GOOD.format(name="triage") + body)
    report = lint(find_targets([folder], tmp_path), probe=None)
    assert [f.message for f in report.findings] == [
        f"missing file: reference/missing.md does not exist in {folder}"
    ]


def test_a_link_out_of_the_skill_folder_is_reported(tmp_path):
    (tmp_path / "NOTES.md").write_text("notes")
    folder = skill(
        tmp_path, "triage", GOOD.format(name="triage") + "See [notes](../../NOTES.md).\n"
    )
    (finding,) = lint(find_targets([folder], tmp_path), probe=None).findings
    assert finding.message == "../../NOTES.md is outside the skill folder"


# -- plugins, marketplaces, MCP servers -----------------------------------------------------------


def fake_probe(tools: dict[str, tuple[str, ...]]):
    def probe(servers):
        return {s.name: ServerTools(s.name, tools[s.name], {"name": s.name}) for s in servers}

    return probe


def test_plugin_scoped_tool_names_and_server_failures(tmp_path):
    plugin = tmp_path / "observability"
    shutil.copytree(FIXTURE, plugin)
    skill_md = plugin / "skills" / "trace-latency" / "SKILL.md"
    skill_md.write_text(
        skill_md.read_text()
        + "\nAs Claude Code names them when it starts the plugin's server itself: "
        "`mcp__plugin_observability_telemetry__search_traces`; `mcp__metrics__query` is elsewhere.\n"
    )
    report = lint(
        find_targets([plugin], tmp_path),
        probe=fake_probe({"telemetry": ("query_logs", "search_traces")}),
    )
    assert [str(f) for f in report.findings] == [
        f"{skill_md}:17: mcp__metrics__query: the plugin observability declares no MCP server metrics; it has telemetry\n"
        "  fix: declare the server (.mcp.json or plugin.json mcpServers) or fix the name"
    ]

    def failing(servers):
        return {
            s.name: McpServerError(
                f"MCP server {s.name!r} (x) did not answer\n  declared at {s.origin}\n  fix: run it"
            )
            for s in servers
        }

    report = lint(find_targets([plugin], tmp_path), probe=failing)
    assert [(f.place, f.message, f.fix, f.check) for f in report.findings] == [
        (
            f"{plugin}/.mcp.json#/mcpServers/telemetry",
            "MCP server 'telemetry' (x) did not answer",
            "run it",
            "mcp-server",
        ),
        (
            f"{skill_md}:17",
            "mcp__metrics__query: the plugin observability declares no MCP server metrics; it has telemetry",
            "declare the server (.mcp.json or plugin.json mcpServers) or fix the name",
            "mcp-tool",
        ),
    ]


def test_each_server_is_started_once_for_all_the_skills_that_name_it(tmp_path):
    started: list[str] = []

    def probe(servers):
        started.extend(s.name for s in servers)
        return fake_probe({"telemetry": ("query_logs", "search_traces")})(servers)

    lint(find_targets([FIXTURE], tmp_path), probe=probe)
    assert started == ["telemetry"]


def test_without_mcp_the_names_are_noted_as_not_checked(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(FIXTURE.parent)
    code, out = run_lint(capsys, "observability", "--no-mcp")
    assert (code, out) == (
        0,
        "note: observability/skills/log-triage/SKILL.md: mcp__plugin_observability_telemetry__query_logs not checked against the servers (--no-mcp)\n\n2 skills, 1 plugin, 3 eval cases: no findings\n",
    )


def test_a_standalone_skill_is_checked_against_an_mcp_config(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    skill(tmp_path, "triage", GOOD.format(name="triage") + "Call `mcp__telemetry__fetch_logs`.\n")
    code, out = run_lint(capsys, "skills")
    assert (code, out) == (
        0,
        "note: skills/triage/SKILL.md: mcp__telemetry__fetch_logs not checked: no MCP server is declared for a skill outside a plugin (pass --mcp-config FILE)\n\n"
        "1 skill, 0 plugins: no findings\n",
    )
    report = lint(
        find_targets([tmp_path / "skills"], tmp_path),
        probe=fake_probe({"telemetry": ("query_logs",)}),
        servers=[McpServer("telemetry", "python3")],
    )
    assert [f.message for f in report.findings] == [
        "mcp__telemetry__fetch_logs: the server telemetry has no tool fetch_logs; it has query_logs"
    ]


def test_plugin_problems_and_a_misspelt_manifest_key_are_findings(tmp_path):
    plugin = tmp_path / "demo"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "demo", "skils": "./x/"}')
    (plugin / "skills" / "empty").mkdir(parents=True)
    report = lint(find_targets([plugin], tmp_path), probe=None)
    assert [(f.place, f.message, f.check) for f in report.findings] == [
        (f"{plugin}/skills/empty", "the skill folder empty has no SKILL.md", "plugin"),
        (
            f"{plugin}/.claude-plugin/plugin.json#/skils",
            "unknown key 'skils': Claude Code ignores it",
            "plugin",
        ),
    ]


def test_a_marketplace_brings_its_plugins(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(FIXTURE, tmp_path / "plugins" / "observability")
    (tmp_path / ".claude-plugin").mkdir()
    (tmp_path / ".claude-plugin" / "marketplace.json").write_text(
        '{"name": "team", "owner": {"name": "Team"}, "plugins": ['
        '{"name": "observability", "source": "./plugins/observability"}, {"name": "gone", "source": "./plugins/gone"}]}'
    )
    code, out = run_lint(capsys, ".claude-plugin/marketplace.json", "--no-mcp")
    assert code == 1
    assert out.startswith(
        ".claude-plugin/marketplace.json#/plugins/1/source: plugin source not found: ./plugins/gone (looked at plugins/gone)\n"
    )
    assert out.endswith("2 skills, 1 plugin, 1 marketplace, 3 eval cases: 1 finding\n")


# -- what is checked, and bad input -------------------------------------------------------------


def test_without_paths_every_plugin_and_skill_below_is_found(tmp_path):
    shutil.copytree(FIXTURE, tmp_path / "plugins" / "observability")
    skill(tmp_path, "alone")
    skill(tmp_path / ".claude", "project-skill")
    skill(tmp_path / "node_modules" / "pkg", "vendored")
    skill(tmp_path / ".git", "hidden")
    targets = find_targets([], tmp_path)
    assert targets.plugins == (tmp_path / "plugins" / "observability",)
    assert targets.skills == (
        tmp_path / ".claude" / "skills" / "project-skill",
        tmp_path / "skills" / "alone",
    )


def test_a_path_that_does_not_exist_is_bad_input(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out = run_lint(capsys, "skills/nope")
    assert (code, out) == (
        2,
        "skilltest: error: skills/nope: no such file or folder\n"
        "  fix: pass skill folders, SKILL.md files, plugin folders or folders to search\n",
    )


def test_the_example_skills_are_clean(capsys, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    assert run_lint(capsys, "skills") == (0, "3 skills, 0 plugins: no findings\n")


def test_a_finding_reads_as_place_message_and_fix():
    assert (
        str(Finding("a/SKILL.md:3", "wrong", "do this", "link"))
        == "a/SKILL.md:3: wrong\n  fix: do this"
    )


def test_without_paths_the_current_folder_is_searched_and_places_stay_relative(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    skill(tmp_path, "triage", GOOD.format(name="triage") + "Run `scripts/collect.sh`.\n")
    code, out = run_lint(capsys)
    assert code == 1
    assert out.startswith(
        "skills/triage/SKILL.md:7: missing file: scripts/collect.sh does not exist in skills/triage\n"
    )
