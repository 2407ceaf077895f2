"""A marketplace's plugins read as Claude Code 2.1.328 reads them: an entry with `strict: false`
is its plugin's manifest, an entry rooted at the marketplace's folder loads the skills it lists
(not every skill there), and `--plugin NAME` picks one plugin where a marketplace lists several;
`--plugin-dir` on such a folder says so instead of making every skill one plugin's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.claude.isolation import copy_marketplace_plugin
from skilltest.cli import main
from skilltest.errors import PluginError
from skilltest.plugins import inspect_marketplace, load_plugin

SKILL = "---\nname: {name}\ndescription: Helps with {name} files.\n---\nbody\n"


def marketplace(root: Path, plugins: list[dict], skills: tuple[str, ...]) -> Path:
    """A repository in the shape of anthropics/skills: skills/ at the root, and a marketplace
    whose plugins take some of them each."""
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps({"name": "examples", "owner": {"name": "A"}, "plugins": plugins})
    )
    for name in skills:
        (root / "skills" / name).mkdir(parents=True)
        (root / "skills" / name / "SKILL.md").write_text(SKILL.format(name=name))
    return root


TWO = [
    {
        "name": "documents",
        "source": "./",
        "strict": False,
        "skills": ["./skills/pdf", "./skills/docx"],
    },
    {"name": "art", "source": "./", "strict": False, "skills": ["./skills/canvas"]},
]


def test_strict_false_entries_are_plugins_with_the_skills_they_list(tmp_path):
    root = marketplace(tmp_path, TWO, ("pdf", "docx", "canvas"))
    found, problems = inspect_marketplace(root)
    assert problems == () and found is not None
    documents = found.plugin("documents").plugin
    assert documents is not None
    assert (documents.name, [s.name for s in documents.skills]) == ("documents", ["pdf", "docx"])
    assert documents.from_marketplace
    art = load_plugin(root, name="art")
    assert [s.name for s in art.skills] == ["canvas"]


def test_plugin_dir_on_a_marketplace_of_several_plugins_asks_which(tmp_path):
    root = marketplace(tmp_path, TWO, ("pdf", "docx", "canvas"))
    with pytest.raises(PluginError) as caught:
        load_plugin(root, location="--plugin-dir")
    assert str(caught.value) == (
        f"--plugin-dir: {root}: {root} is a marketplace of 2 plugins (documents, art), not one "
        "plugin: loading the folder would make every skill in it one plugin's\n"
        "  fix: pick one with --plugin NAME (e.g. --plugin documents)"
    )
    with pytest.raises(PluginError) as unknown:
        load_plugin(root, name="music")
    assert str(unknown.value) == (
        f"{root}/.claude-plugin/marketplace.json: the marketplace examples lists no plugin "
        "'music' in its repository; it lists documents, art\n"
        "  fix: pass --plugin with one of those names"
    )


def test_a_marketplace_of_one_plugin_is_that_plugin(tmp_path):
    root = marketplace(tmp_path, [{"name": "solo", "source": "./"}], ("pdf",))
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "solo"}')
    plugin = load_plugin(root)
    assert (plugin.name, [s.name for s in plugin.skills], plugin.from_marketplace) == (
        "solo",
        ["pdf"],
        False,
    )


def test_plugin_json_and_components_in_a_strict_false_entry_conflict(tmp_path):
    plugins = [{"name": "both", "source": "./", "strict": False, "skills": ["./skills/pdf"]}]
    root = marketplace(tmp_path, plugins, ("pdf",))
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "both"}')
    with pytest.raises(PluginError) as caught:
        load_plugin(root)
    assert str(caught.value) == (
        f"{root}/.claude-plugin/marketplace.json#/plugins/0: the plugin has both a plugin.json and "
        "components in its marketplace entry (skills) with strict: false: Claude Code refuses to "
        "load it\n"
        "  fix: set strict: true in the marketplace entry, or keep the components in one of the "
        "two places"
    )


def test_a_run_installs_a_copy_that_claude_loads_as_the_entry_defines_it(tmp_path):
    root = marketplace(tmp_path / "repo", TWO, ("pdf", "docx", "canvas"))
    (root / "README.md").write_text("readme")
    target = tmp_path / "copy"
    copy_marketplace_plugin(load_plugin(root, name="documents"), target)
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) == [
        ".claude-plugin/plugin.json",
        "README.md",
        "skills/docx/SKILL.md",
        "skills/pdf/SKILL.md",
    ]
    assert json.loads((target / ".claude-plugin" / "plugin.json").read_text()) == {
        "name": "documents"
    }


def test_plugin_picks_a_plugin_of_the_marketplace_plugin_dir_names(tmp_path, monkeypatch, capsys):
    root = marketplace(tmp_path, TWO, ("pdf", "docx", "canvas"))
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    suite = root / "tests" / "skill-pressure" / "pdf.yaml"
    suite.parent.mkdir(parents=True)
    suite.write_text(
        "skill: pdf\nscenarios:\n  - {id: a, prompt: p, with_skill: {required_patterns: [x]}}\n"
    )
    monkeypatch.chdir(root)
    assert main(["validate", str(suite), "--plugin-dir", "."]) == 2
    assert (
        "is a marketplace of 2 plugins (documents, art), not one plugin" in capsys.readouterr().out
    )
    assert main(["validate", str(suite), "--plugin-dir", ".", "--plugin", "documents"]) == 0
    capsys.readouterr()
    assert main(["validate", str(suite), "--plugin", "documents"]) == 2
    assert capsys.readouterr().err == (
        "skilltest: error: --plugin: --plugin documents needs --plugin-dir: it picks a plugin of "
        "the marketplace whose folder --plugin-dir names\n"
        "  fix: add --plugin-dir DIR (the folder holding .claude-plugin/marketplace.json), e.g. "
        "--plugin-dir . --plugin documents\n"
    )


SCRIPT = """\
schema_version: 1
rules:
  - id: load
    when: {skill: pdf, turn: 1}
    reply: {text: "loading", tool_calls: [{name: Skill, input: {skill: "documents:pdf"}}]}
  - id: after
    when: {turn: 2}
    reply: {text: "done", tool_calls: [{name: Bash, input: {command: "echo pdf"}}]}
default: {text: "plain"}
"""


@pytest.mark.cli
def test_claude_loads_exactly_the_skills_the_entry_lists(claude_bin, tmp_path, monkeypatch, capsys):
    root = marketplace(tmp_path, TWO, ("pdf", "docx", "canvas"))
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "script.yaml").write_text(SCRIPT)
    (root / "docs.yaml").write_text(
        "model_script: script.yaml\nrepetitions: 1\nscenarios:\n"
        '  - {id: a, prompt: "Fill the pdf form.", expected: {required_patterns: [pdf]}, '
        "expected_skills: [pdf]}\n"
    )
    monkeypatch.chdir(root)
    results = tmp_path / "results.json"
    args = ["scenarios", "docs.yaml", "--plugin-dir", ".", "--plugin", "documents"]
    main([*args, "--skill-only", "--claude", str(claude_bin), "--results", str(results)])
    capsys.readouterr()
    (scenario,) = json.loads(results.read_text())["scenarios"]
    loaded = scenario["loaded"]["with_skill"]
    assert loaded["plugins"] == ["documents"]
    assert sorted(s for s in loaded["skills"] if s.startswith("documents:")) == [
        "documents:docx",
        "documents:pdf",
    ]
    assert scenario["runs"][0]["score"] == 1.0
