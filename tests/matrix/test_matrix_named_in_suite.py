"""A suite names its matrix (`matrix: {models: [...], claude_versions: [...]}`): the run goes
across its cells without --models; the command line overrides it and says so; two suites naming
different matrices are bad input naming both files; `skilltest validate` checks the block."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skilltest.cli import main

SUITE = """\
skill: demo
model_script: model.yaml
repetitions: 3
{matrix}
scenarios:
  - id: aggregate
    prompt: "How do you aggregate the errors?"
    with_skill: {{required_patterns: ["count_over_time"]}}
"""

SCRIPT = """\
schema_version: 1
rules:
  - id: rule
    when: {system: "DEMO SKILL"}
    reply: {text: "Aggregate with count_over_time first."}
default: {text: "I would grep the logs."}
"""

DOCS = (Path(__file__).parents[2] / "docs" / "matrix.md").read_text()
"""docs/matrix.md, which shows the messages these tests hold."""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("DEMO SKILL. Aggregate first.\n")
    (tmp_path / "model.yaml").write_text(SCRIPT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return tmp_path


def suite(project: Path, name: str, matrix: str) -> Path:
    path = project / name
    path.write_text(SUITE.format(matrix=matrix))
    return path


def test_a_suite_that_names_its_matrix_runs_each_cell(project, capsys):
    path = suite(project, "demo.yaml", "matrix: {models: [haiku, sonnet]}")
    results = project / "matrix.json"
    code = main(["pressure", str(path), "--allow-inconclusive", "--results", str(results)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert re.search(r"^scenario\s+model=haiku\s+model=sonnet$", out, re.MULTILINE)
    document = json.loads(results.read_text())
    assert document["matrix"]["cells"] == ["model=haiku", "model=sonnet"]
    assert [cell["results"]["model"] for cell in document["cells"]] == ["haiku", "sonnet"]
    assert "overrides" not in err


def test_the_command_line_overrides_the_suite_s_matrix_and_says_so(project, capsys):
    path = suite(project, "demo.yaml", "matrix: {models: [haiku, sonnet]}")
    assert main(["pressure", str(path), "--models", "opus", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert f"skilltest: --models overrides the matrix {path} names (models: haiku, sonnet)" in err
    assert re.search(r"^model=opus\s", out, re.MULTILINE)
    assert "model=haiku" not in out


def test_two_suites_naming_different_matrices_are_bad_input(project, capsys):
    suite(project, "a.yaml", "matrix: {models: [haiku, sonnet]}")
    suite(project, "b.yaml", "matrix: {models: [opus]}")
    assert main(["pressure", "a.yaml", "b.yaml", "--dry-run"]) == 2
    err = capsys.readouterr().err
    said = (
        "skilltest: error: b.yaml: a.yaml names the matrix (models: haiku, sonnet) and b.yaml "
        "names another (models: opus): one run runs one matrix\n"
        "  fix: give both suites the same matrix:, run them apart, or name the matrix for this "
        "run with --models (and --claude-versions)"
    )
    assert said in err
    assert said in DOCS  # docs/matrix.md shows it as printed


def test_a_suite_without_a_matrix_runs_in_the_one_another_names(project, capsys):
    first = suite(project, "a.yaml", "matrix: {models: [haiku, sonnet]}")
    second = suite(project, "b.yaml", "")
    second.write_text(second.read_text().replace("id: aggregate", "id: tables"))
    assert main(["pressure", str(first), str(second), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^model=sonnet\s+\S*b\.yaml\s", out, re.MULTILINE)


@pytest.mark.parametrize(
    ("layer", "matrix", "message"),
    [
        (
            "pressure",
            "matrix: {claude_versions: ['2.1.328']}",
            "#/matrix: Additional properties are not allowed ('claude_versions' was unexpected)",
        ),
        (
            "pressure",
            "matrix: {models: [a/b]}",
            "#/matrix/models/0: 'a/b' does not match '^[A-Za-z0-9._-]+$'\n  fix: expected a name "
            "usable as a folder name",
        ),
        (
            "scenarios",
            "matrix: {models: [haiku, haiku]}",
            "#/matrix/models: ['haiku', 'haiku'] has non-unique elements",
        ),
        ("triggers", "matrix: {}", "#/matrix: {} should be non-empty"),
    ],
)
def test_validate_names_the_file_and_pointer_of_a_bad_matrix(
    project, capsys, layer, matrix, message
):
    path = suite(project, "demo.yaml", matrix)
    assert main(["validate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert f"{path}{message}" in out + err
    # The run refuses it the same way, before anything runs.
    assert main([layer, str(path)]) == 2
    assert f"{path}{message}" in capsys.readouterr().err


def test_validate_accepts_a_matrix(project, capsys):
    path = suite(project, "demo.yaml", "matrix: {models: [haiku, sonnet]}")
    assert main(["validate", str(path)]) == 0, capsys.readouterr()
