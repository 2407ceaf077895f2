"""`skilltest validate`: every kind of file checked without calling a model."""

from __future__ import annotations

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


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("---\nname: demo\n---\nbody\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


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
