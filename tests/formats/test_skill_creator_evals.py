"""skill-creator's ``evals/evals.json`` runs unchanged through ``skilltest scenarios``: the real
claude CLI against the emulator, each expectation and the expected output a judge check, the
eval's input files copied into both arms' working directory, the skill from the folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.report.files import read_results

from ..layers import run_layer

pytestmark = pytest.mark.cli


# With the skill the stand-in loads it, reads the input file and adds the margin as a formula;
# without it, it reads the file and pastes values. A judge passes a criterion only on what the
# run shows: the rows of the input file (so it was copied) and, for the formula, the formula.
SCRIPT = r"""
schema_version: 1
model: claude-test-emulated
rules:
  - id: judge-formula
    when: {system: "skilltest judge", any_text: '(?s)(formula, not pasted.*=\(C2-D2\)/C2|=\(C2-D2\)/C2.*formula, not pasted)'}
    reply: {text: '{"verdict": "pass", "reason": "The margin is the formula =(C2-D2)/C2."}'}
  - id: judge-expected
    when: {system: "skilltest judge", any_text: '(?s)(expected result: A margin column.*=\(C2-D2\)/C2|=\(C2-D2\)/C2.*expected result: A margin column)'}
    reply: {text: '{"verdict": "pass", "reason": "A margin column as a percentage."}'}
  - id: judge-column
    when: {system: "skilltest judge", any_text: '(?s)(profit margin column.*north 37\.5%|north 37\.5%.*profit margin column)'}
    reply: {text: '{"verdict": "pass", "reason": "The answer gives each row a margin."}'}
  - id: judge-otherwise
    when: {system: "skilltest judge"}
    reply: {text: '{"verdict": "fail", "reason": "The run does not show it."}'}
  - id: load-skill
    when: {skill: xlsx-margins, user: "xlsx", turn: 1}
    reply: {text: "Loading.", tool_calls: [{name: Skill, input: {skill: xlsx-margins}}]}
  - id: formula
    when: {skill_loaded: xlsx-margins, tool_result: "north,120,48000"}
    reply: {text: "Added the margin column as the formula =(C2-D2)/C2 in percent: north 37.5%, south 30%."}
  - id: pasted
    when: {tool_result: "north,120,48000"}
    reply: {text: "Margins pasted as values: north 37.5%, south 30%."}
  - id: read-after-the-skill
    when: {tool_result: "Launching skill"}
    reply: {text: "Reading.", tool_calls: [{name: Bash, input: {command: "cat evals/files/q4-sales.csv"}}]}
  - id: first-read
    when: {user: "xlsx", turn: 1}
    reply: {text: "Reading.", tool_calls: [{name: Bash, input: {command: "cat evals/files/q4-sales.csv"}}]}
default:
  text: "Which data do you mean?"
