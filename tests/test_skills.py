"""Finding the skill a suite names: one rule in both layers, errors at the key that is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltest.errors import InputError, SkillNotFoundError
from skilltest.pressure.suite import load_pressure_suite
from skilltest.scenarios.suite import load_scenario_suite

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
    with pytest.raises(SkillNotFoundError) as caught:
        load(path)
    assert str(caught.value).startswith(f"{path}{place}: skill ")


def test_a_scenarios_own_skill_file_is_reported_at_the_scenario(workspace):
    path = workspace / "suite.yaml"
    path.write_text(
        "skill: demo\nscenarios:\n  - id: x\n    prompt: p\n    skill_file: skills/nope/SKILL.md\n"
        "    expected: {required_tools: [Bash]}\n"
    )
    with pytest.raises(SkillNotFoundError) as caught:
        load_scenario_suite(path)
    assert str(caught.value).startswith(f"{path}#/scenarios/0/skill_file: skill 'demo' not found")


@pytest.mark.parametrize("layer", LAYERS)
def test_a_skill_that_is_not_utf8_is_bad_input_with_a_fix(workspace, layer):
    body, load = LAYERS[layer]
    skill = workspace / "skills" / "demo" / "SKILL.md"
    skill.write_bytes(b"---\nname: demo\n---\nUse caf\xe9 logs.\n")
    path = workspace / "suite.yaml"
    path.write_text("skill: demo\n" + body)
    with pytest.raises(InputError) as caught:
        load(path)
    assert str(caught.value) == (
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
