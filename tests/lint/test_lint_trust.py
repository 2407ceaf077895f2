"""Lint a person can trust: no finding for what is not broken (globs, scripts only mentioned,
scripts run through their interpreter), a finding for what is (a link whose case differs from
the file's, a script named without its extension, a plugin's MCP tool by a name a plugin run
does not have), and marketplaces read as Claude Code reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.lint import find_targets, lint
from skilltest.mcp import ServerTools
from skilltest.plugins import McpServer

from ..projects import write_files

GOOD = "---\nname: {name}\ndescription: Does one thing. Use when that thing is asked for.\n---\n\n"


def skill(root: Path, name: str, body: str, files: dict[str, str] | None = None) -> Path:
    folder = root / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(GOOD.format(name=name) + body)
    return write_files(folder, files or {})


def findings(folder: Path, root: Path, **kwargs) -> list[str]:
    return [str(f) for f in lint(find_targets([folder], root), probe=None, **kwargs).findings]


def test_globs_mentions_and_interpreter_runs_are_not_findings(tmp_path):
    body = (
        "Read the `shared/agents-*.md` concept files and shared/**/notes.md.\n"
        "LibreOffice is configured for you (handled by `scripts/office/soffice.py`).\n"
        "Use the `viewer/review.py` script to show the results.\n"
        "```bash\n"
        "nohup python <skill-path>/viewer/review.py --port 3117 &\n"
        "python scripts/office/soffice.py --headless\n"
        "```\n"
        "After the runs, run `viewer/review.py` for the user.\n"
        "Edit package.json and README.md in the user's project.\n"
    )
    files = {
        "shared/agents-core.md": "",
        "scripts/office/soffice.py": "",
        "viewer/review.py": "",
    }
    folder = skill(tmp_path, "office", body, files)
    assert findings(folder, tmp_path) == []


def test_paths_from_the_skill_folder_variable_are_still_checked(tmp_path):
    body = "Run `${CLAUDE_SKILL_DIR}/scripts/collect.sh --all`, then `${CLAUDE_SKILL_DIR}/scripts/gone.sh`.\n"
    folder = skill(tmp_path, "triage", body, {"scripts/collect.sh": ""})
    assert [f.split("\n")[0] for f in findings(folder, tmp_path)] == [
        f"{folder / 'SKILL.md'}:6: ${{CLAUDE_SKILL_DIR}}/scripts/collect.sh is not executable, and the skill runs it directly",
        f"{folder / 'SKILL.md'}:6: missing file: ${{CLAUDE_SKILL_DIR}}/scripts/gone.sh does not exist in {folder}",
    ]


def test_a_link_whose_case_differs_from_the_file_is_a_finding(tmp_path):
    body = (
        "See REFERENCE.md for the API, and [the forms guide](FORMS.md).\n"
        "Field types are in `reference/Fields.md`.\n"
    )
    files = {"reference.md": "", "forms.md": "", "reference/fields.md": ""}
    folder = skill(tmp_path, "pdf", body, files)
    md = folder / "SKILL.md"
    assert findings(folder, tmp_path) == [
        f"{md}:6: a link to FORMS.md: no such file in {folder}; the file is forms.md, whose name differs in case (found on macOS and Windows, not on Linux)\n"
        "  fix: write forms.md, or rename the file to FORMS.md",
        f"{md}:6: REFERENCE.md: no such file in {folder}; the file is reference.md, whose name differs in case (found on macOS and Windows, not on Linux)\n"
        "  fix: write reference.md, or rename the file to REFERENCE.md",
        f"{md}:7: reference/Fields.md: no such file in {folder}; the file is reference/fields.md, whose name differs in case (found on macOS and Windows, not on Linux)\n"
        "  fix: write reference/fields.md, or rename the file to Fields.md",
    ]


def test_a_script_named_without_its_extension_is_a_finding(tmp_path):
    body = "```sh\npython scripts/fill_form --in form.pdf\n```\n"
    folder = skill(tmp_path, "forms", body, {"scripts/fill_form.py": "print()\n"})
    assert findings(folder, tmp_path) == [
        f"{folder / 'SKILL.md'}:7: scripts/fill_form: no such file in {folder}; the script is scripts/fill_form.py\n"
        "  fix: name it with its extension: scripts/fill_form.py"
    ]


def test_a_script_the_skill_tells_to_run_must_be_executable(tmp_path):
    body = "Run `scripts/collect.sh` first; `scripts/check.sh --all` then checks it.\n"
    folder = skill(tmp_path, "triage", body, {"scripts/collect.sh": "", "scripts/check.sh": ""})
    assert [f.split("\n")[0] for f in findings(folder, tmp_path)] == [
        f"{folder / 'SKILL.md'}:6: scripts/collect.sh is not executable, and the skill runs it directly",
        f"{folder / 'SKILL.md'}:6: scripts/check.sh is not executable, and the skill runs it directly",
    ]


# -- a plugin's MCP tools --------------------------------------------------------------------------


def weather_plugin(root: Path, mention: str) -> Path:
    plugin = root / "weather"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "weather"}')
    (plugin / ".mcp.json").write_text(json.dumps({"mcpServers": {"wx": {"command": "wx-server"}}}))
    folder = plugin / "skills" / "forecast"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(GOOD.format(name="forecast") + f"Call `{mention}`.\n")
    return plugin


def probe(servers):
    return {s.name: ServerTools(s.name, ("get_forecast",), {"name": s.name}) for s in servers}


def test_a_plugin_tool_named_as_outside_a_plugin_run_is_a_finding_with_its_run_name(tmp_path):
    plugin = weather_plugin(tmp_path, "mcp__wx__get_forecast")
    md = plugin / "skills" / "forecast" / "SKILL.md"
    expected = (
        f"{md}:6: mcp__wx__get_forecast: a run of the plugin weather has no such tool; it names it "
        "mcp__plugin_weather_wx__get_forecast (Claude Code names a plugin's server plugin_weather_wx)\n"
        "  fix: write mcp__plugin_weather_wx__get_forecast"
    )
    # Static: it needs no server started.
    assert findings(plugin, tmp_path) == [expected]
    report = lint(find_targets([plugin], tmp_path), probe=probe)
    assert [str(f) for f in report.findings] == [expected]
    # Declared for every skill too (--mcp-config), the plain name is the one that server has.
    assert (
        lint(
            find_targets([plugin], tmp_path),
            probe=probe,
            servers=[McpServer("wx", "wx-server")],
        ).findings
        == ()
    )


def test_a_misspelt_plugin_tool_gets_the_run_name_in_its_hint(tmp_path):
    plugin = weather_plugin(tmp_path, "mcp__wx__get_forcast")
    report = lint(find_targets([plugin], tmp_path), probe=probe)
    assert [f.fix for f in report.findings] == [
        "did you mean mcp__plugin_weather_wx__get_forecast? use a tool its tools/list gives"
    ]
    scoped = weather_plugin(tmp_path / "ok", "mcp__plugin_weather_wx__get_forecast")
    assert lint(find_targets([scoped], tmp_path), probe=probe).findings == ()


def test_a_remote_servers_tools_are_noted_as_not_checked(tmp_path):
    plugin = weather_plugin(tmp_path, "mcp__plugin_weather_wx__get_forecast")
    (plugin / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"wx": {"type": "http", "url": "https://wx.example/mcp"}}})
    )
    started: list[str] = []

    def recording(servers):
        started.extend(s.name for s in servers)
        return probe(servers)

    report = lint(find_targets([plugin], tmp_path), probe=recording)
    assert (report.findings, started) == ((), [])
    assert report.notes == (
        f"{plugin / 'skills/forecast/SKILL.md'}: mcp__plugin_weather_wx__get_forecast not "
        "checked: a remote server is not contacted by lint",
    )


# -- marketplaces ---------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """skills/ at the root, two strict: false plugins taking some of them, and a skill of no
    plugin (as anthropics/skills has its template/)."""
    (tmp_path / ".claude-plugin").mkdir()
    plugins = [
        {"name": "documents", "source": "./", "strict": False, "skills": ["./skills/pdf"]},
        {"name": "art", "source": "./", "strict": False, "skills": ["./skills/canvas"]},
    ]
    (tmp_path / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps({"name": "examples", "owner": {"name": "A"}, "plugins": plugins})
    )
    skill(tmp_path, "pdf", "See [forms](FORMS.md).\n", {"forms.md": ""})
    skill(tmp_path, "canvas", "Draw.\n")
    skill(tmp_path / "template", "template-skill", "Fill me in.\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_strict_false_plugins_are_listed_and_each_skill_checked_once(repo, capsys):
    assert main(["lint"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("skills/pdf/SKILL.md:6: a link to FORMS.md: no such file in skills/pdf")
    assert out.endswith("3 skills, 2 plugins, 1 marketplace: 1 finding\n")


def test_plugin_picks_one_plugin_of_the_marketplace(repo, capsys):
    assert main(["lint", "--plugin", "art"]) == 0
    assert capsys.readouterr().out == "1 skill, 1 plugin, 1 marketplace: no findings\n"
    assert main(["lint", "--plugin", "music"]) == 2
    assert capsys.readouterr().err == (
        "skilltest: error: --plugin: --plugin music: no plugin of that name here; there are art, documents\n"
        "  fix: pass the name of one of those plugins (its plugin.json or marketplace name)\n"
    )