"""


@pytest.fixture
def repository(skill_repository) -> Path:
    return skill_repository(SCRIPT)


def checks_of(scenario: dict, arm: str) -> list[dict[str, bool]]:
    return [
        {check["name"]: check["passed"] for check in run["checks"]}
        for run in scenario["runs"]
        if run["arm"] == arm
    ]


def test_the_evals_file_runs_unchanged_each_expectation_judged(
    repository, claude_bin, monkeypatch, capsys
):
    monkeypatch.chdir(repository)
    code = run_layer(
        "scenarios", "skills/xlsx-margins", repository,
        "--claude", claude_bin, "--script", "script.yaml", "-k", "2", "-j", "2",
    )  # fmt: skip
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    results = read_results(repository / "results.json", "scenarios")
    by_id = {s["id"]: s for s in results["scenarios"]}
    assert sorted(by_id) == ["1", "2"]
    margin = by_id["1"]
    assert margin["skill"] == "xlsx-margins"
    # The input file was in both arms' working directory: each read its rows.
    assert checks_of(margin, "with_skill") == 2 * [
        {"expectation 1": True, "expectation 2": True, "expected output": True}
    ]
    assert checks_of(margin, "without_skill") == 2 * [
        {"expectation 1": True, "expectation 2": False, "expected output": False}
    ]
    assert checks_of(by_id["2"], "with_skill") == 2 * [{"expected output": False}]
    # Two runs per arm decide nothing: inconclusive, and said so.
    assert code == 1, captured.out
    rows = {
        line.split()[0]: line.split()[1]
        for line in captured.out.splitlines()
        if line.startswith("xlsx-margins/") and not line.split()[0].endswith(":")
    }
    assert rows == {"xlsx-margins/1": "inconclusive", "xlsx-margins/2": "inconclusive"}
    assert (
        "skills/xlsx-margins/evals/evals.json: read as a skill-creator evals.json (scenario ids "
        "are the evals' ids, each expectation and the expected output a judge check)"
    ) in captured.err
    # What the eval asks (the expected output among it) is in the results file and the reports.
    assert [check["what"] for check in margin["scenario"]["checks"]] == [
        "a judge model (3 votes, reading trace): The output includes a profit margin column",
        "a judge model (3 votes, reading trace): The margin is computed as a formula, not pasted "
        "values",
        "a judge model (3 votes, reading trace): The run produced the expected result: A margin "
        "column computed from the revenue and cost columns, as a percentage",
    ]


def test_validate_names_the_format_for_the_file_and_the_skill_folder(
    repository, monkeypatch, capsys
):
    monkeypatch.chdir(repository)
    assert main(["validate", "skills/xlsx-margins", "skills/xlsx-margins/evals/evals.json"]) == 0
    assert capsys.readouterr().out == (
        "ok   skills/xlsx-margins/evals/evals.json (scenarios: skill-creator evals.json)\n"
        "\n1 file(s) valid\n"
    )
    assert main(["triggers", "skills/xlsx-margins/evals/evals.json"]) == 2
    assert capsys.readouterr().err == (
        "skilltest: error: skills/xlsx-margins/evals/evals.json: this is a skill-creator "
        "evals.json, which `skilltest scenarios` runs, not `skilltest triggers`\n"
        "  fix: run it with skilltest scenarios FILE (or the skill's folder)\n"
    )


def test_a_folder_holding_only_evals_json_is_a_suite(repository, monkeypatch, capsys):
    monkeypatch.chdir(repository)
    (repository / "skills" / "xlsx-margins" / "evals" / "trigger-eval.json").unlink()
    assert main(["validate", "skills/xlsx-margins/evals"]) == 0
    assert "ok   skills/xlsx-margins/evals/evals.json (scenarios: skill-creator evals.json)" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize(
    ("change", "place", "message"),
    [
        ({"id": "one"}, "#/evals/0/id", "an eval's id must be a whole number of 0 or more"),
        ({"prompt": ""}, "#/evals/0/prompt", "prompt must be a non-empty text"),
        ({"expectations": "it works"}, "#/evals/0/expectations", "expectations must be a list"),
        (
            {"files": ["../../secret.txt"]},
            "#/evals/0/files/0",
            "input file '../../secret.txt' is not in the skill's folder",
        ),
        (
            {"expectations": [], "expected_output": None},
            "#/evals/0",
            "this eval has neither expectations nor an expected_output, so nothing judges a run",
        ),
    ],
)
def test_a_bad_eval_is_refused_by_its_place(
    repository, monkeypatch, capsys, change, place, message
):
    monkeypatch.chdir(repository)
    path = Path("skills/xlsx-margins/evals/evals.json")
    document = json.loads(path.read_text())
    document["evals"][0].update(change)
    document["evals"][0] = {k: v for k, v in document["evals"][0].items() if v is not None}
    path.write_text(json.dumps(document))
    assert main(["scenarios", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"skilltest: error: {path}{place}: {message}" in err
    assert "Traceback" not in err
