"""skill-creator's trigger eval set (a bare JSON list of ``{query, should_trigger}``) runs
unchanged through ``skilltest triggers``: the real claude CLI against the emulator, the skill
from the folder the file lives in, ``--runs-per-query`` and ``--trigger-threshold`` as
skill-creator spells them, and ``validate`` naming the format."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.report.files import read_results

from ..layers import run_layer

# The stand-in loads the skill for the spreadsheet request only; a PDF request it answers itself.
SCRIPT = """\
schema_version: 1
model: claude-test-emulated
rules:
  - id: spreadsheet
    when: {user: "xlsx", turn: 1}
    reply: {text: "Loading.", tool_calls: [{name: Skill, input: {skill: xlsx-margins}}]}
  - id: answer
    reply: {text: "Done."}
"""


@pytest.fixture
def repository(skill_repository) -> Path:
    return skill_repository(SCRIPT)


def test_the_trigger_eval_set_runs_unchanged_with_skill_creator_s_options(
    repository, claude_bin, monkeypatch, capsys
):
    monkeypatch.chdir(repository)
    code = run_layer(
        "triggers",
        "skills/xlsx-margins/evals/trigger-eval.json",
        repository,
        "--claude", claude_bin,
        "--script", "script.yaml",
        "--runs-per-query", "2",
        "--trigger-threshold", "0.25",
        "-j", "2",
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1, captured.out + captured.err  # two runs per query decide nothing
    assert (
        "skills/xlsx-margins/evals/trigger-eval.json: read as a skill-creator trigger eval set "
        "(query ids are positions, the skill is skills/xlsx-margins/)"
    ) in captured.err
    # The threshold is skill-creator's option's, and the verdicts read it.
    assert (
        "xlsx-margins/2: fired in 0/2 scored runs: the 95% exact interval of its rate, [0%–84%], "
        "straddles the threshold 25%"
    ) in captured.out
    results = read_results(repository / "results.json", "triggers")
    [suite] = results["suites"]
    assert suite["skill"] == "xlsx-margins"
    assert suite["threshold"] == 0.25
    assert [(q["id"], q["should_trigger"]) for q in suite["queries"]] == [
        ("1", True),
        ("2", False),
        ("3", False),
    ]
    assert [(q["fired"], q["scored"]) for q in suite["queries"]] == [(2, 2), (0, 2), (0, 2)]


def test_validate_names_the_format_and_scenarios_refuses_it_naming_the_command(
    repository, monkeypatch, capsys
):
    monkeypatch.chdir(repository)
    path = "skills/xlsx-margins/evals/trigger-eval.json"
    assert main(["validate", path]) == 0
    assert capsys.readouterr().out == (
        f"ok   {path} (triggers: skill-creator trigger eval set)\n\n1 file(s) valid\n"
    )
    assert main(["scenarios", path]) == 2
    assert capsys.readouterr().err == (
        f"skilltest: error: {path}: this is a skill-creator trigger eval set, which "
        "`skilltest triggers` runs, not `skilltest scenarios`\n"
        "  fix: run it with skilltest triggers FILE (--runs-per-query N, --trigger-threshold T)\n"
    )


@pytest.mark.parametrize(
    ("items", "place", "message"),
    [
        ([{"query": "", "should_trigger": True}], "#/0/query", "a query must be a non-empty text"),
        (
            [{"query": "hi", "should_trigger": True}, {"query": "yo", "should_trigger": "yes"}],
            "#/1/should_trigger",
            "should_trigger must be true or false",
        ),
    ],
)
def test_a_bad_item_is_refused_by_its_place(repository, monkeypatch, capsys, items, place, message):
    monkeypatch.chdir(repository)
    path = Path("skills/xlsx-margins/evals/trigger-eval.json")
    path.write_text(json.dumps(items))
    assert main(["triggers", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"skilltest: error: {path}{place}: {message}\n" in err
    assert "Traceback" not in err


def test_an_eval_set_outside_any_skill_is_refused_with_where_to_keep_it(
    repository, monkeypatch, capsys
):
    monkeypatch.chdir(repository)
    Path("loose.json").write_text('[{"query": "hi", "should_trigger": true}]')
    assert main(["validate", "loose.json"]) == 2
    out = capsys.readouterr().out
    assert "skilltest: error: loose.json: no SKILL.md in the folder holding this file" in out
    assert "fix: keep the file in its skill's folder" in out


def test_a_plugin_s_eval_folder_tests_its_one_skill(repository, monkeypatch, capsys):
    """A plugin keeps evals/ at its root, beside skills/<name>/."""
    monkeypatch.chdir(repository)
    shutil.move("skills/xlsx-margins/evals", "evals")
    assert main(["validate", "evals/trigger-eval.json"]) == 0
    assert "(triggers: skill-creator trigger eval set)" in capsys.readouterr().out
