"""Outcome checks end to end: the real claude CLI against the emulator on loopback.

A scaffolded repository has a failing test. With the skill, the agent fixes the code; without
it, the agent only looks. A ``command`` check runs the tests after the agent ends, in the run's
own workspace, so the scenario passes only when they pass; ``file_matches`` and
``final_answer`` decide as documented; a judge votes through the run's own endpoint, so the
emulator answers it offline, a recording keeps the votes and a replay answers them with no model
at all. A vetoing anti-pattern zeroes a run; a prompt that needs no action passes on inaction.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.report.files import read_results

from ..layers import run_layer

pytestmark = pytest.mark.cli

SKILL = """\
---
name: fixer
description: Use when a test fails and the code needs a fix.
---
Fix the code, run the tests, then say that the tests pass.
"""

SUITE = """\
skill: fixer
model_script: model.yaml
repetitions: 3
config: {allowed_tools: [Bash, Read, Edit, Skill]}
scenarios:
  - id: fix-the-test
    prompt: "The tests of calc fail. Please fix it."
    workspace: repo
    expected:
      required_tools: [Bash]
      anti_patterns: [{pattern: "rm -rf", veto: true}]
    checks:
      - command: {run: "python3 test_calc.py", exit_code: 0, timeout_s: 30, veto: true}
      - file_matches: {path: calc.py, pattern: "a \\\\+ b"}
      - final_answer: {pattern: "(?i)tests pass"}
      - judge: {criteria: "The answer says the tests now pass.", votes: 3}
  - id: wipes-the-cache
    prompt: "The cache of calc is stale."
    workspace: repo
    comparison: false
    expected:
      required_tools: [Bash]
      anti_patterns: [{pattern: "rm -rf", veto: true}]
  - id: nothing-to-do
    prompt: "Just say hello, change nothing."
    comparison: false
    expected: {expect_no_action: true}
"""

SCRIPT = """\
schema_version: 1
rules:
  - id: judge-pass
    when: {system: "skilltest judge", any_text: "(?i)the tests pass"}
    reply: {text: '{"verdict": "pass", "reason": "It says the tests pass."}'}
  - id: judge-fail
    when: {system: "skilltest judge"}
    reply: {text: '{"verdict": "fail", "reason": "It does not say so."}'}
  - id: fix
    when: {skill: fixer, user: "(?i)tests of calc fail", turn: 1}
    reply:
      tool_calls:
        - {name: Bash, input: {command: "sed -i 's/a - b/a + b/' calc.py && python3 test_calc.py"}}
  - id: fixed
    when: {skill: fixer, user: "(?i)tests of calc fail", turn: 2}
    reply: {text: "Fixed calc.py: the tests pass."}
  - id: look
    when: {user: "(?i)tests of calc fail", turn: 1}
    reply:
      tool_calls: [{name: Bash, input: {command: "cat calc.py"}}]
  - id: looked
    when: {user: "(?i)tests of calc fail", turn: 2}
    reply: {text: "I had a look at calc.py."}
  - id: wipe
    when: {user: "(?i)cache", turn: 1}
    reply:
      tool_calls: [{name: Bash, input: {command: "rm -rf .cache && python3 test_calc.py; true"}}]
  - id: wiped
    when: {user: "(?i)cache", turn: 2}
    reply: {text: "Cleared the cache."}
  - id: hello
    when: {user: "(?i)hello"}
    reply: {text: "Hello!"}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "skills" / "fixer").mkdir(parents=True)
    (tmp_path / "skills" / "fixer" / "SKILL.md").write_text(SKILL)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "test_calc.py").write_text(
        "from calc import add\nassert add(2, 2) == 4, 'add is broken'\nprint('ok')\n"
    )
    (tmp_path / "model.yaml").write_text(SCRIPT)
    (tmp_path / "suite.yaml").write_text(SUITE)
    return tmp_path


def runs_of(results: dict, scenario: str, arm: str) -> list[dict]:
    by_id = {s["id"]: s for s in results["scenarios"]}
    return [run for run in by_id[scenario]["runs"] if run["arm"] == arm]


def checks_of(run: dict) -> dict[str, bool]:
    return {check["name"]: check["passed"] for check in run["checks"]}


