"""`skilltest validate`: every kind of file checked without calling a model."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltest.cli import main

from ..conftest import REPO_ROOT


def test_the_shipped_suites_and_scripts_are_valid(monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    assert main(["validate"]) == 0
    out = capsys.readouterr().out
    assert "ok   tests/skill-pressure/lgtm.yaml (pressure)" in out
    assert "ok   tests/scenarios/lgtm.yaml (scenarios)" in out
    assert "ok   tests/model-scripts/lgtm.pressure.yaml (model-script)" in out


def test_a_model_script_with_only_faults_is_a_model_script(project, capsys):
    (project / "faults.yaml").write_text("schema_version: 1\nfaults: {status: 529}\n")
    assert main(["validate", "faults.yaml"]) == 0
    assert "ok   faults.yaml (model-script)" in capsys.readouterr().out


def test_every_invalid_file_is_listed_and_the_exit_is_2(project, capsys):
    (project / "good.yaml").write_text(
        "skill: demo\nscenarios:\n  - {id: a, prompt: p, with_skill: {required_patterns: [x]}}\n"
    )
    (project / "bad.yaml").write_text(
        "skill: demo\nmodel_script: nowhere.yaml\nscenarios:\n"
        "  - {id: a, prompt: p, with_skill: {required_patterns: [x]}}\n"
    )
    (project / "script.yaml").write_text("schema_version: 1\nrules: [{id: x}]\n")
    assert main(["validate", "."]) == 2
    out = capsys.readouterr().out
    assert "ok   good.yaml (pressure)" in out
    assert "FAIL bad.yaml" in out
    assert "bad.yaml#/model_script: model script 'nowhere.yaml' not found" in out
    assert "FAIL script.yaml" in out
    assert "2 of 3 file(s) invalid" in out


SUITE = "skill: demo\nmodel_script: script.yaml\nscenarios:\n  - {id: a, prompt: p, with_skill: {required_patterns: [x]}}\n"


def test_a_suite_is_invalid_when_its_model_script_is(project, capsys):
    # Running the suite on the emulator would exit 2: validate says so first.
    (project / "suite.yaml").write_text(SUITE)
    (project / "script.yaml").write_text("schema_version: 1\nrules: [{id: x, reply: {txt: hi}}]\n")
    assert main(["validate", "suite.yaml"]) == 2
    out = capsys.readouterr().out
    assert "FAIL suite.yaml" in out
    assert (
        f"skilltest: error: {project}/script.yaml#/rules/0/reply/txt: unknown key 'txt'\n"
        "  (the model script of suite.yaml#/model_script)\n"
        "  fix: did you mean 'text'? allowed keys here: stop_reason, text, thinking, tool_calls\n"
    ) in out


def test_each_file_is_parsed_once(project, capsys, monkeypatch):
    import skilltest.suite.loader as loader

    parsed: list[str] = []
    real = loader.parse_yaml

    def counting(text, source, error=loader.SuiteError):
        parsed.append(Path(source).name)
        return real(text, source, error)

    monkeypatch.setattr(loader, "parse_yaml", counting)
    (project / "suite.yaml").write_text(SUITE.replace("[x]", "[parsed-once]"))
    (project / "script.yaml").write_text("schema_version: 1\ndefault: {text: parsed once}\n")
    assert main(["validate", "suite.yaml", "script.yaml"]) == 0
    assert "ok   suite.yaml (pressure)\nok   script.yaml (model-script)" in capsys.readouterr().out
    assert sorted(parsed) == ["script.yaml", "suite.yaml"]


def test_a_model_script_two_suites_name_is_checked_once_and_a_bad_one_for_each(
    project, capsys, monkeypatch
):
    from skilltest.emulator.script import ModelScript

    checked: list[str] = []
    real = ModelScript.from_dict.__func__

    def counting(cls, data, source="<inline>"):
        checked.append(Path(source).name)
        return real(cls, data, source)

    monkeypatch.setattr(ModelScript, "from_dict", classmethod(counting))
    (project / "one.yaml").write_text(SUITE)
    (project / "two.yaml").write_text(SUITE.replace("id: a", "id: b"))
    (project / "script.yaml").write_text("schema_version: 1\ndefault: {text: hi}\n")
    assert main(["validate", "one.yaml", "two.yaml", "script.yaml"]) == 0
    assert checked == ["script.yaml"]
    capsys.readouterr()
    (project / "script.yaml").write_text("schema_version: 1\nrules: [{id: x, reply: {txt: hi}}]\n")
    assert main(["validate", "one.yaml", "two.yaml", "script.yaml"]) == 2
    out = capsys.readouterr().out
    assert "FAIL one.yaml\nFAIL two.yaml\nFAIL script.yaml\n" in out
    assert out.count("script.yaml#/rules/0/reply/txt: unknown key 'txt'") == 3
    assert out.count("(the model script of ") == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "skill: demo\nrepetitions: 1001\nscenarios:\n"
            "  - {id: a, prompt: p, with_skill: {required_patterns: [x]}}\n",
            "x.yaml#/repetitions: 1001 is greater than the maximum of 1000\n"
            "  fix: expected an integer from 1 to 1000: how many times each arm runs",
        ),
        (
            "skill: demo\nscenarios:\n  - id: a\n    prompt: p\n    repetitions: 5000\n"
            "    expected: {required_tools: [Bash]}\n",
            "x.yaml#/scenarios/0/repetitions: 5000 is greater than the maximum of 1000\n"
            "  fix: expected an integer from 1 to 1000: how many times each arm runs (K)",
        ),
    ],
    ids=["pressure", "scenarios"],
)
def test_repetitions_above_the_bound_are_invalid(project, capsys, text, message):
    (project / "x.yaml").write_text(text)
    assert main(["validate", "x.yaml"]) == 2
    assert f"skilltest: error: {message}\n" in capsys.readouterr().out
