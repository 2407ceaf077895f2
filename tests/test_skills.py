"""Finding the skill a suite names: one rule in both layers, errors at the key that is wrong."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from skilltest.errors import SkillNotFoundError
from skilltest.pressure.suite import load_pressure_suite
from skilltest.scenarios.suite import load_scenario_suite
from tests.refusals import refusal

PRESSURE = "scenarios:\n  - id: x\n    prompt: p\n    with_skill: {required_patterns: [a]}\n"
SCENARIOS = "scenarios:\n  - id: x\n    prompt: p\n    expected: {required_tools: [Bash]}\n"
LAYERS = {
    "pressure": (PRESSURE, load_pressure_suite),
    "scenarios": (SCENARIOS, load_scenario_suite),
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text(
        "---\nname: demo\ndescription: A demo skill.\n---\nbody\n"
    )
    return tmp_path


def skill_of(layer: str, suite: object) -> object:
    return suite.skill if layer == "pressure" else suite.scenarios[0].skill  # type: ignore[attr-defined]


@pytest.mark.parametrize("layer", LAYERS)
def test_skill_file_alone_names_the_skill_by_its_folder(workspace, layer):
    body, load = LAYERS[layer]
    path = workspace / "suite.yaml"
    path.write_text("skill_file: skills/demo/SKILL.md\n" + body)
    skill = skill_of(layer, load(path))
    assert skill.name == "demo"
    assert skill.description == "A demo skill."


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize(
    ("head", "place"),
    [
        ("skill_file: skills/nope/SKILL.md\n", "#/skill_file"),
        ("skill: demo\nskill_file: skills/nope/SKILL.md\n", "#/skill_file"),
        ("skill: nope\n", "#/skill"),
    ],
    ids=["skill-file-alone", "skill-and-skill-file", "skill-alone"],
)
def test_a_missing_skill_is_reported_at_the_key_that_names_it(workspace, layer, head, place):
    body, load = LAYERS[layer]
    path = workspace / "suite.yaml"
    path.write_text(head + body)
    assert refusal(load, path, SkillNotFoundError).startswith(f"{path}{place}: skill ")


def test_a_scenarios_own_skill_file_is_reported_at_the_scenario(workspace):
    path = workspace / "suite.yaml"
    own_skill_file = "    prompt: p\n    skill_file: skills/nope/SKILL.md\n"
    path.write_text("skill: demo\n" + SCENARIOS.replace("    prompt: p\n", own_skill_file))
    assert refusal(load_scenario_suite, path, SkillNotFoundError).startswith(
        f"{path}#/scenarios/0/skill_file: skill 'demo' not found"
    )


@pytest.mark.parametrize("layer", LAYERS)
def test_a_skill_that_is_not_utf8_is_bad_input_with_a_fix(workspace, layer):
    body, load = LAYERS[layer]
    skill = workspace / "skills" / "demo" / "SKILL.md"
    skill.write_bytes(b"---\nname: demo\n---\nUse caf\xe9 logs.\n")
    path = workspace / "suite.yaml"
    path.write_text("skill: demo\n" + body)
    assert refusal(load, path) == (
        f"{skill}:4: not UTF-8: byte 0xe9 cannot be decoded\n"
        "  fix: save SKILL.md as UTF-8 (Claude Code reads it as UTF-8 too)"
    )


def test_an_alias_bomb_in_the_frontmatter_costs_nothing_and_lends_no_description(workspace):
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [
        f"{n}: &{n} [{','.join([f'*{p}'] * 9)}]"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    (workspace / "skills" / "demo" / "SKILL.md").write_text(
        "---\n" + "\n".join(lines) + "\ndescription: *i\n---\nbody\n"
    )
    path = workspace / "suite.yaml"
    path.write_text("skill: demo\n" + PRESSURE)
    suite = load_pressure_suite(path)
    assert suite.skill.description is None
    assert suite.skill.text.endswith("body\n")


def git_init(folder: Path) -> None:
    folder.mkdir(parents=True)
    subprocess.run(["git", "init", "--quiet", str(folder)], check=True, capture_output=True)


def _skill(root: Path, name: str, marker: str) -> None:
    (root / "skills" / name).mkdir(parents=True, exist_ok=True)
    (root / "skills" / name / "SKILL.md").write_text(f"---\nname: {name}\n---\n{marker}\n")


@pytest.mark.parametrize("layer", LAYERS)
def test_a_suite_copied_into_another_repository_never_picks_up_its_skill(
    tmp_path, monkeypatch, layer
):
    body, load = LAYERS[layer]
    # The outer repository has a different skill of the same name, above the copied suite's
    # own repository and in the current directory.
    outer = tmp_path / "outer"
    git_init(outer)
    _skill(outer, "demo", "OUTER-DEMO")
    inner = outer / "vendor" / "harness"  # a repository cloned inside the outer one
    git_init(inner)
    (inner / "tests").mkdir()
    suite = inner / "tests" / "suite.yaml"
    suite.write_text("skill: demo\n" + body)
    monkeypatch.chdir(outer)
    said = refusal(load, suite, SkillNotFoundError)
    assert f"(not above the suite's repository root, {inner})" in said
    assert str(outer / "skills") not in said

    _skill(inner, "demo", "INNER-DEMO")
    assert "INNER-DEMO" in skill_of(layer, load(suite)).text


@pytest.mark.parametrize("layer", LAYERS)
def test_the_current_directory_is_not_searched(tmp_path, monkeypatch, layer):
    body, load = LAYERS[layer]
    elsewhere = tmp_path / "other-repo"
    git_init(elsewhere)
    _skill(elsewhere, "demo", "OTHER-DEMO")
    monkeypatch.chdir(elsewhere)
    suite = tmp_path / "suites" / "suite.yaml"  # in no repository, nor in the current folder
    suite.parent.mkdir()
    suite.write_text("skill: demo\n" + body)
    with pytest.raises(SkillNotFoundError):
        load(suite)
    _skill(tmp_path, "demo", "ABOVE-DEMO")  # above the suite's folder, its repository: not found
    with pytest.raises(SkillNotFoundError):
        load(suite)
    monkeypatch.chdir(tmp_path)  # the suite lies in the current folder, its repository now
    assert "ABOVE-DEMO" in skill_of(layer, load(suite)).text


def test_a_suite_in_a_repository_finds_the_skill_at_its_root(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    git_init(repo)
    _skill(repo, "demo", "ROOT-DEMO")
    _skill(tmp_path, "demo", "ABOVE-THE-ROOT")
    suite = repo / "tests" / "skill-pressure" / "demo.yaml"
    suite.parent.mkdir(parents=True)
    suite.write_text("skill: demo\n" + PRESSURE)
    monkeypatch.chdir(tmp_path)
    assert "ROOT-DEMO" in load_pressure_suite(suite).skill.text


@pytest.mark.parametrize(
    ("folder", "name"),
    [
        ("tidy-commits", "tidy-commits"),
        ("Tidy_Commits", "tidy-commits"),
        ("my skill v2.0", "my-skill-v2-0"),
        ("--odd--", "odd"),
        ("___", "skill"),
        ("x" * 70, "x" * 64),
    ],
)
def test_a_folder_name_made_a_skill_name(folder, name):
    from skilltest.skills import safe_name

    assert safe_name(folder) == name


def test_a_root_skill_that_names_itself_differently_is_not_found_by_its_folder(tmp_path):
    repo = tmp_path / "demo"
    git_init(repo)
    (repo / "SKILL.md").write_text("---\nname: tidy-commits\ndescription: x\n---\n")
    suite = repo / "tests" / "skill-pressure" / "demo.yaml"
    suite.parent.mkdir(parents=True)
    suite.write_text("skill: demo\n" + PRESSURE)
    with pytest.raises(SkillNotFoundError, match="skill 'demo' not found"):
        load_pressure_suite(suite)
    suite.write_text("skill: tidy-commits\n" + PRESSURE)
    skill = load_pressure_suite(suite).skill
    assert (skill.name, skill.skill_file) == ("tidy-commits", repo / "SKILL.md")
