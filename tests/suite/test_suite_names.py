"""Suites named by their bare name on the command line, and errors that list the accepted keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.errors import SuiteError
from skilltest.scenarios.suite import load_scenario_suite
from skilltest.suite.loader import discover_suites
from tests.refusals import refusal

PRESSURE = """\
skill: demo
model_script: model.yaml
repetitions: 1
scenarios:
  - id: {id}
    prompt: p
    with_skill: {{required_patterns: [aggregate]}}
"""

SCRIPT = "schema_version: 1\ndefault: {text: aggregate}\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("---\nname: demo\n---\nbody\n")
    pressure = tmp_path / "tests" / "skill-pressure"
    (pressure / "nested").mkdir(parents=True)
    (pressure / "model.yaml").write_text(SCRIPT)
    (pressure / "nested" / "model.yaml").write_text(SCRIPT)
    (pressure / "lgtm.yaml").write_text(PRESSURE.format(id="lgtm-one"))
    (pressure / "nested" / "migrations.yml").write_text(PRESSURE.format(id="migrations-one"))
    (pressure / "output").mkdir()  # raw output is never a suite
    (pressure / "output" / "lgtm.yaml").write_text("not: a suite\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_bare_name_selects_the_suite_of_that_name_at_any_depth(project):
    default = Path("tests/skill-pressure")
    assert discover_suites([Path("lgtm")], default, example="x.yaml") == [default / "lgtm.yaml"]
    assert discover_suites([Path("migrations")], default, example="x.yaml") == [
        default / "nested" / "migrations.yml"
    ]


def test_a_name_no_suite_has_lists_the_suites_there_are(project):
    with pytest.raises(SuiteError) as caught:
        discover_suites([Path("lgtn")], Path("tests/skill-pressure"), example="x.yaml")
    assert str(caught.value) == (
        "lgtn: no such file or folder, and no suite named 'lgtn' below tests/skill-pressure/\n"
        "  fix: did you mean 'lgtm'? the suites below tests/skill-pressure/ are: lgtm, "
        "migrations, model"
    )


@pytest.mark.parametrize("target", ["lgtm.yaml", "other/lgtm", "lgtm.yml"])
def test_a_path_that_does_not_exist_is_not_taken_for_a_name(project, target):
    with pytest.raises(SuiteError, match=r"^\S+: no such file or folder\n"):
        discover_suites([Path(target)], Path("tests/skill-pressure"), example="x.yaml")


def test_pressure_runs_a_suite_by_its_name(project, capsys):
    code = main(["pressure", "lgtm", "--results", "results.json"])
    out = capsys.readouterr().out
    assert code == 1  # one run per arm decides nothing; the point is which suite ran
    assert "demo/lgtm-one" in out
    assert "migrations-one" not in out


def test_validate_and_scenarios_take_names_too(project, capsys):
    scenarios = project / "tests" / "scenarios"
    scenarios.mkdir()
    (scenarios / "lgtm.yaml").write_text(
        "skill: demo\nscenarios:\n  - {id: s, prompt: p, expected: {required_tools: [Bash]}}\n"
    )
    assert main(["validate", "lgtm"]) == 0
    out = capsys.readouterr().out
    assert "ok   tests/skill-pressure/lgtm.yaml (pressure)" in out
    assert "ok   tests/scenarios/lgtm.yaml (scenarios)" in out
    assert "migrations" not in out
    # scenarios looks the name up below tests/scenarios only (and stops at the missing CLI).
    code = main(["scenarios", "migrations", "--claude", str(project / "no-claude")])
    err = capsys.readouterr().err
    assert code == 2
    assert "no suite named 'migrations' below tests/scenarios/" in err
    assert "the suites below tests/scenarios/ are: lgtm" in err


def test_an_unknown_key_lists_every_key_the_schema_accepts(tmp_path):
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("body\n")
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "skill: demo\nscenarios:\n  - id: a\n    prompt: p\n    cannary: true\n"
        "    expected: {required_tools: [Bash]}\n"
    )
    message = refusal(load_scenario_suite, suite, SuiteError)
    assert message.startswith(
        f"{suite}#/scenarios/0: Additional properties are not allowed ('cannary' was "
        "unexpected; did you mean 'canary'?); accepted: id, name, description, "
    )
    accepted = message.split("accepted: ", 1)[1].split("\n", 1)[0].split(", ")
    for key in ("prompt", "expected", "expected_skills", "config", "comparison", "canary"):
        assert key in accepted
