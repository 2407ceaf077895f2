"""Evidence is what happened: each defect a skill author met, scored as a suite writes it.

Transcripts are built as Claude Code 2.1.328 prints them (stream-json events) and parsed by the
product's parser; rubrics are read from suite YAML by the product's loader.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilltest.checks.model import CheckResult
from skilltest.scenarios.rubric import score
from skilltest.scenarios.suite import load_scenario_suite
from skilltest.transcript import Transcript
from skilltest.transcript.stream_json import parse_stream_json

INIT = {"type": "system", "subtype": "init", "claude_code_version": "2.1.328", "skills": []}


def call(tool_id: str, name: str, parent: str | None = None, **arguments: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}
    message = {"id": f"m-{tool_id}", "model": "claude-test", "content": [block]}
    return {"type": "assistant", "message": message, "parent_tool_use_id": parent}


def said(text: str, parent: str | None = None) -> dict[str, Any]:
    message = {
        "id": f"m-{abs(hash(text))}",
        "model": "claude-test",
        "content": [{"type": "text", "text": text}],
    }
    return {"type": "assistant", "message": message, "parent_tool_use_id": parent}


def result(tool_id: str, text: str, *, error: bool = False) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": error}
    return {"type": "user", "message": {"role": "user", "content": [block]}}


DONE = {"type": "result", "subtype": "success", "is_error": False, "result": "Done."}


def transcript(*events: dict[str, Any]) -> Transcript:
    lines = "\n".join(json.dumps(e) for e in (INIT, *events, DONE)) + "\n"
    return parse_stream_json(lines)


def rubric(tmp_path: Path, scenario: str) -> Any:
    (tmp_path / "skills" / "probe").mkdir(parents=True, exist_ok=True)
    (tmp_path / "skills" / "probe" / "SKILL.md").write_text("---\nname: probe\n---\nProbe.\n")
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"skill: probe\nscenarios:\n  - id: s\n    prompt: p\n{scenario}")
    return load_scenario_suite(suite).scenarios[0].expected


def test_a_tool_that_does_not_exist_in_the_run_is_no_evidence(tmp_path):
    missing = (
        "<tool_use_error>Error: No such tool available: mcp__wx__get_forecast</tool_use_error>"
    )
    events = []
    for n in range(7):
        events += [
            call(f"t{n}", "mcp__wx__get_forecast", city="Oslo"),
            result(f"t{n}", missing, error=True),
        ]
    card = score(
        transcript(*events),
        rubric(
            tmp_path, "    expected: {required_tools: [get_forecast], required_patterns: [Oslo]}\n"
        ),
    )
    assert card.score == 0.0
    assert card.explain().startswith(
        "score 0.00: required_tools 0/1 (missing 'get_forecast', closest "
        "'mcp__wx__get_forecast' (never ran: <tool_use_error>Error: No such tool available"
    )


CRASH = (
    "Exit code 1\nTraceback (most recent call last):\nModuleNotFoundError: No module named 'pypdf'"
)


CRASHED = transcript(
    call("t1", "Bash", command="python scripts/fill_form.py in.pdf"),
    result("t1", CRASH, error=True),
)
"""A run whose one call, the form-filling script, crashed."""

FILLS_THE_FORM = "    expected: {required_tools: [Bash], required_patterns: [fill_form]}\n"


def test_a_crashed_script_is_an_attempt_shown_as_failed(tmp_path):
    card = score(CRASHED, rubric(tmp_path, FILLS_THE_FORM))
    assert card.score == 1.0
    assert "required_tools 1/1 (Bash failed: Exit code 1)" in card.explain()


def test_with_require_success_a_crashed_script_counts_for_nothing(tmp_path):
    expected = rubric(tmp_path, "    require_success: true\n" + FILLS_THE_FORM)
    assert score(CRASHED, expected).score == 0.0


def test_a_vetoing_anti_pattern_zeroes_a_run_that_did_everything_else(tmp_path):
    run = transcript(
        call("t1", "Bash", command="lgtm loki query 'count_over_time(x)'"),
        result("t1", "ok"),
        call("t2", "Bash", command="rm -rf /srv/data"),
        result("t2", ""),
    )
    scenario = (
        "    expected:\n"
        "      required_patterns: [count_over_time]\n"
        "      anti_patterns: ['grep ERROR', {pattern: 'rm -rf', veto: true}]\n"
    )
    card = score(run, rubric(tmp_path, scenario))
    assert card.score == 0.0
    assert card.vetoes == ("anti-pattern 'rm -rf' at 'Bash {\"command\": \"rm -rf /srv/data\"}'",)
    assert card.explain().startswith("score 0.00 (vetoed: anti-pattern 'rm -rf'")
    # The same pattern without the veto costs its share only.
    plain = rubric(tmp_path, scenario.replace("{pattern: 'rm -rf', veto: true}", "'rm -rf'"))
    assert score(run, plain).score == pytest.approx(0.25 / 0.45 + 0.2 / 0.45 * 0.5)


@pytest.mark.parametrize("name", ["TodoWrite", "Agent", "Task"])
def test_plans_and_delegations_are_not_actions(tmp_path, name):
    prose = {"TodoWrite": {"todos": [{"content": "run probe-fix --safe", "status": "pending"}]}}
    arguments = prose.get(name, {"prompt": "Please run probe-fix --safe", "description": "fix"})
    run = transcript(call("t1", name, **arguments), result("t1", "noted"))
    card = score(run, rubric(tmp_path, "    expected: {required_patterns: ['probe-fix --safe']}\n"))
    assert card.score == 0.0


def test_a_delegated_agents_own_commands_are_actions(tmp_path):
    run = transcript(
        call("a1", "Agent", prompt="fix it", description="fix"),
        call("t1", "Bash", parent="a1", command="probe-fix --safe"),
        result("t1", "fixed"),
        result("a1", "done"),
    )
    card = score(run, rubric(tmp_path, "    expected: {required_patterns: ['probe-fix --safe']}\n"))
    assert card.score == 1.0


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("Read", {"file_path": "/work/run/.claude/skills/probe/reference/checklist.md"}),
        ("Bash", {"command": "cat .claude/skills/probe/reference/checklist.md"}),
        ("Grep", {"pattern": "checklist", "path": ".claude/skills/probe"}),
    ],
)
def test_reading_the_skills_own_files_is_not_evidence(tmp_path, name, arguments):
    run = transcript(call("t1", name, **arguments), result("t1", "1. check the p99"))
    card = score(run, rubric(tmp_path, "    expected: {required_patterns: [checklist]}\n"))
    assert card.score == 0.0


def test_running_the_skills_script_is_an_action(tmp_path):
    run = transcript(
        call("t1", "Bash", command="python .claude/skills/probe/scripts/checklist.py"),
        result("t1", "ok"),
    )
    card = score(run, rubric(tmp_path, "    expected: {required_patterns: [checklist]}\n"))
    assert card.score == 1.0


def test_text_patterns_match_what_the_user_saw_not_a_subagents_text(tmp_path):
    run = transcript(
        call("a1", "Agent", prompt="measure", description="measure"),
        said("SUBAGENT-INTERNAL: the p99 is 900ms", parent="a1"),
        result("a1", "measured"),
        said("Done."),
    )
    expected = rubric(tmp_path, "    expected: {text_patterns: ['p99 is 900ms']}\n")
    assert score(run, expected).score == 0.0
    shown = transcript(said("The p99 is 900ms."))
    assert (
        score(
            shown, rubric(tmp_path, "    expected: {text_patterns: ['(?i)p99 is 900ms']}\n")
        ).score
        == 1.0
    )


@pytest.mark.parametrize(
    "scenario",
    [
        "    expected: {anti_patterns: ['kubectl delete']}\n",
        "    expected: {expect_no_action: true}\n",
    ],
)
def test_a_scenario_that_needs_no_action_passes_on_inaction(tmp_path, scenario):
    expected = rubric(tmp_path, scenario)
    assert score(transcript(said("No action is needed here.")), expected).score == 1.0


def test_expect_no_action_vetoes_any_action(tmp_path):
    expected = rubric(tmp_path, "    expected: {expect_no_action: true}\n")
    card = score(transcript(call("t1", "Bash", command="echo hi"), result("t1", "hi")), expected)
    assert card.score == 0.0
    assert card.vetoes == ("anti-pattern '(any action)' at 'Bash {\"command\": \"echo hi\"}'",)


def test_one_irrelevant_call_no_longer_passes_a_scenario_that_requires_work(tmp_path):
    expected = rubric(
        tmp_path,
        "    expected: {required_patterns: ['probe-fix'], anti_patterns: ['rm -rf']}\n",
    )
    run = transcript(call("t1", "Bash", command="echo hello"), result("t1", "hello"))
    assert score(run, expected).score == pytest.approx(0.2 / 0.45)
    assert score(run, expected).score < 0.6


def test_checks_are_a_component_and_a_failed_vetoing_check_zeroes_the_run(tmp_path):
    expected = rubric(
        tmp_path,
        "    expected: {required_tools: [Bash]}\n"
        "    checks:\n"
        "      - file_exists: {path: NOTES.md}\n"
        "      - command: {run: 'pytest -q', veto: true}\n",
    )
    run = transcript(call("t1", "Bash", command="echo x > NOTES.md"), result("t1", ""))
    found = [
        CheckResult("file_exists NOTES.md", "file_exists", True, "NOTES.md exists"),
        CheckResult("command pytest -q", "command", True, "exit 0 (expected 0)", veto=True),
    ]
    assert score(run, expected, found).score == 1.0
    failed = [
        found[0],
        CheckResult("command pytest -q", "command", False, "exit 1 (expected 0)", veto=True),
    ]
    card = score(run, expected, failed)
    assert (card.score, card.vetoes) == (
        0.0,
        ("check 'command pytest -q' failed: exit 1 (expected 0)",),
    )
    # Without a veto, a failed check costs its share of the checks component only.
    unvetoed = [found[0], CheckResult("command pytest -q", "command", False, "exit 1")]
    assert score(run, expected, unvetoed).score == pytest.approx(0.3 / 0.6 + 0.3 / 0.6 * 0.5)


def test_a_check_that_could_not_be_evaluated_leaves_the_run_unscored(tmp_path):
    expected = rubric(tmp_path, "    checks:\n      - judge: {criteria: 'It names the service.'}\n")
    broken = CheckResult("judge", "judge", False, "", error="every judge call failed: HTTP 529")
    card = score(transcript(said("Done.")), expected, [broken])
    assert card.score is None
    assert card.unscored_reason == (
        "check 'judge It names the service.' could not be evaluated: every judge call failed: "
        "HTTP 529"
    ).replace("'judge It names the service.'", "'judge'")


SKILL_MD = ".claude/skills/probe/SKILL.md"


@pytest.mark.parametrize(
    "command",
    [
        f"grep -n probe-fix {SKILL_MD} | head -5",
        f"sed -n 1,40p {SKILL_MD}",
        f"awk '/probe-fix/' {SKILL_MD}",
        f"nl {SKILL_MD}",
        f"python3 -c \"print(open('{SKILL_MD}').read())\"",
        f"cat {SKILL_MD} | grep probe-fix",
        f"head -n 20 {SKILL_MD}; tail -5 {SKILL_MD}",
        f"less {SKILL_MD}",
        "ls .claude/skills/probe/*.md | xargs cat",
        f"cat {SKILL_MD} 2>/dev/null | sort | uniq -c",
        "cd .claude/skills/probe && cat SKILL.md",
    ],
)
def test_reading_the_skills_files_through_any_pipeline_is_not_evidence(tmp_path, command):
    run = transcript(call("t1", "Bash", command=command), result("t1", "run probe-fix --safe"))
    expected = rubric(tmp_path, "    expected: {required_patterns: ['probe-fix|SKILL']}\n")
    assert score(run, expected).score == 0.0


@pytest.mark.parametrize(
    "command",
    [
        f"grep -n probe-fix {SKILL_MD} > notes.txt",
        f"cat {SKILL_MD} | tee notes.txt",
        f"sed -i s/probe-fix/x/ {SKILL_MD}",
        f"grep probe-fix {SKILL_MD} && probe-fix --safe",
        f"cat {SKILL_MD} README.md",
        f"python3 -c \"open('{SKILL_MD}', 'w').write('probe-fix')\"",
        f"cat $(ls {SKILL_MD})",
    ],
)
def test_a_command_that_does_more_than_read_the_skill_is_an_action(tmp_path, command):
    run = transcript(call("t1", "Bash", command=command), result("t1", "ok"))
    expected = rubric(tmp_path, "    expected: {required_patterns: ['probe-fix|SKILL']}\n")
    assert score(run, expected).score == 1.0


def background(tool_id: str, command: str) -> dict[str, Any]:
    return call(tool_id, "Bash", command=command, run_in_background=True)


STARTED = "Command running in background with ID: b7. Output is being written to: /tmp/b7.output"


@pytest.mark.parametrize(
    ("read", "expected_score"),
    [
        ("<status>completed</status>\n<exit_code>0</exit_code>\n<stdout>ok</stdout>", 1.0),
        ("<status>failed</status>\n<exit_code>2</exit_code>", 0.0),
        ("<status>running</status>", 0.0),
    ],
)
def test_a_background_command_succeeds_when_a_later_output_read_shows_it(
    tmp_path, read, expected_score
):
    run = transcript(
        background("t1", "make build"),
        result("t1", STARTED),
        call("t2", "BashOutput", bash_id="b7"),
        result("t2", read),
    )
    expected = rubric(
        tmp_path, "    require_success: true\n    expected: {required_patterns: ['make build']}\n"
    )
    assert score(run, expected).score == expected_score


def test_a_background_command_never_heard_from_earns_no_success_credit(tmp_path):
    run = transcript(background("t1", "make build"), result("t1", STARTED))
    strict = rubric(
        tmp_path, "    require_success: true\n    expected: {required_patterns: ['make build']}\n"
    )
    assert score(run, strict).score == 0.0
    # Without require_success the attempt is what counts.
    plain = rubric(tmp_path, "    expected: {required_patterns: ['make build']}\n")
    assert score(run, plain).score == 1.0
