"""Evidence a rubric can trust, through the real claude CLI against the emulator.

Each scenario is a suite a skill author could write; the agent's commands are scripted replies
the pinned CLI really runs in its sandbox, and what is asserted is what the user reads in the
results: scores, vetoes, verdicts and reasons.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from skilltest.report.files import read_results
from tests.layers import run_layer

pytestmark = pytest.mark.cli

NOTES_SKILL = """\
---
name: notes
description: Use this skill whenever the user asks to fix the notes. Run probe-fix.
---
To fix the notes, run `probe-fix --safe`.
"""


def bash(command: str, **options: Any) -> dict[str, Any]:
    return {"name": "Bash", "input": {"command": command, "description": "step", **options}}


def run_suite(
    tmp_path: Path,
    claude_bin: str,
    scenario: dict[str, Any],
    rules: list[dict[str, Any]],
    *,
    seed: int = 0,
    **suite: Any,
) -> tuple[int, dict[str, Any]]:
    """Runs one scenario of the ``notes`` skill; returns the exit code and its results entry."""
    (tmp_path / "skills" / "notes").mkdir(parents=True)
    (tmp_path / "skills" / "notes" / "SKILL.md").write_text(NOTES_SKILL)
    script = {"schema_version": 1, "seed": seed, "rules": rules, "default": {"text": "Done."}}
    (tmp_path / "notes.script.yaml").write_text(yaml.safe_dump(script, sort_keys=False))
    body = {"skill": "notes", "model_script": "notes.script.yaml", **suite}
    body["scenarios"] = [{"id": "s", "prompt": "fix the notes", **scenario}]
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(body, sort_keys=False))
    code = run_layer("scenarios", tmp_path / "suite.yaml", tmp_path, "--claude", claude_bin)
    (entry,) = read_results(tmp_path / "results.json", "scenarios")["scenarios"]
    return code, entry


def test_a_destructive_command_that_then_failed_is_vetoed_under_require_success(
    claude_bin, tmp_path
):
    rules = [
        {"id": "make", "when": {"turn": 1}, "reply": {"tool_calls": [bash("mkdir -p cache")]}},
        {
            "id": "wipe",
            "when": {"turn": 2},
            "reply": {"tool_calls": [bash("rm -rf ./cache && false")]},
        },
    ]
    scenario = {
        "require_success": True,
        "expected": {
            "required_tools": ["Bash"],
            "anti_patterns": [{"pattern": "rm -rf", "veto": True}],
        },
    }
    code, entry = run_suite(tmp_path, claude_bin, scenario, rules, comparison=False, repetitions=1)
    (run,) = entry["runs"]
    assert [call["status"] for call in run["tool_calls"]] == ["ran", "failed"]
    assert run["score"] == 0.0
    (veto,) = run["vetoes"]
    assert veto.startswith(
        'anti-pattern \'rm -rf\' at \'Bash {"command": "rm -rf ./cache && false"'
    )
    assert (entry["with_skill"]["passes"], code) == (0, 1)


BACKGROUND_RULES = [
    {
        "id": "fails",
        "when": {"user": "failing", "turn": 1},
        "reply": {"tool_calls": [bash("ls /no/such/dir", run_in_background=True)]},
    },
    {
        "id": "works",
        "when": {"user": "working", "turn": 1},
        "reply": {"tool_calls": [bash("echo fine", run_in_background=True)]},
    },
]


@pytest.mark.parametrize(
    ("prompt", "status", "score"), [("failing", "failed", 0.0), ("working", "ran", 1.0)]
)
def test_a_background_command_earns_success_credit_only_once_it_is_known_to_have_succeeded(
    claude_bin, tmp_path, prompt, status, score
):
    # The CLI answers "running in background" at once; it reports later how the command ended.
    scenario = {
        "prompt": f"run the {prompt} job",
        "require_success": True,
        "expected": {"required_tools": ["Bash"]},
    }
    _, entry = run_suite(
        tmp_path, claude_bin, scenario, BACKGROUND_RULES, comparison=False, repetitions=1
    )
    (run,) = entry["runs"]
    assert [call["status"] for call in run["tool_calls"]] == [status]
    assert run["score"] == score


SKILL_FILE = ".claude/skills/notes/SKILL.md"

READS = {
    "grep-head": f"grep -n probe-fix {SKILL_FILE} | head -5",
    "sed": f"sed -n 1,20p {SKILL_FILE}",
    "python": f"python3 -c \"print(open('{SKILL_FILE}').read())\"",
    "cat-grep": f"cat {SKILL_FILE} | grep probe-fix",
    "xargs": "ls .claude/skills/notes/SKILL.md | xargs cat",
}


@pytest.mark.parametrize("name", ["grep-head", "sed"])
def test_reading_the_skill_through_a_pipeline_is_not_evidence(claude_bin, tmp_path, name):
    rules = [
        {
            "id": "read",
            "when": {"skill": "notes", "turn": 1},
            "reply": {"tool_calls": [bash(READS[name])]},
        },
        {"id": "other", "when": {"turn": 1}, "reply": {"tool_calls": [bash("echo looking")]}},
    ]
    scenario = {"expected": {"required_patterns": ["probe-fix|SKILL"]}}
    _, entry = run_suite(tmp_path, claude_bin, scenario, rules, repetitions=3)
    with_runs = [run for run in entry["runs"] if run["arm"] == "with_skill"]
    assert [run["tool_calls"][0]["input"]["command"] for run in with_runs] == [READS[name]] * 3
    assert [run["tool_calls"][0]["status"] for run in with_runs] == ["ran"] * 3
    assert [run["score"] for run in with_runs] == [0.0, 0.0, 0.0]
    assert entry["verdict"] != "improved"


# A command of the skill's that hangs (Claude Code refuses a bare long `sleep`; a program that
# takes its time is let through), and one that does the work.
HANGS = "python3 -c 'import time; time.sleep(600)' # fix-notes"
WORKS = "echo fix-notes done"
HUNG = f"cut off after 20 s while its Bash call `{HANGS}` was still running"


def hanging_rules(baseline: dict[str, Any]) -> list[dict[str, Any]]:
    """With the skill, its command hangs in some runs: drawn per run from the script's seed (1
    plus the repetition), it hangs in runs 0 and 3 of the first five and in five of the first
    ten. Without the skill, ``baseline`` answers."""
    return [
        {
            "id": "fix",
            "when": {"skill": "notes", "turn": 1},
            "pick": "random",
            "replies": [{"tool_calls": [bash(WORKS)]}, {"tool_calls": [bash(HANGS)]}],
        },
        {"id": "baseline", "when": {"turn": 1}, "reply": baseline},
    ]


# Long enough for the CLI to start and reach the command on a loaded machine: the limit must
# fall while the agent's own command runs, not while the CLI is still starting.
HANG_CONFIG = {"timeout_ms": 20000, "allowed_tools": ["Bash", "Skill"]}
FIXED = {"expected": {"required_tools": ["Bash"], "required_patterns": ["fix-notes done"]}}


def test_a_skill_whose_command_hangs_in_2_of_5_runs_is_not_improved_by_the_3_that_finished(
    claude_bin, tmp_path
):
    rules = hanging_rules({"text": "I cannot fix the notes."})
    code, entry = run_suite(
        tmp_path, claude_bin, {**FIXED, "config": HANG_CONFIG}, rules, seed=1, repetitions=5
    )
    # 3 of 5 against 0 of 5, not 3 of 3: the hangs count, and nothing is decided yet.
    assert entry["verdict"] == "inconclusive"
    assert (entry["with_skill"]["scored"], entry["with_skill"]["passes"]) == (5, 3)
    with_runs = [run for run in entry["runs"] if run["arm"] == "with_skill"]
    hung = [run for run in with_runs if run["hung"]]
    assert [run["rep"] for run in hung] == [0, 3]
    for run in hung:
        # Scored: a failing run, vetoed by its own hang, and said so.
        assert (run["score"], run["error"], run["hung"], run["ended"]) == (0.0, None, HUNG, HUNG)
        assert run["vetoes"] == [HUNG]
    assert [run["score"] for run in with_runs if not run["hung"]] == [1.0, 1.0, 1.0]
    assert (
        "with-skill: 2 of 5 runs cut off while the agent's own tool call was still running, "
        f"counted as failing ({HUNG})"
    ) in entry["reasons"]
    assert code == 1


def test_a_skill_whose_command_hangs_in_half_its_runs_regressed_against_a_baseline_that_works(
    claude_bin, tmp_path
):
    rules = hanging_rules({"tool_calls": [bash(WORKS)]})
    code, entry = run_suite(
        tmp_path, claude_bin, {**FIXED, "config": HANG_CONFIG}, rules, seed=1, repetitions=10
    )
    # 5 of 10 against 10 of 10; leaving the hangs out, 5 of 5 against 10 of 10 decides nothing.
    assert entry["verdict"] == "regressed"
    assert (entry["with_skill"]["passes"], entry["without_skill"]["passes"]) == (5, 10)
    with_runs = [run for run in entry["runs"] if run["arm"] == "with_skill"]
    assert sum(1 for run in with_runs if run["hung"] == HUNG) == 5
    assert code == 1


def test_a_run_cut_off_while_the_model_takes_its_time_stays_unscored(claude_bin, tmp_path):
    rules = [
        {"id": "fix", "when": {"turn": 1}, "reply": {"tool_calls": [bash(WORKS)]}},
        {
            "id": "slow",
            "when": {"turn": 2},
            "reply": {"text": "Fixed."},
            "fault": {"latency_ms": 60000},
        },
    ]
    scenario = {**FIXED, "config": HANG_CONFIG}
    _, entry = run_suite(tmp_path, claude_bin, scenario, rules, comparison=False, repetitions=1)
    (run,) = entry["runs"]
    assert (run["score"], run["ended"]) == (None, None)
    assert run["error"] == (
        "cut short: timed out after 20s after 1 tool calls, waiting on the model API or the CLI "
        "itself (no tool call of the agent's running), before the agent finished (score_partial: "
        "true scores what it did)"
    )
    assert run["hung"] is None
    assert entry["verdict"] == "error"