def test_the_work_is_checked_where_it_was_done_and_judged_offline(project, claude_bin):
    code = run_layer("scenarios", project / "suite.yaml", project, "--claude", claude_bin)
    results = read_results(project / "results.json", "scenarios")
    by_id = {s["id"]: s for s in results["scenarios"]}
    assert code == 1  # wipes-the-cache fails: its runs are vetoed

    fixed = runs_of(results, "fix-the-test", "with_skill")
    assert [run["score"] for run in fixed] == [1.0, 1.0, 1.0]
    assert checks_of(fixed[0]) == {
        "command python3 test_calc.py": True,
        "file_matches calc.py": True,
        "final_answer '(?i)tests pass'": True,
        "judge The answer says the tests now pass.": True,
    }
    judge = fixed[0]["checks"][3]
    assert judge["evidence"].startswith("3 pass, 0 fail of 3 vote(s); agreement 100%")
    assert [vote["verdict"] for vote in judge["votes"]] == ["pass", "pass", "pass"]
    # The original repository is untouched: each run fixed its own copy.
    assert "a - b" in (project / "repo" / "calc.py").read_text()

    looked = runs_of(results, "fix-the-test", "without_skill")
    assert checks_of(looked[0]) == {
        "command python3 test_calc.py": False,
        "file_matches calc.py": False,
        "final_answer '(?i)tests pass'": False,
        "judge The answer says the tests now pass.": False,
    }
    # The tests still fail afterwards, and that check vetoes: the run scores 0.
    assert [run["score"] for run in looked] == [0.0, 0.0, 0.0]
    assert looked[0]["vetoes"][0].startswith(
        "check 'command python3 test_calc.py' failed: exit 1 (expected 0): Traceback"
    )
    # The trace keeps the checks and the vetoes beside the run.
    trace = [json.loads(line) for line in Path(looked[0]["trace"]).read_text().splitlines()]
    assert trace[-1]["vetoes"] == looked[0]["vetoes"]
    assert [c["name"] for c in trace[-1]["checks"]] == list(checks_of(looked[0]))
    assert by_id["fix-the-test"]["verdict"] == "improved" and by_id["fix-the-test"]["passed"]
    # The results file says what each check asks, for reports.
    asked = by_id["fix-the-test"]["scenario"]
    assert asked["expected"]["vetoes"] == ["rm -rf"]
    assert [(c["name"], c["what"], c["veto"]) for c in asked["checks"]] == [
        ("command python3 test_calc.py", "python3 test_calc.py exits with 0 within 30 s", True),
        ("file_matches calc.py", "calc.py matches a \\+ b", False),
        ("final_answer '(?i)tests pass'", "the final answer matches (?i)tests pass", False),
        (
            "judge The answer says the tests now pass.",
            "a judge model (3 votes, reading last_message): The answer says the tests now pass.",
            False,
        ),
    ]

    wiped = runs_of(results, "wipes-the-cache", "with_skill")
    assert [run["score"] for run in wiped] == [0.0, 0.0, 0.0]
    assert wiped[0]["vetoes"] == [
        "anti-pattern 'rm -rf' at 'Bash {\"command\": \"rm -rf .cache && python3 test_calc.p…'"
    ]
    assert not by_id["wipes-the-cache"]["passed"]

    # Saying hello and changing nothing is what the prompt asked for.
    hello = runs_of(results, "nothing-to-do", "with_skill")
    assert [(run["score"], run["vetoes"]) for run in hello] == [(1.0, [])] * 3


def test_judge_votes_replay_from_cassettes_with_no_model(project, claude_bin, capsys):
    cassettes = project / "cassettes"
    assert (
        run_layer(
            "scenarios",
            project / "suite.yaml",
            project,
            "--claude",
            claude_bin,
            "--only",
            "fix-the-test",
            "--record",
            cassettes,
        )
        == 0
    )
    recorded = read_results(project / "results.json", "scenarios")
    # No model script, no emulator, no key: every answer, the judge's too, is on tape.
    (project / "model.yaml").unlink()
    suite = project / "suite.yaml"
    suite.write_text(suite.read_text().replace("model_script: model.yaml\n", ""))
    replayed_dir = project / "replayed"
    replayed_dir.mkdir()
    code = run_layer(
        "scenarios",
        project / "suite.yaml",
        replayed_dir,
        "--claude",
        claude_bin,
        "--only",
        "fix-the-test",
        "--replay",
        cassettes,
    )
    assert code == 0, capsys.readouterr()
    replayed = read_results(replayed_dir / "results.json", "scenarios")
    assert replayed["backend"] == "replay" and replayed["replay"]["misses"] == []
    for arm in ("with_skill", "without_skill"):
        before = runs_of(recorded, "fix-the-test", arm)
        after = runs_of(replayed, "fix-the-test", arm)
        assert [r["score"] for r in after] == [r["score"] for r in before]
        assert [checks_of(r) for r in after] == [checks_of(r) for r in before]
        assert [[v["verdict"] for v in r["checks"][3]["votes"]] for r in after] == [
            [v["verdict"] for v in r["checks"][3]["votes"]] for r in before
        ]
