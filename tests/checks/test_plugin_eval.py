"""Checks of dialect ``plugin_eval``: a run read as Claude Code's ``claude plugin eval`` grades it
(the pinned CLI's grader code: every tool_use written counts by its exact name, the trace is the
stream-json events, ``files`` the paths the run created, a judge's three PASS/FAIL votes)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from skilltest.checks import plugin_eval
from skilltest.checks.evaluate import NO_MOCKS, RunView, evaluate, snapshot
from skilltest.checks.judge import JudgeModel
from skilltest.checks.model import CheckResult, parse_checks
from skilltest.errors import InputError
from skilltest.scenarios.rubric import Expected, score
from skilltest.transcript import Transcript, Usage
from tests.answers import ListedAnswers

WHERE = "evals#/scenarios/0/checks"


def checks(*entries: dict[str, Any], base: Path | None = None) -> Any:
    return parse_checks(
        [{kind: {**spec, "dialect": "plugin_eval"}} for e in entries for kind, spec in e.items()],
        WHERE,
        base=base,
    )


def assistant(*blocks: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {"role": "assistant", "content": list(blocks)},
        "parent_tool_use_id": parent,
    }


def tool_use(name: str, tool_id: str, **values: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": values}


def result(tool_id: str, text: str, *, error: bool = False) -> dict[str, Any]:
    return {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": error}
            ],
        },
    }


EVENTS: tuple[dict[str, Any], ...] = (
    {
        "type": "system",
        "subtype": "init",
        "tools": ["Bash", "mcp__plugin_obs_telemetry__query_logs"],
    },
    assistant({"type": "text", "text": "Counting first."}),
    assistant(tool_use("mcp__plugin_obs_telemetry__query_logs", "t1", query="count_over_time(x)")),
    result("t1", '{"count": 42}'),
    # A refused call (an unknown tool) still counts: the CLI counts what the model wrote.
    assistant(tool_use("Task", "t2", prompt="look")),
    result("t2", "<tool_use_error>No such tool available: Task</tool_use_error>", error=True),
    assistant({"type": "text", "text": "a subagent's note"}, parent="t2"),
    assistant({"type": "text", "text": "Checkout: 42 errors."}, {"type": "text", "text": "Done."}),
)


def view_of(workdir: Path, events: tuple[dict[str, Any], ...] = EVENTS, **extra: Any) -> RunView:
    return RunView(workdir, Transcript(source="test"), events=events, **extra)


def run(found: Any, view: RunView, judge: Any = None) -> list[CheckResult]:
    return list(asyncio.run(evaluate(found, view, with_skill=True, judge=judge)))


def outcome(results: list[CheckResult]) -> list[tuple[str, bool, str]]:
    return [(r.name, r.passed, r.evidence) for r in results]


# --- reading --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"final_answer": {"pattern": "x", "flags": "i"}},
            f"{WHERE}/0/final_answer/flags: flags are JavaScript RegExp flags, for checks of "
            "dialect plugin_eval",
        ),
        (
            {"final_answer": {"pattern": "x", "flags": "ix", "dialect": "plugin_eval"}},
            f"{WHERE}/0/final_answer/flags: 'ix' must be JS RegExp flags (d g i m s u v y)",
        ),
        (
            {"command": {"run": "true", "dialect": "plugin_eval"}},
            f"{WHERE}/0/command/dialect: a command check has no plugin_eval dialect",
        ),
        (
            {"file_exists": {"path": "a", "flags": "i", "dialect": "plugin_eval"}},
            f"{WHERE}/0/file_exists/flags: unknown field 'flags' of a file_exists check",
        ),
        (
            {"final_answer": {"pattern": "x", "dialect": "javascript"}},
            f"{WHERE}/0/final_answer/dialect: 'javascript' is not a dialect",
        ),
        (
            {"judge": {"criteria": "c", "baseline_file": "no.jsonl", "dialect": "plugin_eval"}},
            f"{WHERE}/0/judge/baseline_file: cannot read no.jsonl",
        ),
    ],
)
def test_a_bad_plugin_eval_check_names_its_place_and_the_fix(entry, message):
    with pytest.raises(InputError) as caught:
        parse_checks([entry], WHERE)
    assert str(caught.value).startswith(message)
    assert "\n  fix: " in str(caught.value)


# --- what the run shows ---------------------------------------------------------------------------


def test_patterns_are_javascript_and_read_the_cli_s_texts(tmp_path):
    found = checks(
        {"trace_matches": {"name": "trace", "pattern": "COUNT_OVER_TIME", "flags": "i"}},
        {"trace_matches": {"name": "twice", "pattern": "query_logs", "match": "count:2"}},
        {"final_answer": {"name": "last", "pattern": "^Checkout: \\d+ errors\\.\\nDone\\.$"}},
        {"final_answer": {"name": "no-note", "pattern": "subagent", "match": "not_contains"}},
    )
    assert outcome(run(found, view_of(tmp_path))) == [
        ("trace", True, "matched COUNT_OVER_TIME"),
        # The init event's tool list and the call: the trace is every event, as JSON.
        ("twice", True, "found 2 matches (expected 2)"),
        ("last", True, "matched ^Checkout: \\d+ errors\\.\\nDone\\.$"),
        ("no-note", True, "pattern absent as expected"),
    ]


def test_tool_checks_count_every_call_written_by_its_exact_name(tmp_path):
    found = checks(
        {"tool_used": {"name": "task", "tool": "Task", "max": 1}},
        {"tool_used": {"name": "agent", "tool": "Agent"}},
        {"tool_used": {"name": "short", "tool": "query_logs"}},
        {
            "tool_used": {
                "name": "compact",
                "tool": "mcp__plugin_obs_telemetry__query_logs",
                "input_match": '"query":"count_over_time',
            }
        },
        {
            "tool_order": {
                "name": "order",
                "before": "Task",
                "after": "mcp__plugin_obs_telemetry__query_logs",
            }
        },
        {"tool_order": {"name": "missing", "before": "Bash", "after": "Task"}},
    )
    assert outcome(run(found, view_of(tmp_path))) == [
        ("task", True, "Task called 1x (expected 1..1)"),
        ("agent", False, "Agent called 0x (expected 1..∞)"),
        ("short", False, "query_logs called 0x (expected 1..∞)"),
        ("compact", True, "mcp__plugin_obs_telemetry__query_logs called 1x (expected 1..∞)"),
        (
            "order",
            False,
            "Task@1 does NOT precede mcp__plugin_obs_telemetry__query_logs@0",
        ),
        ("missing", False, '"before" tool Bash never called'),
    ]


def test_files_are_those_the_run_created_never_those_it_only_changed(tmp_path):
    (tmp_path / "README.md").write_text("before")
    (tmp_path / "docs").mkdir()
    before = snapshot(tmp_path)
    (tmp_path / "README.md").write_text("changed by the run")
    (tmp_path / "docs" / "NOTES.md").write_text("checkout: 42 errors\n")
    found = checks(
        {"file_exists": {"name": "readme", "path": "README.md"}},
        {"file_exists": {"name": "glob", "path": "**/*.md"}},
        {"file_exists": {"name": "one-level", "path": "*.md"}},
        {"file_exists": {"name": "absent", "path": "secret.txt", "exists": False}},
        {"files_match": {"name": "paths", "pattern": "^docs/NOTES\\.md$", "flags": "m"}},
        {"files_match": {"name": "not-contents", "pattern": "checkout", "match": "not_contains"}},
        {"file_matches": {"name": "content", "path": "docs/NOTES.md", "pattern": "\\d+ errors"}},
        {"file_matches": {"name": "gone", "path": "x.md", "pattern": "x", "match": "not_contains"}},
    )
    assert outcome(run(found, view_of(tmp_path, before=before))) == [
        ("readme", False, "README.md missing (expected present)"),
        ("glob", True, "**/*.md exists as expected"),
        ("one-level", False, "*.md missing (expected present)"),
        ("absent", True, "secret.txt absent as expected"),
        ("paths", True, "matched ^docs/NOTES\\.md$"),
        ("not-contents", True, "pattern absent as expected"),
        ("content", True, "matched \\d+ errors"),
        # A file target must exist whatever the mode, as the CLI reads it.
        ("gone", False, "focus file x.md does not exist"),
    ]


def test_an_image_is_no_text_for_a_pattern(tmp_path):
    (tmp_path / "chart.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"checkout")
    [result] = run(
        checks({"file_matches": {"name": "img", "path": "chart.png", "pattern": "checkout"}}),
        view_of(tmp_path),
    )
    assert not result.passed and "is an image (image/png)" in result.evidence


def test_mock_calls_need_mocks_in_the_run(tmp_path):
    found = checks({"mock_calls_match": {"name": "calls", "pattern": "query_logs"}})
    [without] = run(found, view_of(tmp_path))
    assert (without.passed, without.evidence) == (False, NO_MOCKS)
    line = plugin_eval.mock_calls_text(
        EVENTS,
        [{"registered": "plugin_obs_telemetry", "tool": "query_logs", "verdict": "ok"}],
    )
    assert json.loads(line) == {
        "tool": "mcp__plugin_obs_telemetry__query_logs",
        "input": {"query": "count_over_time(x)"},
        "output": '{"count": 42}',
        "verdict": "ok",
    }
    [with_mocks] = run(found, view_of(tmp_path, mocks_active=True, mock_calls=line))
    assert with_mocks.passed


def test_indicators_are_shown_and_never_scored(tmp_path):
    found = checks(
        {"final_answer": {"name": "scored", "pattern": "Done"}},
        {"tool_used": {"name": "fired", "tool": "Skill", "scored": False, "arm": "with"}},
    )
    results = run(found, view_of(tmp_path))
    card = score(Transcript(source="test"), Expected(checks=found), results)
    assert [(r.name, r.passed, r.scored) for r in results] == [
        ("scored", True, True),
        ("fired", False, False),
    ]
    assert card.score == 1.0
    assert results[1].to_dict()["scored"] is False


# --- the judge ------------------------------------------------------------------------------------


def test_a_judge_asks_three_times_with_the_cli_s_prompt_and_reads_pass_and_fail(tmp_path):
    found = checks({"judge": {"name": "names", "criteria": "Names checkout.", "votes": 3}})
    answers = ListedAnswers("PASS", "PASS, though FAIL would be strict", "pass", usage=Usage(3, 1))
    [result] = run(found, view_of(tmp_path), JudgeModel(answers, "judge-model"))
    assert (result.passed, result.evidence) == (True, "judge votes: PASS FAIL PASS")
    request = answers.requests[0]
    assert request.system == plugin_eval.JUDGE_SYSTEM
    assert request.prompt == (
        "You are grading the output of a coding agent against a criterion.\n\n"
        "Criterion:\nNames checkout.\n\n\nAgent output (last_message):\n"
        "Checkout: 42 errors.\nDone.\n\n\nRespond with exactly one word: PASS or FAIL."
    )


def test_a_baseline_judge_compares_the_trace_with_the_saved_one(tmp_path):
    (tmp_path / "base.jsonl").write_text(json.dumps({"type": "system"}) + "\n\n")
    found = checks(
        {"judge": {"name": "b", "criteria": "As good.", "baseline_file": "base.jsonl"}},
        base=tmp_path,
    )
    answers = ListedAnswers("FAIL", "FAIL", "PASS", usage=Usage(3, 1))
    [result] = run(found, view_of(tmp_path), JudgeModel(answers, "judge-model"))
    assert (result.passed, result.evidence) == (False, "judge votes: FAIL FAIL PASS")
    prompt = answers.requests[0].prompt
    assert prompt.startswith(
        "You are comparing a NEW coding-agent trajectory against a BASELINE.\n\nCriterion:\n"
        'As good.\n\n\nBASELINE trajectory:\n{"type":"system"}\n\n\nNEW trajectory:\n'
    )
    assert prompt.endswith("\n\nRespond with exactly one word: PASS or FAIL.")


def test_a_long_trace_is_shown_to_a_judge_by_its_ends():
    events = [{"n": n} for n in range(30)]
    shown = plugin_eval.elided_trace(events).split("\n")
    assert shown[11:14] == ['{"n":11}', "[…6 messages elided…]", '{"n":18}']
    assert len(shown) == 25
