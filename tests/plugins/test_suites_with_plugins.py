"""Suites that name a plugin: which skills they test, and what each arm is told it loaded."""

import shutil
from pathlib import Path

import pytest

from skilltest.claude.isolation import init_warnings
from skilltest.errors import SuiteError
from skilltest.pressure.suite import Overrides as PressureOverrides
from skilltest.pressure.suite import load_pressure_suite
from skilltest.scenarios.suite import Overrides, load_scenario_suite

from ..conftest import REPO_ROOT

PLUGIN = REPO_ROOT / "tests" / "fixtures" / "plugins" / "observability"

PRESSURE = """\
plugin: {plugin}
{skill}
scenarios:
  - id: a
    prompt: "Error spike. What do you do?"
    with_skill: {{required_patterns: [count_over_time]}}
"""

SCENARIOS = """\
plugin: {plugin}
scenarios:
  - id: named
    prompt: p
    expected: {{required_tools: [query_logs]}}
    expected_skills: [trace-latency]
  - id: all
    prompt: p
    expected: {{required_tools: [query_logs]}}
"""


def copied(tmp_path: Path) -> Path:
    """A copy of the example plugin beside the suite: a suite names only its own repository's
    files (``--plugin-dir`` may name any folder)."""
    target = tmp_path / "observability"
    if not target.exists():
        shutil.copytree(PLUGIN, target)
    return target


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    return path


def test_a_pressure_suite_tests_every_skill_of_its_plugin_or_the_one_it_names(tmp_path):
    every = load_pressure_suite(write(tmp_path, PRESSURE.format(plugin=copied(tmp_path), skill="")))
    assert every.skill.name == "observability"
    assert "# Skill: log-triage" in every.skill.text
    assert "# Skill: trace-latency" in every.skill.text
    one = load_pressure_suite(
        write(tmp_path, PRESSURE.format(plugin=copied(tmp_path), skill="skill: trace-latency"))
    )
    assert one.skill.name == "trace-latency"
    assert "log-triage" not in one.skill.text.split("---", 2)[1]


def test_plugin_dir_on_the_command_line_wins(tmp_path):
    path = write(tmp_path, PRESSURE.format(plugin="nowhere", skill=""))
    suite = load_pressure_suite(path, overrides=PressureOverrides(plugin_dir=PLUGIN))
    assert suite.skill.name == "observability"
    with pytest.raises(SuiteError, match=r"plugin folder .*nowhere does not exist"):
        load_pressure_suite(path)


def test_a_scenario_suite_takes_the_skills_it_names_from_the_plugin(tmp_path):
    suite = load_scenario_suite(write(tmp_path, SCENARIOS.format(plugin=copied(tmp_path))))
    named, every = suite.scenarios
    assert named.plugin is not None and named.plugin.name == "observability"
    assert [s.name for s in named.skills] == ["trace-latency"]
    assert [s.name for s in every.skills] == ["log-triage", "trace-latency"]
    assert named.plugin_mcp == "both"
    # The plugin's skills are where the plugin is, not copied from a skills/ folder.
    assert named.skill.directory == copied(tmp_path) / "skills" / "trace-latency"


def test_a_skill_the_plugin_lacks_is_refused_with_the_skills_it_has(tmp_path):
    text = SCENARIOS.format(plugin=copied(tmp_path)).replace("[trace-latency]", "[traces]")
    with pytest.raises(SuiteError) as caught:
        load_scenario_suite(write(tmp_path, text))
    assert "plugin observability has no skill 'traces' (its skills: log-triage, trace-latency)" in (
        str(caught.value)
    )
    assert "suite.yaml#/scenarios/0" in str(caught.value)


def test_plugin_dir_overrides_a_scenario_suite_too(tmp_path):
    path = write(tmp_path, SCENARIOS.format(plugin="elsewhere"))
    suite = load_scenario_suite(path, overrides=Overrides(plugin_dir=PLUGIN))
    assert suite.scenarios[0].plugin is not None


INIT = {
    "type": "system",
    "subtype": "init",
    "skills": ["observability:log-triage", "observability:trace-latency", "doctor"],
    "slash_commands": [],
    "plugins": [{"name": "observability", "path": "/x", "source": "observability@inline"}],
    "mcp_servers": [{"name": "plugin_observability_telemetry", "status": "failed"}],
}


def test_init_warnings_know_the_plugin_under_test(tmp_path):
    plugin = load_scenario_suite(
        write(tmp_path, SCENARIOS.format(plugin=copied(tmp_path)))
    ).scenarios[1]
    assert plugin.plugin is not None
    plugin_skills = list(plugin.plugin.skills)
    expected = init_warnings(INIT, plugin_skills, plugins=("observability",))
    assert expected == [
        "MCP server plugin_observability_telemetry did not start in this run (status failed): "
        "its tools were missing"
    ]
    # In the without-skill arm the same plugin is a leak, and so are its skills.
    leaked = init_warnings(INIT, [])
    assert "plugins were loaded: observability" in leaked
    assert any(w.startswith("skills from outside the sandbox were loaded") for w in leaked)
    # A plugin the with-skill arm should have loaded but did not.
    missing = init_warnings({**INIT, "plugins": []}, plugin_skills, plugins=("observability",))
    assert any(w.startswith("the CLI did not load plugin observability") for w in missing)
