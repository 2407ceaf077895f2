"""Names that become paths: a hostile one is refused where it is read, and nothing is written.

A plugin's name, a skill's name and an MCP server's name each become a folder or a file of a run
(``.claude/plugins/<plugin>``, ``.claude/skills/<skill>``, ``mcp-recorded-<server>.json``). A
name like ``../../x`` must be refused with exit 2, the file, the place and the fix, by the
commands that run suites and by ``validate`` and ``lint``, before anything is copied anywhere.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.errors import InputError
from skilltest.names import NAME_PATTERN, check_name, child, name_problem
from skilltest.plugins import load_plugin

SCHEMAS = Path(__file__).resolve().parents[2] / "src" / "skilltest" / "suite" / "schemas"

SKILL = "---\nname: demo\ndescription: Use for demos.\n---\n# Demo\n"


def plugin(root: Path, manifest: dict[str, object], mcp: dict[str, object] | None = None) -> Path:
    folder = root / "plug"
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (folder / "skills" / "demo").mkdir(parents=True)
    (folder / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    if mcp is not None:
        (folder / ".mcp.json").write_text(json.dumps({"mcpServers": mcp}))
    return folder


def scenario_suite(root: Path, head: str) -> Path:
    suite = root / "suite.yaml"
    suite.write_text(
        f"{head}\nscenarios:\n  - id: s\n    prompt: p\n    expected: {{required_tools: [Bash]}}\n"
    )
    return suite


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out + err


def everything_under(root: Path) -> set[Path]:
    return {path for path in root.rglob("*")}


def test_a_plugin_name_that_climbs_out_is_refused_and_writes_nothing(
    tmp_path, fake_claude, monkeypatch, capsys
):
    project = tmp_path / "project"
    project.mkdir()
    escape_to = tmp_path / "elsewhere"
    escape_to.mkdir()
    climbing = "../" * 12 + str(escape_to).lstrip("/") + "/ESCAPED-PLUGIN"
    plugin(project, {"name": climbing})
    suite = scenario_suite(project, "plugin: plug")
    monkeypatch.chdir(project)
    before = everything_under(tmp_path)
    for argv in (
        ["scenarios", str(suite), "--claude", str(fake_claude), "-k", "1"],
        ["pressure", str(suite.with_name("p.yaml"))],
        ["validate", str(suite)],
        ["lint", str(project / "plug")],
    ):
        if argv[0] == "pressure":
            suite.with_name("p.yaml").write_text(
                "plugin: plug\nscenarios:\n  - {id: a, prompt: p, with_skill: "
                "{required_patterns: [x]}}\n"
            )
            before = everything_under(tmp_path)
        code, shown = run(argv, capsys)
        assert code == 2 if argv[0] != "lint" else code == 1, (argv, shown)
        assert "Traceback" not in shown
        # A long value is quoted by its beginning.
        assert f"plug/.claude-plugin/plugin.json#/name: {climbing[:60]!r}"[:-1] in shown, shown
        assert "does not match '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'" in shown, (argv, shown)
        assert "fix: expected the plugin's name, which becomes a folder name: letters" in shown
        assert not (escape_to / "ESCAPED-PLUGIN").exists()
        assert everything_under(tmp_path) == before, argv


@pytest.mark.parametrize(
    "head",
    ["skill: ../../escaped", "skill: 'a/b'", "skill: '..'", "skill: 'x y'"],
)
def test_a_skill_name_that_is_no_folder_name_is_refused(tmp_path, fake_claude, capsys, head):
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    suite = scenario_suite(tmp_path, head)
    name = head.split(": ", 1)[1].strip("'")
    for argv in (
        ["scenarios", str(suite), "--claude", str(fake_claude), "-k", "1"],
        ["validate", str(suite)],
    ):
        code, shown = run(argv, capsys)
        assert code == 2, shown
        assert f"suite.yaml#/skill: the skill name {name!r} is not a safe folder name" in shown
        assert "fix: rename it with letters, digits" in shown


def test_a_skill_named_on_the_command_line_is_checked_too(tmp_path, capsys):
    suite = tmp_path / "p.yaml"
    suite.write_text("scenarios:\n  - {id: a, prompt: p, with_skill: {required_patterns: [x]}}\n")
    code, shown = run(["pressure", str(suite), "--skill", "../outside"], capsys)
    assert code == 2
    assert "the skill name '../outside' is not a safe folder name" in shown


def test_an_mcp_server_name_that_climbs_out_is_refused(tmp_path, fake_claude, capsys):
    plugin(
        tmp_path,
        {"name": "plug"},
        {"../../escaped": {"command": "python3", "args": ["server.py"]}},
    )
    suite = scenario_suite(tmp_path, "plugin: plug")
    for argv in (
        ["scenarios", str(suite), "--claude", str(fake_claude), "-k", "1"],
        ["lint", str(tmp_path / "plug")],
    ):
        code, shown = run(argv, capsys)
        assert code in (1, 2), shown
        assert ".mcp.json#/mcpServers/..~1..~1escaped: the MCP server name '../../escaped'" in shown
        assert "fix: name each server with letters, digits" in shown
    assert not (tmp_path.parent / "escaped").exists()


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("my-plugin", None),
        ("v1.2_x", None),
        ("A" * 128, None),
        ("A" * 129, "is not a safe folder name"),
        ("..", "is not a safe folder name"),
        (".hidden", "is not a safe folder name"),
        ("a/b", "is not a safe folder name"),
        ("a\\b", "is not a safe folder name"),
        ("a\x00b", "is not a safe folder name"),
        ("a b", "is not a safe folder name"),
        ("", "is not a non-empty string"),
        (None, "is not a non-empty string"),
    ],
)
def test_the_name_rule(name, problem):
    """The rule the manifest schema states is the rule the code applies."""
    found = name_problem(name)
    assert (found is None) if problem is None else (problem in str(found))


def test_the_plugin_schema_states_the_same_rule():
    schema = json.loads((SCHEMAS / "plugin.schema.json").read_text())
    assert schema["properties"]["name"]["pattern"] == NAME_PATTERN


def test_a_plugin_without_a_manifest_is_named_after_its_real_folder(tmp_path, monkeypatch):
    folder = tmp_path / "real-name"
    (folder / "skills" / "demo").mkdir(parents=True)
    (folder / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    monkeypatch.chdir(folder / "skills")
    assert load_plugin(Path("..")).name == "real-name"


def test_a_path_is_never_joined_from_an_unchecked_name(tmp_path):
    assert child(tmp_path, "ok-name") == tmp_path / "ok-name"
    with pytest.raises(InputError, match=r"the skill name '\.\./x' is not a safe folder name"):
        child(tmp_path, "../x", what="the skill name")
    with pytest.raises(InputError) as caught:
        check_name("a/b", what="the plugin name", location="plugin.json#/name")
    assert str(caught.value).startswith("plugin.json#/name: the plugin name 'a/b'")
